// A softmax over rows, checked against values computed with numpy.
// Run it with:  xhlo-run examples/softmax.mlir
func.func @main() -> tensor<2x4xf32> {
  %x = stablehlo.constant dense<[[1.000000000e+00, 2.000000000e+00, 3.000000000e+00, 4.000000000e+00], [-1.000000000e+00, 0.000000000e+00, 5.000000000e-01, 1.000000000e+01]]> : tensor<2x4xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2xf32>
  %maxb = stablehlo.broadcast_in_dim %max, dims = [0] : (tensor<2xf32>) -> tensor<2x4xf32>
  %shifted = stablehlo.subtract %x, %maxb : tensor<2x4xf32>
  %e = stablehlo.exponential %shifted : tensor<2x4xf32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2xf32>
  %sumb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<2xf32>) -> tensor<2x4xf32>
  %y = stablehlo.divide %e, %sumb : tensor<2x4xf32>
  %expected = stablehlo.constant dense<[[3.205860406e-02, 8.714432269e-02, 2.368828058e-01, 6.439142823e-01], [1.669941594e-05, 4.539370639e-05, 7.484157686e-05, 9.998630285e-01]]> : tensor<2x4xf32>
  stablehlo.custom_call @check.expect_close(%y, %expected) {has_side_effect = true} : (tensor<2x4xf32>, tensor<2x4xf32>) -> ()
  return %y : tensor<2x4xf32>
}

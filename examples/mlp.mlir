// A two-layer perceptron, y = relu(x @ w1 + b1) @ w2, on arguments.
// Run it with:  python examples/run_mlp.py   (feeds numpy arrays, compares with numpy)
func.func @main(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                %w2: tensor<32x4xf32>) -> tensor<8x4xf32> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %bb = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32>
  %hb = stablehlo.add %h, %bb : tensor<8x32xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<8x32xf32>
  %r = stablehlo.maximum %hb, %zero : tensor<8x32xf32>
  %y = stablehlo.dot_general %r, %w2, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

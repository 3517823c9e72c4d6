func.func @main() -> tensor<2xf32> {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = stablehlo.custom_call @my_kernel(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

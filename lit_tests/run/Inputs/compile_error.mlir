func.func @main() -> tensor<3xi32> {
  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %0 = stablehlo.add %a, %a : tensor<3xf32>
  return %0 : tensor<3xi32>
}

func.func @main() -> tensor<3xi32> {
  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %0 = stablehlo.add %a, %a : tensor<3xi32>
  %expected = stablehlo.constant dense<[2, 4, 6]> : tensor<3xi32>
  stablehlo.custom_call @check.expect_eq(%0, %expected) {has_side_effect = true} : (tensor<3xi32>, tensor<3xi32>) -> ()
  return %0 : tensor<3xi32>
}

func.func @main() -> tensor<3xi32> {
  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %0 = stablehlo.multiply %a, %a : tensor<3xi32>
  %wrong = stablehlo.constant dense<[1, 4, 10]> : tensor<3xi32>
  stablehlo.custom_call @check.expect_eq(%0, %wrong) {has_side_effect = true} : (tensor<3xi32>, tensor<3xi32>) -> ()
  return %0 : tensor<3xi32>
}

func.func @first() {
  %c = stablehlo.constant dense<3> : tensor<i32>
  "check.expect_eq_const"(%c) {value = dense<3> : tensor<i32>} : (tensor<i32>) -> ()
  return
}

// -----

func.func @second() {
  %c = stablehlo.constant dense<3> : tensor<i32>
  %0 = stablehlo.add %c, %c : tensor<i32>
  "check.expect_eq_const"(%0) {value = dense<7> : tensor<i32>} : (tensor<i32>) -> ()
  return
}

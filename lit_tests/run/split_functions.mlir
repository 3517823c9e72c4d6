// A file of "// -----" chunks without @main runs every zero-argument function
// of every chunk (conformance style, with the check dialect's generic ops).
// RUN: xhlo-run %s | FileCheck %s
// RUN: not xhlo-run %S/Inputs/split_one_fails.mlir | FileCheck %s --check-prefix=FAILS

// CHECK: PASS {{.*}}split_functions.mlir
// CHECK-NEXT: 1 passed, 0 failed

// FAILS: FAIL {{.*}}split_one_fails.mlir: {{.*}}(chunk 2) @second: check.expect_eq{{.*}} got {{.*}}6{{.*}}, expected {{.*}}7
// FAILS-NEXT: 0 passed, 1 failed
func.func @first() {
  %c = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %0 = stablehlo.abs %c : tensor<2xf32>
  "check.expect_eq_const"(%0) {value = dense<[1.5, 2.0]> : tensor<2xf32>} : (tensor<2xf32>) -> ()
  return
}

// -----

func.func @second() {
  %c = stablehlo.constant dense<7> : tensor<i32>
  %1 = stablehlo.multiply %c, %c : tensor<i32>
  "check.expect_eq_const"(%1) {value = dense<49> : tensor<i32>} : (tensor<i32>) -> ()
  return
}

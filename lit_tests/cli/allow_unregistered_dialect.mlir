// Like mlir-opt, ops of unknown dialects are rejected unless
// --allow-unregistered-dialect is given (conformance files use check.* ops).
// RUN: not xhlo-opt %s 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: xhlo-opt %s --allow-unregistered-dialect | FileCheck %s
// RUN: xhlo-opt %s --allow-unregistered-dialect=true | FileCheck %s
// RUN: not xhlo-opt %s --allow-unregistered-dialect=false 2>&1 | FileCheck %s --check-prefix=STRICT

// STRICT: allow_unregistered_dialect.mlir:[[# @LINE + 6]]:26: error: operation being parsed with an unregistered dialect
// CHECK-LABEL: func.func @check
// CHECK-SAME: (%[[A:.*]]: tensor<2xi32>)
// CHECK-NEXT: "check.expect_eq_const"(%[[A]]) {value = dense<[1, 2]> : tensor<2xi32>} : (tensor<2xi32>) -> ()
// CHECK-NEXT: return
func.func @check(%a: tensor<2xi32>) {
  "check.expect_eq_const"(%a) {value = dense<[1, 2]> : tensor<2xi32>} : (tensor<2xi32>) -> ()
  return
}

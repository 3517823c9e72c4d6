// RUN: xhlo-opt %s --allow-unregistered-dialect --xhlo-expose-checks --split-input-file \
// RUN:   --verify-diagnostics | FileCheck %s
// Only the chunks that have a @run_test print anything with entry=run_test.
// RUN: not xhlo-opt %s --allow-unregistered-dialect --xhlo-expose-checks="entry=run_test" \
// RUN:   --split-input-file 2>/dev/null | FileCheck %s --check-prefix=ENTRY

// Each check's two values become extra results of the entry function; the
// xhlo.checks attribute records which results to compare, how, and where the
// check was written. Custom-call checks use the reference runner's defaults.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK-SAME: xhlo.checks = [
// CHECK-SAME: {actual = 1 : i64, expected = 2 : i64, kind = "expect_eq", location = "loc(\22{{.*}}xhlo_expose_checks.mlir\22:[[# @LINE + 8]]:3)"}
// CHECK-SAME: {actual = 3 : i64, expected = 4 : i64, kind = "expect_close", location = "{{[^"]*}}", max_ulp = 3.000000e+00 : f64, min_ulp = 0.000000e+00 : f64}
// CHECK-SAME: ]
// CHECK-NEXT: %[[SUM:.*]] = stablehlo.add %[[A]], %[[A]]
// CHECK-NEXT: return %[[SUM]], %[[SUM]], %[[A]], %[[SUM]], %[[A]] :
// CHECK-NOT: custom_call
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  stablehlo.custom_call @check.expect_eq(%0, %a) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  stablehlo.custom_call @check.expect_close(%0, %a) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %0 : tensor<2xf32>
}

// -----

// The check dialect's generic ops: *_const compares with a constant built from
// the value attribute, tolerances are read from the op, and check.eq's verdict
// becomes true (a mismatch fails the run when the results are compared).
// Only the entry function (the entry option) is rewritten.
// CHECK-LABEL: func.func @run_test() {
// CHECK: "check.expect_eq_const"
// CHECK-LABEL: func.func @main()
// CHECK-SAME: -> (tensor<i32>, tensor<i32>)
// ENTRY-LABEL: func.func @run_test
// ENTRY-SAME: () -> (tensor<3xi32>, tensor<3xi32>, tensor<f32>, tensor<f32>, tensor<3xi32>, tensor<3xi32>)
// ENTRY-SAME: {actual = 0 : i64, expected = 1 : i64, kind = "expect_eq", location = "{{[^"]*}}"}
// ENTRY-SAME: {actual = 2 : i64, expected = 3 : i64, kind = "expect_almost_eq", location = "{{[^"]*}}", tolerance = 5.000000e-01 : f64}
// ENTRY-SAME: {actual = 4 : i64, expected = 5 : i64, kind = "eq", location = "{{[^"]*}}", tolerance = 1.000000e-04 : f64}
// ENTRY-NEXT: %[[X:.*]] = stablehlo.iota
// ENTRY-NEXT: %[[Y:.*]] = stablehlo.constant dense<1.500000e+00> : tensor<f32>
// ENTRY-NEXT: %[[EXPECT_X:.*]] = stablehlo.constant dense<[0, 1, 2]> : tensor<3xi32>
// ENTRY-NEXT: %[[EXPECT_Y:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<f32>
// ENTRY-NEXT: %[[VERDICT:.*]] = stablehlo.constant dense<true> : tensor<i1>
// ENTRY-NEXT: return %[[X]], %[[EXPECT_X]], %[[Y]], %[[EXPECT_Y]], %[[X]], %[[X]] :
// ENTRY-LABEL: func.func @main()
// ENTRY-NEXT: stablehlo.constant
// ENTRY-NEXT: stablehlo.custom_call @check.expect_eq
func.func @run_test() {
  %x = stablehlo.iota dim = 0 : tensor<3xi32>
  %y = stablehlo.constant dense<1.5> : tensor<f32>
  "check.expect_eq_const"(%x) {value = dense<[0, 1, 2]> : tensor<3xi32>} : (tensor<3xi32>) -> ()
  "check.expect_almost_eq_const"(%y) {value = dense<2.0> : tensor<f32>, tolerance = 0.5 : f64} : (tensor<f32>) -> ()
  %same = "check.eq"(%x, %x) : (tensor<3xi32>, tensor<3xi32>) -> tensor<i1>
  return
}
func.func @main() {
  %c = stablehlo.constant dense<1> : tensor<i32>
  stablehlo.custom_call @check.expect_eq(%c, %c) {has_side_effect = true} : (tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

// A missing entry function and malformed checks are errors.
// expected-error@+1 {{xhlo-expose-checks: no function named 'main'}}
module {
  func.func @other() {
    return
  }
}

// -----

func.func @main(%a: tensor<2xi32>) {
  // expected-error@+1 {{xhlo-expose-checks: unknown check 'check.expect_fuzzy'}}
  stablehlo.custom_call @check.expect_fuzzy(%a, %a) {has_side_effect = true} : (tensor<2xi32>, tensor<2xi32>) -> ()
  return
}

// -----

func.func @main(%a: tensor<2xi32>) {
  // expected-error@+1 {{xhlo-expose-checks: needs a 'value' attribute}}
  "check.expect_eq_const"(%a) : (tensor<2xi32>) -> ()
  return
}

// -----

func.func @main(%a: tensor<2xi32>) {
  // expected-error@+1 {{xhlo-expose-checks: check.expect_eq takes 2 operands, got 3}}
  stablehlo.custom_call @check.expect_eq(%a, %a, %a) {has_side_effect = true} : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> ()
  return
}

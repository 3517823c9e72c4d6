// --verify-diagnostics matches every diagnostic against the expected-* comments
// (by line and message substring) and exits 0 when all match; chunks whose
// pipeline succeeded are still printed.
// RUN: xhlo-opt %s --split-input-file --verify-diagnostics --xhlo-check-lowered | FileCheck %s
// RUN: xhlo-opt %s --split-input-file --verify-diagnostics=all --xhlo-check-lowered | FileCheck %s

// A parser error, on the next line.
func.func @parse_error(%a: tensor<2xf32>) {
  // expected-error@+1 {{expected SSA operand}}
  %0 = stablehlo.add , %a : tensor<2xf32>
  return
}

// -----

// A verifier error and its note, with @below/@above and @-N designators.
// expected-note@below {{see existing symbol definition here}}
func.func @twice() {
  return
}
func.func @twice() {
  return
}
// expected-error@-3 {{redefinition of symbol named 'twice'}}

// -----

// An error of an xhlo pass, expected on the same line.
func.func @not_lowered(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.abs %a : tensor<2xf32> // expected-error {{xhlo cannot lower 'stablehlo.abs'}}
  return %0 : tensor<2xf32>
}

// -----

// expected-error-re takes {{regex}} groups inside the message.
func.func @not_lowered_re(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error-re@+1 {{xhlo cannot lower 'stablehlo.{{(neg|negate)}}' yet}}
  %0 = stablehlo.negate %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @clean
// CHECK-NOT: @not_lowered
func.func @clean(%a: i32) -> i32 {
  return %a : i32
}

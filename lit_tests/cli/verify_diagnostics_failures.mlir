// Unexpected diagnostics and expectations nobody met are errors (exit 1),
// reported like mlir-opt at the diagnostic or at the expected-* comment.
// RUN: not xhlo-opt %s --split-input-file --verify-diagnostics --xhlo-check-lowered 2>&1 \
// RUN:   | FileCheck %s
// With =only-expected, unexpected diagnostics are ignored; unmet ones still fail.
// RUN: not xhlo-opt %s --split-input-file --verify-diagnostics=only-expected \
// RUN:   --xhlo-check-lowered 2>&1 | FileCheck %s --check-prefix=ONLY

// CHECK-NOT: Traceback
// ONLY-NOT: unexpected error

// An error nobody expected.
func.func @surprise(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.abs %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
// CHECK: verify_diagnostics_failures.mlir:[[# @LINE - 3]]:8: error: unexpected error: xhlo-check-lowered: xhlo cannot lower 'stablehlo.abs'
// CHECK-NEXT: {{^}}  %0 = stablehlo.abs

// -----

// An expectation nothing produces.
func.func @quiet() {
  // expected-error@+1 {{something bad}}
  return
}
// CHECK: verify_diagnostics_failures.mlir:[[# @LINE - 3]]:6: error: expected error "something bad" was not produced
// ONLY: verify_diagnostics_failures.mlir:[[# @LINE - 4]]:6: error: expected error "something bad" was not produced

// -----

// The right line, the wrong message: both sides are reported.
func.func @wrong_message(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{cannot lower 'stablehlo.negate'}}
  %0 = stablehlo.abs %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
// CHECK: :[[# @LINE - 3]]:8: error: unexpected error: xhlo-check-lowered: xhlo cannot lower 'stablehlo.abs'
// CHECK: :[[# @LINE - 5]]:6: error: expected error "cannot lower 'stablehlo.negate'" was not produced

// -----

// The right message, the wrong line.
func.func @wrong_line(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+2 {{cannot lower 'stablehlo.abs'}}
  %0 = stablehlo.abs %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
// CHECK: :[[# @LINE - 3]]:8: error: unexpected error: {{.*}}'stablehlo.abs'
// CHECK: :[[# @LINE - 5]]:6: error: expected error "cannot lower 'stablehlo.abs'" was not produced

// -----

// The right line and message, the wrong severity.
func.func @wrong_severity(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-warning@+1 {{cannot lower 'stablehlo.abs'}}
  %0 = stablehlo.abs %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
// CHECK: :[[# @LINE - 3]]:8: error: unexpected error: {{.*}}'stablehlo.abs'
// CHECK: :[[# @LINE - 5]]:6: error: expected warning "cannot lower 'stablehlo.abs'" was not produced

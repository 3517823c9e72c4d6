// RUN: xhlo-opt %s --xhlo-check-lowered --split-input-file --verify-diagnostics --allow-unregistered-dialect | FileCheck %s
// The dialects option chooses what counts as not lowered (here: arith).
// RUN: not xhlo-opt %s --xhlo-check-lowered="dialects=arith" --split-input-file 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ARITH
// A misspelt dialect is an error, not a check of nothing.
// RUN: not xhlo-opt %s --xhlo-check-lowered="dialects=stablehlo,stablhlo" --split-input-file 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TYPO

// TYPO: error: xhlo-check-lowered: no dialect named 'stablhlo' (option 'dialects')

// ARITH: xhlo_check_lowered.mlir:[[# @LINE + 11]]:8: error: xhlo-check-lowered: xhlo cannot lower 'arith.addf'
// ARITH: xhlo_check_lowered.mlir:[[# @LINE + 27]]:9: error: xhlo-check-lowered: xhlo cannot lower 'arith.constant'
// ARITH: xhlo_check_lowered.mlir:[[# @LINE + 43]]:8: error: xhlo-check-lowered: xhlo cannot lower 'arith.muli'
// ARITH: func.func @leftover
// ARITH-NEXT: stablehlo.cosine

// Fully lowered IR passes through unchanged.
// CHECK-LABEL: func.func @lowered
// CHECK-NEXT: arith.addf
// CHECK-NEXT: return
func.func @lowered(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  return %0 : f32
}

// -----

// A StableHLO op that survived the lowering is named, at its own location.
func.func @leftover(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{xhlo-check-lowered: xhlo cannot lower 'stablehlo.cosine' yet (no lowering pattern applied)}}
  %0 = stablehlo.cosine %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Nested ops are found too, and the first one in the module is reported.
func.func @nested(%a: tensor<f32>, %n: index) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> tensor<f32> {
    // expected-error@+1 {{cannot lower 'chlo.tan'}}
    %1 = chlo.tan %acc : tensor<f32> -> tensor<f32>
    %2 = stablehlo.sine %1 : tensor<f32>
    scf.yield %2 : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

// Only the listed dialects count.
// CHECK-LABEL: func.func @integer_math
// CHECK-NEXT: arith.muli
func.func @integer_math(%a: i32) -> i32 {
  %0 = arith.muli %a, %a : i32
  return %0 : i32
}

// -----

// An op of an unregistered dialect is named too (nothing would lower it).
func.func @unknown_dialect() -> tensor<i32> {
  // expected-error@+1 {{xhlo-check-lowered: 'interpreter.run_parallel' is an op of no dialect xhlo knows (nothing lowers it)}}
  %0 = "interpreter.run_parallel"() : () -> tensor<i32>
  return %0 : tensor<i32>
}

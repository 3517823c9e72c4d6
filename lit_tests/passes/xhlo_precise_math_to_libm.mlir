// RUN: xhlo-opt %s --xhlo-precise-math-to-libm --split-input-file | FileCheck %s

// Scalar expm1/log1p become libm calls (the LLVM lowering computes
// exp(x) - 1 and log(1 + x), which lose all precision near zero).
// CHECK-DAG: func.func private @expm1f(f32) -> f32
// CHECK-DAG: func.func private @log1p(f64) -> f64
// CHECK-LABEL: func.func @scalars
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f64)
// CHECK-NEXT: %[[E:.*]] = call @expm1f(%[[X]]) : (f32) -> f32
// CHECK-NEXT: %[[L:.*]] = call @log1p(%[[Y]]) : (f64) -> f64
// CHECK-NEXT: return %[[E]], %[[L]]
// CHECK-NOT: math.
func.func @scalars(%x: f32, %y: f64) -> (f32, f64) {
  %0 = math.expm1 %x : f32
  %1 = math.log1p %y : f64
  return %0, %1 : f32, f64
}

// -----

// f16 and bf16 go through f32; each libm function is declared once.
// CHECK-COUNT-1: func.func private @log1pf(f32) -> f32
// CHECK-NOT: func.func private @log1pf
// CHECK-LABEL: func.func @half_precision
// CHECK-SAME: (%[[H:.*]]: f16, %[[B:.*]]: bf16)
// CHECK-NEXT: %[[HW:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK-NEXT: %[[HC:.*]] = call @log1pf(%[[HW]]) : (f32) -> f32
// CHECK-NEXT: %[[HN:.*]] = arith.truncf %[[HC]] : f32 to f16
// CHECK-NEXT: %[[BW:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: %[[BC:.*]] = call @log1pf(%[[BW]]) : (f32) -> f32
// CHECK-NEXT: %[[BN:.*]] = arith.truncf %[[BC]] : f32 to bf16
// CHECK-NEXT: return %[[HN]], %[[BN]]
func.func @half_precision(%h: f16, %b: bf16) -> (f16, bf16) {
  %0 = math.log1p %h : f16
  %1 = math.log1p %b : bf16
  return %0, %1 : f16, bf16
}

// -----

// Vectors keep the LLVM lowering.
// CHECK-LABEL: func.func @vector
// CHECK-NEXT: math.expm1 %{{.*}} : vector<4xf32>
// CHECK-NOT: call
func.func @vector(%v: vector<4xf32>) -> vector<4xf32> {
  %0 = math.expm1 %v : vector<4xf32>
  return %0 : vector<4xf32>
}

// RUN: xhlo-opt %s --xhlo-extend-half-float-math --split-input-file | FileCheck %s

// Each math op on f16 converts its own operand and result, so exp's result is
// rounded to f16 before log1p reads it (no fast-math flags for the folder to join
// the truncf and extf between them).
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: f16)
// CHECK: %[[A:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK: %[[E:.*]] = math.exp %[[A]] : f32
// CHECK: %[[R:.*]] = arith.truncf %[[E]] : f32 to f16
// CHECK: %[[B:.*]] = arith.extf %[[R]] : f16 to f32
// CHECK: %[[L:.*]] = math.log1p %[[B]] : f32
// CHECK: %[[S:.*]] = arith.truncf %[[L]] : f32 to f16
// CHECK: return %[[S]]
func.func @chain(%x: f16) -> f16 {
  %e = math.exp %x : f16
  %l = math.log1p %e : f16
  return %l : f16
}

// -----

// Vectors of bf16 too; a predicate keeps its i1 result; f32 math is untouched.
// CHECK-LABEL: func.func @vector_and_predicate
// CHECK: %[[A:.*]] = arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK: %[[T:.*]] = math.tanh %[[A]] fastmath<afn> : vector<8xf32>
// CHECK: arith.truncf %[[T]] : vector<8xf32> to vector<8xbf16>
// CHECK: %[[B:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: math.isnan %[[B]] : f32
// CHECK: math.sqrt %{{.*}} : f32
// CHECK-NOT: arith.extf
func.func @vector_and_predicate(%v: vector<8xbf16>, %h: f16, %f: f32) -> (vector<8xbf16>, i1, f32) {
  %t = math.tanh %v fastmath<afn> : vector<8xbf16>
  %n = math.isnan %h : f16
  %s = math.sqrt %f : f32
  return %t, %n, %s : vector<8xbf16>, i1, f32
}

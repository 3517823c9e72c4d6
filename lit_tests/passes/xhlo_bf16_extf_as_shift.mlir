// RUN: xhlo-opt %s --xhlo-bf16-extf-as-shift --split-input-file | FileCheck %s

// A bf16 vector extended to f32: its bits move to the top half of an i32.
// CHECK-LABEL: func.func @vector
// CHECK-SAME: (%[[X:.*]]: vector<9xbf16>)
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : vector<9xbf16> to vector<9xi16>
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : vector<9xi16> to vector<9xi32>
// CHECK: %[[C16:.*]] = arith.constant dense<16> : vector<9xi32>
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[WIDE]], %[[C16]] : vector<9xi32>
// CHECK: %[[F:.*]] = arith.bitcast %[[SHIFTED]] : vector<9xi32> to vector<9xf32>
// CHECK-NOT: arith.extf
// CHECK: arith.maximumf %[[F]]
func.func @vector(%x: vector<9xbf16>) -> vector<9xbf16> {
  %0 = arith.extf %x : vector<9xbf16> to vector<9xf32>
  %1 = arith.maximumf %0, %0 : vector<9xf32>
  %2 = arith.truncf %1 : vector<9xf32> to vector<9xbf16>
  return %2 : vector<9xbf16>
}

// -----

// Scalars too; f16 and bf16 -> f64 extensions are left to LLVM.
// CHECK-LABEL: func.func @scalars
// CHECK: arith.bitcast %{{.*}} : bf16 to i16
// CHECK: arith.constant 16 : i32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %{{.*}} : bf16 to f64
func.func @scalars(%x: bf16, %h: f16) -> (f32, f32, f64) {
  %0 = arith.extf %x : bf16 to f32
  %1 = arith.extf %h : f16 to f32
  %2 = arith.extf %x : bf16 to f64
  return %0, %1, %2 : f32, f32, f64
}

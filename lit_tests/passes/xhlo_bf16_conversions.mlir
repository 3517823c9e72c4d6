// RUN: xhlo-opt %s --xhlo-bf16-conversions="hardware-truncation=true" --split-input-file \
// RUN:   | FileCheck %s --check-prefixes=CHECK,HARDWARE
// RUN: xhlo-opt %s --xhlo-bf16-conversions="hardware-truncation=false" --split-input-file \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SOFT

// Extension: the bf16 bits move to the top half of an i32.
// CHECK-LABEL: func.func @extend
// CHECK-SAME: (%[[X:.*]]: vector<9xbf16>)
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : vector<9xbf16> to vector<9xi16>
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : vector<9xi16> to vector<9xi32>
// CHECK: %[[C16:.*]] = arith.constant dense<16> : vector<9xi32>
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[WIDE]], %[[C16]] : vector<9xi32>
// CHECK: %[[F:.*]] = arith.bitcast %[[SHIFTED]] : vector<9xi32> to vector<9xf32>
// CHECK-NOT: arith.extf
// CHECK: return %[[F]]
func.func @extend(%x: vector<9xbf16>) -> vector<9xf32> {
  %0 = arith.extf %x : vector<9xbf16> to vector<9xf32>
  return %0 : vector<9xf32>
}

// -----

// Truncation of a scalar or an odd vector: round to nearest even on the bits
// (+0x7fff, +1 if the kept part is odd), NaN quieted with its sign.
// CHECK-LABEL: func.func @truncate
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: arith.andi
// CHECK: %[[BIAS:.*]] = arith.constant 32767 : i32
// CHECK: arith.addi
// CHECK: %[[QUIET:.*]] = arith.constant 64 : i32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[PICK:.*]] = arith.select %[[NAN]]
// CHECK: %[[TOP:.*]] = arith.trunci %[[PICK]] : i32 to i16
// CHECK: %[[R:.*]] = arith.bitcast %[[TOP]] : i16 to bf16
// CHECK: return %[[R]]
func.func @truncate(%x: f32) -> bf16 {
  %0 = arith.truncf %x : f32 to bf16
  return %0 : bf16
}

// -----

// With AVX512-BF16, vectors of 8, 16, 32, ... lanes keep truncf (vcvtneps2bf16);
// without it, LLVM would call __truncsfbf2: integer code. f16 is left alone.
// CHECK-LABEL: func.func @left_alone
// HARDWARE: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// SOFT-NOT: arith.truncf %{{.*}} to vector<16xbf16>
// SOFT: arith.trunci %{{.*}} : vector<16xi32> to vector<16xi16>
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xf16>
// CHECK: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
func.func @left_alone(%x: vector<16xf32>, %h: vector<16xf16>) -> (vector<16xbf16>, vector<16xf16>, vector<16xf32>) {
  %0 = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  %1 = arith.truncf %x : vector<16xf32> to vector<16xf16>
  %2 = arith.extf %h : vector<16xf16> to vector<16xf32>
  return %0, %1, %2 : vector<16xbf16>, vector<16xf16>, vector<16xf32>
}

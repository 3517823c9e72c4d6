// RUN: xhlo-opt %s --xhlo-scratch-arena --split-input-file | FileCheck %s

// Three temporaries: t1 dies (through its view %v) before t3 is allocated, so
// t3 reuses t1's 64 bytes; t2 overlaps both. The arena is the last argument.
// CHECK-LABEL: func.func @sequential
// CHECK-SAME: (%{{.*}}: memref<16xf32>, %[[OUT:.*]]: memref<16xf32>, %[[ARENA:.*]]: memref<128xi8>) attributes {xhlo.scratch_bytes = 128 : i64}
// CHECK: %[[O1:.*]] = arith.constant 0 : index
// CHECK: %[[T1:.*]] = memref.view %[[ARENA]][%[[O1]]][] : memref<128xi8> to memref<16xf32>
// CHECK: %[[O2:.*]] = arith.constant 64 : index
// CHECK: %[[T2:.*]] = memref.view %[[ARENA]][%[[O2]]][] : memref<128xi8> to memref<4x4xf32>
// CHECK: %[[O3:.*]] = arith.constant 0 : index
// CHECK: %[[T3:.*]] = memref.view %[[ARENA]][%[[O3]]][] : memref<128xi8> to memref<16xf32>
// CHECK: linalg.copy ins(%[[T3]] : memref<16xf32>) outs(%[[OUT]] : memref<16xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
func.func @sequential(%a: memref<16xf32>, %out: memref<16xf32>) {
  %t1 = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  linalg.copy ins(%a : memref<16xf32>) outs(%t1 : memref<16xf32>)
  %t2 = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
  %v = memref.expand_shape %t1 [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  linalg.copy ins(%v : memref<4x4xf32>) outs(%t2 : memref<4x4xf32>)
  %t3 = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  %w = memref.collapse_shape %t2 [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  linalg.copy ins(%w : memref<16xf32>) outs(%t3 : memref<16xf32>)
  linalg.copy ins(%t3 : memref<16xf32>) outs(%out : memref<16xf32>)
  memref.dealloc %t1 : memref<16xf32>
  memref.dealloc %t2 : memref<4x4xf32>
  memref.dealloc %t3 : memref<16xf32>
  return
}

// -----

// A buffer allocated in a loop, and one that is returned, keep malloc; no arena.
// CHECK-LABEL: func.func @loops_and_escapes
// CHECK-SAME: (%{{.*}}: index, %{{.*}}: memref<8xf32>) -> memref<8xf32> {
// CHECK: scf.for
// CHECK: memref.alloc() : memref<8xf32>
// CHECK: memref.dealloc
// CHECK: %[[KEPT:.*]] = memref.alloc() : memref<8xf32>
// CHECK: return %[[KEPT]]
func.func @loops_and_escapes(%n: index, %a: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %inner = memref.alloc() : memref<8xf32>
    linalg.copy ins(%a : memref<8xf32>) outs(%inner : memref<8xf32>)
    memref.dealloc %inner : memref<8xf32>
  }
  %kept = memref.alloc() : memref<8xf32>
  return %kept : memref<8xf32>
}

// -----

// Private functions are called from compiled code, which passes no arena.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.*}}: memref<8xf32>) {
// CHECK: memref.alloc
func.func private @helper(%a: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  linalg.copy ins(%a : memref<8xf32>) outs(%t : memref<8xf32>)
  memref.dealloc %t : memref<8xf32>
  return
}

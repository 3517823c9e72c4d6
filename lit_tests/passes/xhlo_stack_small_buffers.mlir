// RUN: xhlo-opt %s --xhlo-stack-small-buffers="max-bytes=64" | FileCheck %s

// A loop body's small buffer, freed in the same iteration, is a stack buffer (no free).
// The loop-carried one (yielded), a large one (over max-bytes) and the entry block's
// (the scratch arena's business) keep malloc.
// CHECK-LABEL: func.func @loop_temporaries
// CHECK: %[[ENTRY:.*]] = memref.alloc() : memref<4xf32>
// CHECK: scf.for
// CHECK: %[[SMALL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK: %[[LARGE:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[CARRIED:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NOT: memref.dealloc %[[SMALL]]
// CHECK: memref.dealloc %[[LARGE]]
// CHECK: scf.yield %[[CARRIED]]
func.func @loop_temporaries(%x: memref<4xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %entry = memref.alloc() : memref<4xf32>
  memref.copy %x, %entry : memref<4xf32> to memref<4xf32>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%state = %entry) -> (memref<4xf32>) {
    %small = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    memref.copy %state, %small : memref<4xf32> to memref<4xf32>
    %large = memref.alloc() : memref<64xf32>
    %v = memref.load %small[%c1] : memref<4xf32>
    memref.store %v, %large[%c0] : memref<64xf32>
    %carried = memref.alloc() : memref<4xf32>
    memref.copy %small, %carried : memref<4xf32> to memref<4xf32>
    memref.dealloc %small : memref<4xf32>
    memref.dealloc %large : memref<64xf32>
    scf.yield %carried : memref<4xf32>
  }
  %r = memref.load %last[%c0] : memref<4xf32>
  return %r : f32
}

// RUN: xhlo-opt %s --xhlo-hoist-static-allocas | FileCheck %s

// convert-vector-to-scf's staging buffer in a loop nest (scf.for is an allocation
// scope, so it lands in the innermost body) moves to the function's entry: one
// buffer per call instead of one per iteration. An alloca sized at run time stays.
// CHECK-LABEL: func.func @staged_read
// CHECK-SAME: (%[[M:.*]]: memref<8x8x32xf32>, %[[N:.*]]: index)
// CHECK-NEXT: %[[BUF:.*]] = memref.alloca() : memref<vector<32x1xf32>>
// CHECK-NEXT: arith.constant
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: memref.alloca()
// CHECK: %[[SIZED:.*]] = memref.alloca(%[[N]]) : memref<?xf32>
// CHECK: vector.type_cast %[[BUF]]
func.func @staged_read(%m: memref<8x8x32xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %buf = memref.alloca() : memref<vector<32x1xf32>>
      %sized = memref.alloca(%n) : memref<?xf32>
      %cast = vector.type_cast %buf : memref<vector<32x1xf32>> to memref<32xvector<1xf32>>
      %v = memref.load %cast[%c0] : memref<32xvector<1xf32>>
      %e = vector.extract %v[0] : f32 from vector<1xf32>
      memref.store %e, %m[%i, %j, %c0] : memref<8x8x32xf32>
      memref.store %e, %sized[%c0] : memref<?xf32>
    }
  }
  return
}

// An outlined parallel loop body gets its own buffer at its own entry: each thread's
// call has its own stack frame, so no two threads share one.
// CHECK-LABEL: func.func private @main_parallel_0
// CHECK-NEXT: memref.alloca() : memref<vector<16xf32>>
// CHECK: scf.for
func.func private @main_parallel_0(%lo: index, %hi: index) attributes {xhlo.parallel_body} {
  %c1 = arith.constant 1 : index
  scf.for %i = %lo to %hi step %c1 {
    %buf = memref.alloca() : memref<vector<16xf32>>
    %v = memref.load %buf[] : memref<vector<16xf32>>
    memref.store %v, %buf[] : memref<vector<16xf32>>
  }
  return
}

// A buffer an iteration hands on to the next (yielded) stays where it is made.
// CHECK-LABEL: func.func @handed_on
// CHECK: scf.for
// CHECK-NEXT: memref.alloca() : memref<4xf32>
func.func @handed_on(%init: memref<4xf32>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%prev = %init) -> (memref<4xf32>) {
    %buf = memref.alloca() : memref<4xf32>
    memref.copy %prev, %buf : memref<4xf32> to memref<4xf32>
    scf.yield %buf : memref<4xf32>
  }
  return %r : memref<4xf32>
}

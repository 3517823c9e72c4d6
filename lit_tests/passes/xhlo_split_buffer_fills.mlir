// RUN: xhlo-opt %s --xhlo-split-buffer-fills --split-input-file | FileCheck %s

// A padded input written after bufferization: the fill and the copy into the interior
// each become a loop over the first dimension longer than one, marked parallel, of the
// same op on one slice of every buffer.
// CHECK-LABEL: func.func @pad
// CHECK: scf.for %[[I:.*]] = %c0 to %c58 step %c1 {
// CHECK: %[[S:.*]] = memref.subview %{{.*}}[0, %[[I]], 0, 0] [1, 1, 58, 64] [1, 1, 1, 1]
// CHECK: linalg.map outs(%[[S]] : memref<1x1x58x64xf32, strided<[215296, 3712, 64, 1], offset: ?>>)
// CHECK: } {xhlo.parallel_loop}
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c56 step %{{.*}} {
// CHECK: %[[A:.*]] = memref.subview %arg0[0, %[[J]], 0, 0] [1, 1, 56, 64] [1, 1, 1, 1]
// CHECK: %[[B:.*]] = memref.subview %{{.*}}[0, %[[J]], 0, 0] [1, 1, 56, 64] [1, 1, 1, 1]
// CHECK: linalg.copy ins(%[[A]] : {{.*}}) outs(%[[B]] : {{.*}})
// CHECK: } {xhlo.parallel_loop}
func.func @pad(%x: memref<1x56x56x64xf32>, %buffer: memref<1x58x58x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.map outs(%buffer : memref<1x58x58x64xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %inner = memref.subview %buffer[0, 1, 1, 0] [1, 56, 56, 64] [1, 1, 1, 1] : memref<1x58x58x64xf32> to memref<1x56x56x64xf32, strided<[215296, 3712, 64, 1], offset: 3776>>
  linalg.copy ins(%x : memref<1x56x56x64xf32>) outs(%inner : memref<1x56x56x64xf32, strided<[215296, 3712, 64, 1], offset: 3776>>)
  return
}

// -----

// Small fills and ops on tensors are left alone.
// CHECK-LABEL: func.func @small_and_tensors
// CHECK-NOT: scf.for
func.func @small_and_tensors(%b: memref<64x64xf32>, %t: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%b : memref<64x64xf32>)
  %0 = linalg.fill ins(%zero : f32) outs(%t : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %0 : tensor<512x512xf32>
}

// RUN: xhlo-opt %s --xhlo-split-buffer-fills --split-input-file | FileCheck %s

// A padded input written after bufferization: the fill and the copy into the interior
// each become a loop over the first dimension longer than one, marked parallel, of the
// same op on one slice of every buffer. The slices are row-major: the fill (a map that
// yields a constant) runs on a flat view, the copy is a memref.copy of flat views.
// The loops are not to be unrolled: a step is a memcpy, or a loop over a row.
// CHECK: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[NO_UNROLL:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @pad
// CHECK: scf.for %[[I:.*]] = %c0 to %c58 step %c1 {
// CHECK: %[[S:.*]] = memref.subview %{{.*}}[0, %[[I]], 0, 0] [1, 1, 58, 64] [1, 1, 1, 1]
// CHECK: %[[SB:[a-z_0-9]+]], %[[SO:[a-z_0-9]+]], %{{.*}} = memref.extract_strided_metadata %[[S]]
// CHECK: %[[SF:.*]] = memref.reinterpret_cast %[[SB]] to offset: [%[[SO]]], sizes: [3712], strides: [1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[SF]] : memref<3712xf32, strided<[1], offset: ?>>)
// CHECK: } {llvm.loop_annotation = #[[NO_UNROLL]], xhlo.parallel_loop}
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c56 step %{{.*}} {
// CHECK: %[[A:.*]] = memref.subview %arg0[0, %[[J]], 0, 0] [1, 1, 56, 64] [1, 1, 1, 1]
// CHECK: %[[B:.*]] = memref.subview %{{.*}}[0, %[[J]], 0, 0] [1, 1, 56, 64] [1, 1, 1, 1]
// CHECK: memref.extract_strided_metadata %[[A]]
// CHECK: %[[AF:.*]] = memref.reinterpret_cast {{.*}} sizes: [3584], strides: [1]
// CHECK: memref.extract_strided_metadata %[[B]]
// CHECK: %[[BF:.*]] = memref.reinterpret_cast {{.*}} sizes: [3584], strides: [1]
// CHECK: memref.copy %[[AF]], %[[BF]] : memref<3584xf32, strided<[1], offset: ?>> to memref<3584xf32, strided<[1], offset: ?>>
// CHECK: } {llvm.loop_annotation = #[[NO_UNROLL]], xhlo.parallel_loop}
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

// Small fills and copies are not split; on row-major buffers they run on flat views.
// Ops on tensors and copies of strided (not row-major) buffers are left alone.
// CHECK-LABEL: func.func @small_and_tensors
// CHECK-NOT: scf.for
// CHECK: %[[F:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [4096], strides: [1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[F]] : memref<4096xf32, strided<[1], offset: ?>>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<512x512xf32>)
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<128xi8, strided<[1], offset: ?>> to memref<128xi8, strided<[1], offset: ?>>
// CHECK: linalg.copy ins(%{{.*}} : memref<4x8xf32, strided<[16, 1]>>)
func.func @small_and_tensors(%b: memref<64x64xf32>, %t: tensor<512x512xf32>, %c: memref<2x8x8xi8>, %d: memref<16x8xi8>,
                             %s: memref<4x8xf32, strided<[16, 1]>>, %e: memref<4x8xf32>) -> tensor<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%b : memref<64x64xf32>)
  %0 = linalg.fill ins(%zero : f32) outs(%t : tensor<512x512xf32>) -> tensor<512x512xf32>
  %dc = memref.collapse_shape %c [[0, 1], [2]] : memref<2x8x8xi8> into memref<16x8xi8>
  linalg.copy ins(%dc : memref<16x8xi8>) outs(%d : memref<16x8xi8>)
  linalg.copy ins(%s : memref<4x8xf32, strided<[16, 1]>>) outs(%e : memref<4x8xf32>)
  return %0 : tensor<512x512xf32>
}

// -----

// A copy of a strided buffer whose rows are contiguous and at least min-block-bytes long:
// a (serial) loop over the rows, each row a memref.copy of flat views.
// CHECK-LABEL: func.func @rows
// CHECK: scf.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK: %[[A:.*]] = memref.subview %arg0[%[[I]], 0] [1, 32] [1, 1]
// CHECK: %[[B:.*]] = memref.subview %arg1[%[[I]], 0] [1, 32] [1, 1]
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<32xf32, strided<[1], offset: ?>> to memref<32xf32, strided<[1], offset: ?>>
// CHECK-NOT: xhlo.parallel_loop
func.func @rows(%s: memref<4x32xf32, strided<[64, 1]>>, %d: memref<4x32xf32>) {
  linalg.copy ins(%s : memref<4x32xf32, strided<[64, 1]>>) outs(%d : memref<4x32xf32>)
  return
}

// -----

// Along the innermost dim longer than one a step takes a block of 16384 elements, not
// one element (a 1-D copy of 16 MiB was four million memcpy calls of 4 bytes); the
// elements the blocks leave get the op once more. A loop-carried buffer's dynamic
// strides give its slices dynamic strides (the bindings cannot infer that type).
// CHECK: #[[NO_UNROLL:.*]] = #llvm.loop_annotation
// CHECK-LABEL: func.func @blocks_of_the_innermost_dim
// CHECK: scf.for %[[I:.*]] = %c0 to %c98304 step %c16384 {
// CHECK: %[[A:.*]] = memref.subview %arg0[0, %[[I]]] [1, 16384] [1, 1] : memref<1x100000xf32, strided<[?, ?], offset: ?>> to memref<1x16384xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[B:.*]] = memref.subview %arg1[0, %[[I]]] [1, 16384] [1, 1] : memref<1x100000xf32> to memref<1x16384xf32, strided<[100000, 1], offset: ?>>
// CHECK: linalg.copy ins(%[[A]] : {{.*}}) outs(%[[B]] : {{.*}})
// CHECK: } {llvm.loop_annotation = #[[NO_UNROLL]], xhlo.parallel_loop}
// CHECK: %[[TA:.*]] = memref.subview %arg0[0, 98304] [1, 1696] [1, 1] : memref<1x100000xf32, strided<[?, ?], offset: ?>> to memref<1x1696xf32, strided<[?, ?], offset: ?>>
// CHECK: linalg.copy ins(%[[TA]] : {{.*}}) outs(%{{.*}} : memref<1x1696xf32, strided<[100000, 1], offset: 98304>>)
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[C:.*]] = memref.subview %arg2[%[[J]]] [16384] [1] : memref<4194304xf32> to memref<16384xf32, strided<[1], offset: ?>>
// CHECK: %[[D:.*]] = memref.subview %arg3[%[[J]]] [16384] [1] : memref<4194304xf32> to memref<16384xf32, strided<[1], offset: ?>>
// CHECK: memref.copy %[[C]], %[[D]] : memref<16384xf32, strided<[1], offset: ?>> to memref<16384xf32, strided<[1], offset: ?>>
// CHECK: } {llvm.loop_annotation = #[[NO_UNROLL]], xhlo.parallel_loop}
// CHECK-NOT: memref.copy
func.func @blocks_of_the_innermost_dim(%a: memref<1x100000xf32, strided<[?, ?], offset: ?>>, %b: memref<1x100000xf32>,
                                       %c: memref<4194304xf32>, %d: memref<4194304xf32>) {
  linalg.copy ins(%a : memref<1x100000xf32, strided<[?, ?], offset: ?>>) outs(%b : memref<1x100000xf32>)
  linalg.copy ins(%c : memref<4194304xf32>) outs(%d : memref<4194304xf32>)
  return
}

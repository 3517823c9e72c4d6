// RUN: xhlo-opt %s --xhlo-memref-copy-to-linalg --split-input-file | FileCheck %s

// memref.copy becomes linalg.copy with the same source and destination.
// CHECK-LABEL: func.func @contiguous
// CHECK-SAME: (%[[SRC:.*]]: memref<2x3xf32>, %[[DST:.*]]: memref<2x3xf32>)
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[SRC]] : memref<2x3xf32>) outs(%[[DST]] : memref<2x3xf32>)
// CHECK-NEXT: return
// CHECK-NOT: memref.copy
func.func @contiguous(%src: memref<2x3xf32>, %dst: memref<2x3xf32>) {
  memref.copy %src, %dst : memref<2x3xf32> to memref<2x3xf32>
  return
}

// -----

// Strided views are the case that matters (memref.copy would call the runtime
// library's memrefCopy); every copy in the function is rewritten.
// CHECK-LABEL: func.func @strided_views
// CHECK-SAME: (%[[BUF:.*]]: memref<4x4xi8>, %[[OUT:.*]]: memref<2x2xi8>)
// CHECK: %[[VIEW:.*]] = memref.subview %[[BUF]][0, 0] [2, 2] [2, 2]
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[VIEW]] : memref<2x2xi8, strided<[8, 2]>>) outs(%[[OUT]] : memref<2x2xi8>)
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[OUT]] : memref<2x2xi8>) outs(%[[VIEW]] : memref<2x2xi8, strided<[8, 2]>>)
// CHECK-NOT: memref.copy
func.func @strided_views(%buf: memref<4x4xi8>, %out: memref<2x2xi8>) {
  %view = memref.subview %buf[0, 0] [2, 2] [2, 2] : memref<4x4xi8> to memref<2x2xi8, strided<[8, 2]>>
  memref.copy %view, %out : memref<2x2xi8, strided<[8, 2]>> to memref<2x2xi8>
  memref.copy %out, %view : memref<2x2xi8> to memref<2x2xi8, strided<[8, 2]>>
  return
}

// -----

// Rank-0 copies too.
// CHECK-LABEL: func.func @scalar
// CHECK-NEXT: linalg.copy {{.*}}ins(%{{.*}} : memref<f64>) outs(%{{.*}} : memref<f64>)
func.func @scalar(%a: memref<f64>, %b: memref<f64>) {
  memref.copy %a, %b : memref<f64> to memref<f64>
  return
}

// -----

// A large copy of a buffer whose strides are only known at run time (a loop-carried
// slice) is versioned: a flat memcpy-able memref.copy when the strides are row-major,
// the element loop otherwise.
// CHECK-LABEL: func.func @dynamic_strides
// CHECK-SAME: (%[[SRC:.*]]: memref<64x128xf32, strided<[?, ?], offset: ?>>, %[[DST:.*]]: memref<64x128xf32>)
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[SRC]]
// CHECK-DAG: %[[ROW:.*]] = arith.cmpi eq, %[[STRIDES]]#0, %{{.*}} : index
// CHECK-DAG: %[[UNIT:.*]] = arith.cmpi eq, %[[STRIDES]]#1, %{{.*}} : index
// CHECK: %[[BOTH:.*]] = arith.andi
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [%[[OFFSET]]], sizes: [8192], strides: [1]
// CHECK: %[[FLAT_DST:.*]] = memref.reinterpret_cast
// CHECK: scf.if %[[BOTH]] {
// CHECK-NEXT: memref.copy %[[FLAT]], %[[FLAT_DST]] : memref<8192xf32, strided<[1], offset: ?>> to memref<8192xf32, strided<[1], offset: ?>>
// CHECK-NEXT: } else {
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[SRC]] : memref<64x128xf32, strided<[?, ?], offset: ?>>) outs(%[[DST]] : memref<64x128xf32>)
func.func @dynamic_strides(%src: memref<64x128xf32, strided<[?, ?], offset: ?>>, %dst: memref<64x128xf32>) {
  memref.copy %src, %dst : memref<64x128xf32, strided<[?, ?], offset: ?>> to memref<64x128xf32>
  return
}

// -----

// Small copies are not worth the check.
// CHECK-LABEL: func.func @small_dynamic
// CHECK-NOT: scf.if
// CHECK: linalg.copy
func.func @small_dynamic(%src: memref<64xf32, strided<[?], offset: ?>>, %dst: memref<64xf32>) {
  memref.copy %src, %dst : memref<64xf32, strided<[?], offset: ?>> to memref<64xf32>
  return
}

// -----

// A large copy between row-major buffers (a loop's result into an out-parameter) is a
// memcpy of flat views, whatever the static offset.
// CHECK-LABEL: func.func @row_major_static
// CHECK-SAME: (%[[SRC:.*]]: memref<64x128xf32, strided<[128, 1], offset: 256>>, %[[DST:.*]]: memref<64x128xf32>)
// CHECK-NOT: scf.if
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [8192], strides: [1]
// CHECK: %[[FLAT_DST:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [8192], strides: [1]
// CHECK-NEXT: memref.copy %[[FLAT]], %[[FLAT_DST]] : memref<8192xf32, strided<[1], offset: ?>> to memref<8192xf32, strided<[1], offset: ?>>
// CHECK-NOT: linalg.copy
func.func @row_major_static(%src: memref<64x128xf32, strided<[128, 1], offset: 256>>, %dst: memref<64x128xf32>) {
  memref.copy %src, %dst : memref<64x128xf32, strided<[128, 1], offset: 256>> to memref<64x128xf32>
  return
}

// -----

// From 1 MiB the memcpy is cut into 64 KiB chunks by a loop marked for
// xhlo-parallelize-loops; what the chunks leave over is copied after it.
// CHECK-LABEL: func.func @parallel_chunks
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[WHOLE:.*]] = arith.constant 311296 : index
// CHECK-DAG: %[[CHUNK:.*]] = arith.constant 16384 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[WHOLE]] step %[[CHUNK]] {
// CHECK: %[[FROM:.*]] = memref.subview %{{.*}}[%[[I]]] [16384] [1]
// CHECK: %[[TO:.*]] = memref.subview %{{.*}}[%[[I]]] [16384] [1]
// CHECK-NEXT: memref.copy %[[FROM]], %[[TO]] : memref<16384xf32, strided<[1], offset: ?>> to memref<16384xf32, strided<[1], offset: ?>>
// CHECK: } {xhlo.parallel_loop}
// CHECK: %[[TAIL:.*]] = memref.subview %{{.*}}[311296] [1000] [1]
// CHECK: %[[TAIL_DST:.*]] = memref.subview %{{.*}}[311296] [1000] [1]
// CHECK: memref.copy %[[TAIL]], %[[TAIL_DST]] : memref<1000xf32, strided<[1], offset: ?>> to memref<1000xf32, strided<[1], offset: ?>>
// CHECK-NOT: linalg.copy
func.func @parallel_chunks(%src: memref<312296xf32>, %dst: memref<312296xf32>) {
  memref.copy %src, %dst : memref<312296xf32> to memref<312296xf32>
  return
}

// -----

// Sub-byte elements are not memcpy-able: element loops.
// CHECK-LABEL: func.func @sub_byte
// CHECK-NOT: memref.copy
// CHECK: linalg.copy
func.func @sub_byte(%src: memref<8192xi4>, %dst: memref<8192xi4>) {
  memref.copy %src, %dst : memref<8192xi4> to memref<8192xi4>
  return
}

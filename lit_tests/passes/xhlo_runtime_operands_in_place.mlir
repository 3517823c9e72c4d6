// RUN: xhlo-opt %s --xhlo-runtime-operands-in-place --split-input-file | FileCheck %s

// A runtime call's operands are declared row-major with a dynamic offset. A copy made
// only for the call passes the source itself when its strides are row-major at run time;
// an identity-layout operand is cast; results are untouched.

// CHECK-LABEL: func.func private @xhlo_rt_op0
// CHECK-SAME: (memref<8xf32, strided<[1], offset: ?>> {bufferization.access = "read"},
// CHECK-SAME: memref<2x3xf32, strided<[3, 1], offset: ?>> {bufferization.access = "read"},
// CHECK-SAME: memref<16xf32> {bufferization.access = "write"})
// CHECK-LABEL: func.func @strided_operand
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: memref<8xf32, strided<[?], offset: ?>>, %[[Y:[a-zA-Z0-9_]+]]: memref<2x3xf32>
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}, %[[STRIDE:.*]] = memref.extract_strided_metadata %[[X]]
// CHECK: %[[UNIT:.*]] = arith.cmpi eq, %[[STRIDE]], %{{.*}} : index
// CHECK: %[[VIEW:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [%[[OFFSET]]], sizes: [8], strides: [1]
// CHECK: %[[V:.*]] = scf.if %[[UNIT]] -> (memref<8xf32, strided<[1], offset: ?>>) {
// CHECK-NEXT: scf.yield %[[VIEW]]
// CHECK-NEXT: } else {
// CHECK-NEXT: linalg.copy {{.*}} ins(%[[X]] : {{.*}}) outs(%[[A]] : memref<8xf32>)
// CHECK-NEXT: %[[CAST:.*]] = memref.cast %[[A]]
// CHECK-NEXT: scf.yield %[[CAST]]
// CHECK: %[[YC:.*]] = memref.cast %[[Y]] : memref<2x3xf32> to memref<2x3xf32, strided<[3, 1], offset: ?>>
// CHECK: call @xhlo_rt_op0(%[[V]], %[[YC]], %{{.*}}) : (memref<8xf32, strided<[1], offset: ?>>, memref<2x3xf32, strided<[3, 1], offset: ?>>, memref<16xf32>) -> ()
// CHECK: memref.dealloc %[[A]]
func.func private @xhlo_rt_op0(memref<8xf32> {bufferization.access = "read"}, memref<2x3xf32> {bufferization.access = "read"}, memref<16xf32> {bufferization.access = "write"})
func.func @strided_operand(%x: memref<8xf32, strided<[?], offset: ?>>, %y: memref<2x3xf32>) -> memref<16xf32> {
  %a = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32, strided<[?], offset: ?>> to memref<8xf32>
  %out = memref.alloc() : memref<16xf32>
  func.call @xhlo_rt_op0(%a, %y, %out) : (memref<8xf32>, memref<2x3xf32>, memref<16xf32>) -> ()
  memref.dealloc %a : memref<8xf32>
  return %out : memref<16xf32>
}

// -----

// A source row-major by its type needs no copy, and no buffer, at all.

// CHECK-LABEL: func.func @unit_stride_slice
// CHECK-NOT: memref.copy
// CHECK: %[[VIEW:.*]] = memref.reinterpret_cast
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: call @xhlo_rt_op0(%[[VIEW]], %[[OUT]])
// CHECK-NEXT: return
func.func private @xhlo_rt_op0(memref<8xf32> {bufferization.access = "read"}, memref<16xf32> {bufferization.access = "write"})
func.func @unit_stride_slice(%x: memref<8xf32, strided<[1], offset: ?>>) -> memref<16xf32> {
  %a = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32, strided<[1], offset: ?>> to memref<8xf32>
  %out = memref.alloc() : memref<16xf32>
  func.call @xhlo_rt_op0(%a, %out) : (memref<8xf32>, memref<16xf32>) -> ()
  memref.dealloc %a : memref<8xf32>
  return %out : memref<16xf32>
}

// -----

// The source is written between the copy and the call: the copy stays as it is.

// CHECK-LABEL: func.func @written_in_between
// CHECK: memref.copy %arg0, %[[A:.*]] :
// CHECK-NEXT: linalg.fill
// CHECK-NOT: scf.if
// CHECK: %[[CAST:.*]] = memref.cast %[[A]]
// CHECK: call @xhlo_rt_op0(%[[CAST]], %{{.*}})
func.func private @xhlo_rt_op0(memref<8xf32> {bufferization.access = "read"}, memref<16xf32> {bufferization.access = "write"})
func.func @written_in_between(%x: memref<8xf32, strided<[?], offset: ?>>) -> memref<16xf32> {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32, strided<[?], offset: ?>> to memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%x : memref<8xf32, strided<[?], offset: ?>>)
  %out = memref.alloc() : memref<16xf32>
  func.call @xhlo_rt_op0(%a, %out) : (memref<8xf32>, memref<16xf32>) -> ()
  memref.dealloc %a : memref<8xf32>
  return %out : memref<16xf32>
}

// -----

// One copy passed twice: the call reads it in both places, so it stays a copy.

// CHECK-LABEL: func.func @passed_twice
// CHECK: memref.copy %arg0, %[[A:.*]] :
// CHECK-NOT: scf.if
// CHECK: %[[C0:.*]] = memref.cast %[[A]]
// CHECK: %[[C1:.*]] = memref.cast %[[A]]
// CHECK: call @xhlo_rt_op0(%[[C0]], %[[C1]], %{{.*}})
func.func private @xhlo_rt_op0(memref<8xf32> {bufferization.access = "read"}, memref<8xf32> {bufferization.access = "read"}, memref<16xf32> {bufferization.access = "write"})
func.func @passed_twice(%x: memref<8xf32, strided<[?], offset: ?>>) -> memref<16xf32> {
  %a = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32, strided<[?], offset: ?>> to memref<8xf32>
  %out = memref.alloc() : memref<16xf32>
  func.call @xhlo_rt_op0(%a, %a, %out) : (memref<8xf32>, memref<8xf32>, memref<16xf32>) -> ()
  memref.dealloc %a : memref<8xf32>
  return %out : memref<16xf32>
}

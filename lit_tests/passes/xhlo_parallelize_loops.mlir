// RUN: xhlo-opt %s --xhlo-parallelize-loops="min-work=4096" --split-input-file | FileCheck %s

// A marked loop big enough: its body moves to a private function over
// [begin, end), the captured memrefs travel as their aligned pointers in a
// stack struct (allocated once in the entry block), the body rebuilds their
// static layout from constants, and the runtime helper is called.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[IN:.*]]: memref<65536xf32>, %[[OUT:.*]]: memref<65536xf32>)
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr)> : (i64) -> !llvm.ptr
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[N:.*]] = arith.constant 65536 : index
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[D0:.*]] = builtin.unrealized_conversion_cast %[[IN]] : memref<65536xf32> to !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[P0:.*]] = llvm.extractvalue %[[D0]][1]
// CHECK: %[[D1:.*]] = builtin.unrealized_conversion_cast %[[OUT]] : memref<65536xf32> to !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[P1:.*]] = llvm.extractvalue %[[D1]][1]
// CHECK: %[[S0:.*]] = llvm.insertvalue %[[P0]], %{{.*}}[0]
// CHECK: %[[S1:.*]] = llvm.insertvalue %[[P1]], %[[S0]][1]
// CHECK: llvm.store %[[S1]], %[[SLOT]]
// CHECK: %[[BODY:.*]] = constant @elementwise_parallel_0 : (!llvm.ptr, index, index) -> ()
// CHECK: call @xhlo_parallel_for(%[[BODY]], %[[SLOT]], %[[C0]], %[[N]], %[[C16]])
// CHECK-NOT: scf.for
// CHECK: return
// CHECK: llvm.mlir.global external @xhlo_parallel_dispatch()
// CHECK: func.func private @xhlo_parallel_dispatch_slot() -> !llvm.ptr
// CHECK: func.func private @xhlo_parallel_for(
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: call_indirect
// CHECK: llvm.call
// CHECK-LABEL: func.func private @elementwise_parallel_0
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr, %[[BEGIN:.*]]: index, %[[END:.*]]: index) attributes {xhlo.parallel_body}
// CHECK: %[[STEP:.*]] = arith.constant 16 : index
// CHECK: %[[ALL:.*]] = llvm.load %[[CTX]] : !llvm.ptr -> !llvm.struct<(ptr, ptr)>
// CHECK: %[[F0:.*]] = llvm.extractvalue %[[ALL]][0]
// CHECK: %[[A0:.*]] = llvm.insertvalue %[[F0]], %{{.*}}[0]
// CHECK: %[[B0:.*]] = llvm.insertvalue %[[F0]], %[[A0]][1]
// CHECK: %[[OFFSET:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: %[[C0F:.*]] = llvm.insertvalue %[[OFFSET]], %[[B0]][2]
// CHECK: %[[SIZE:.*]] = llvm.mlir.constant(65536 : i64) : i64
// CHECK: %[[D0F:.*]] = llvm.insertvalue %[[SIZE]], %[[C0F]][3, 0]
// CHECK: %[[STRIDE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[E0:.*]] = llvm.insertvalue %[[STRIDE]], %[[D0F]][4, 0]
// CHECK: %[[M0:.*]] = builtin.unrealized_conversion_cast %[[E0]] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<65536xf32>
// CHECK: %[[F1:.*]] = llvm.extractvalue %[[ALL]][1]
// CHECK: llvm.insertvalue %[[F1]], %{{.*}}[0]
// CHECK: %[[M1:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<65536xf32>
// CHECK: scf.for %[[I:.*]] = %[[BEGIN]] to %[[END]] step %[[STEP]] {
// CHECK: vector.transfer_read %[[M0]][%[[I]]]
// CHECK: vector.transfer_write %{{.*}}, %[[M1]][%[[I]]]
// CHECK-NOT: xhlo.parallel_loop
// CHECK: return
func.func @elementwise(%in: memref<65536xf32>, %out: memref<65536xf32>) {
  %c0 = arith.constant 0 : index
  %n = arith.constant 65536 : index
  %c16 = arith.constant 16 : index
  %pad = ub.poison : f32
  scf.for %i = %c0 to %n step %c16 {
    %v = vector.transfer_read %in[%i], %pad {in_bounds = [true]} : memref<65536xf32>, vector<16xf32>
    %e = math.exp %v : vector<16xf32>
    vector.transfer_write %e, %out[%i] {in_bounds = [true]} : vector<16xf32>, memref<65536xf32>
  } {xhlo.parallel_loop}
  return
}

// -----

// Row loop of a row-wise reduction: a scalar and a 1-D vector captured from
// outside travel in the struct too (index as i64); the inner reduction loop
// stays in the body.
// CHECK-LABEL: func.func @row_sums
// CHECK-SAME: (%[[X:.*]]: memref<64x1024xf32>, %[[ROWS:.*]]: index, %[[INIT:.*]]: vector<16xf32>, %[[OUT:.*]]: memref<64xf32>)
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(i64, vector<16xf32>, ptr, ptr)>
// CHECK: arith.index_cast %[[ROWS]] : index to i64
// CHECK: call @xhlo_parallel_for(
// CHECK-LABEL: func.func private @row_sums_parallel_0
// CHECK: %[[ALL:.*]] = llvm.load
// CHECK: %[[R64:.*]] = llvm.extractvalue %[[ALL]][0] : !llvm.struct
// CHECK: %[[R:.*]] = arith.index_cast %[[R64]] : i64 to index
// CHECK: llvm.extractvalue %[[ALL]][1] : !llvm.struct<(i64, vector<16xf32>, ptr, ptr)>
// CHECK: llvm.extractvalue %[[ALL]][2] : !llvm.struct<(i64, vector<16xf32>, ptr, ptr)>
// CHECK: llvm.extractvalue %[[ALL]][3] : !llvm.struct<(i64, vector<16xf32>, ptr, ptr)>
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[ROW]]]
func.func @row_sums(%x: memref<64x1024xf32>, %rows: index, %init: vector<16xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %pad = ub.poison : f32
  scf.for %r = %c0 to %c64 step %c1 {
    %clamped = arith.minui %r, %rows : index
    %acc = scf.for %k = %c0 to %c1024 step %c16 iter_args(%a = %init) -> (vector<16xf32>) {
      %v = vector.transfer_read %x[%clamped, %k], %pad {in_bounds = [true]} : memref<64x1024xf32>, vector<16xf32>
      %s = arith.addf %a, %v : vector<16xf32>
      scf.yield %s : vector<16xf32>
    }
    %sum = vector.reduction <add>, %acc : vector<16xf32> into f32
    memref.store %sum, %out[%r] : memref<64xf32>
  } {xhlo.parallel_loop}
  return
}

// -----

// A dynamic offset and size travel after the pointer (offset, then sizes,
// then strides); the static stride is a constant in the body. A layout
// without strides travels as the whole descriptor.
// CHECK: #[[MOD:.*]] = affine_map<(d0) -> (d0 mod 64)>
// CHECK-LABEL: func.func @dynamic_layouts
// CHECK-SAME: (%[[IN:.*]]: memref<?xf32, strided<[1], offset: ?>>, %[[OUT:.*]]: memref<65536xf32, #[[MOD]]>)
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(ptr, i64, i64, struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>)>
// CHECK: %[[D:.*]] = builtin.unrealized_conversion_cast %[[IN]]
// CHECK: %[[P:.*]] = llvm.extractvalue %[[D]][1]
// CHECK: %[[OFF:.*]] = llvm.extractvalue %[[D]][2]
// CHECK: %[[SIZE:.*]] = llvm.extractvalue %[[D]][3, 0]
// CHECK: %[[WHOLE:.*]] = builtin.unrealized_conversion_cast %[[OUT]]
// CHECK: llvm.insertvalue %[[P]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[OFF]], %{{.*}}[1]
// CHECK: llvm.insertvalue %[[SIZE]], %{{.*}}[2]
// CHECK: llvm.insertvalue %[[WHOLE]], %{{.*}}[3]
// CHECK-LABEL: func.func private @dynamic_layouts_parallel_0
// CHECK: %[[ALL:.*]] = llvm.load
// CHECK: %[[F0:.*]] = llvm.extractvalue %[[ALL]][0]
// CHECK: %[[F1:.*]] = llvm.extractvalue %[[ALL]][1]
// CHECK: %[[F2:.*]] = llvm.extractvalue %[[ALL]][2]
// CHECK: llvm.insertvalue %[[F0]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[F0]], %{{.*}}[1]
// CHECK: llvm.insertvalue %[[F1]], %{{.*}}[2]
// CHECK: llvm.insertvalue %[[F2]], %{{.*}}[3, 0]
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: llvm.insertvalue %[[ONE]], %{{.*}}[4, 0]
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to memref<?xf32, strided<[1], offset: ?>>
// CHECK: %[[F3:.*]] = llvm.extractvalue %[[ALL]][3]
// CHECK: builtin.unrealized_conversion_cast %[[F3]] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<65536xf32, #[[MOD]]>
// CHECK: scf.for
func.func @dynamic_layouts(%in: memref<?xf32, strided<[1], offset: ?>>, %out: memref<65536xf32, affine_map<(d0) -> (d0 mod 64)>>) {
  %c0 = arith.constant 0 : index
  %n = arith.constant 65536 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %n step %c16 {
    %v = memref.load %in[%i] : memref<?xf32, strided<[1], offset: ?>>
    memref.store %v, %out[%i] : memref<65536xf32, affine_map<(d0) -> (d0 mod 64)>>
  } {xhlo.parallel_loop}
  return
}

// -----

// Left alone: a loop without the mark, a marked loop too small for min-work,
// a marked loop carrying a value, and a marked loop calling a function (a
// BLAS call runs its own threads). No runtime helper is added.
// CHECK-LABEL: func.func @left_alone
// CHECK: scf.for
// CHECK: vector.transfer_write
// CHECK-NEXT: }{{$}}
// CHECK: scf.for
// CHECK: } {xhlo.parallel_loop}
// CHECK: scf.for {{.*}} iter_args
// CHECK: } {xhlo.parallel_loop}
// CHECK: scf.for
// CHECK: func.call @opaque
// CHECK: } {xhlo.parallel_loop}
// CHECK-NOT: xhlo_parallel_for
// CHECK-NOT: _parallel_0
func.func private @opaque(memref<65536xf32>, index)
func.func @left_alone(%in: memref<65536xf32>, %out: memref<65536xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %n = arith.constant 65536 : index
  %pad = ub.poison : f32
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c16 {
    %v = vector.transfer_read %in[%i], %pad {in_bounds = [true]} : memref<65536xf32>, vector<16xf32>
    vector.transfer_write %v, %out[%i] {in_bounds = [true]} : vector<16xf32>, memref<65536xf32>
  }
  scf.for %i = %c0 to %c64 step %c16 {
    %v = vector.transfer_read %in[%i], %pad {in_bounds = [true]} : memref<65536xf32>, vector<16xf32>
    vector.transfer_write %v, %out[%i] {in_bounds = [true]} : vector<16xf32>, memref<65536xf32>
  } {xhlo.parallel_loop}
  %total = scf.for %i = %c0 to %n step %c16 iter_args(%t = %zero) -> (f32) {
    %v = vector.transfer_read %in[%i], %pad {in_bounds = [true]} : memref<65536xf32>, vector<16xf32>
    %s = vector.reduction <add>, %v, %t : vector<16xf32> into f32
    scf.yield %s : f32
  } {xhlo.parallel_loop}
  scf.for %i = %c0 to %n step %c16 {
    %v = vector.transfer_read %in[%i], %pad {in_bounds = [true]} : memref<65536xf32>, vector<16xf32>
    vector.transfer_write %v, %out[%i] {in_bounds = [true]} : vector<16xf32>, memref<65536xf32>
    func.call @opaque(%out, %i) : (memref<65536xf32>, index) -> ()
  } {xhlo.parallel_loop}
  return %total : f32
}

// -----

// A chunked memcpy (xhlo-memref-copy-to-linalg): a memref.copy counts its
// elements, so two chunks of 2048 are enough work; the body copies its chunks.
// CHECK-LABEL: func.func @chunked_copy
// CHECK: call @xhlo_parallel_for
// CHECK-NOT: scf.for
// CHECK-LABEL: func.func private @chunked_copy_parallel_0
// CHECK: scf.for
// CHECK: memref.copy {{.*}} : memref<2048xf32, strided<[1], offset: ?>> to memref<2048xf32, strided<[1], offset: ?>>
func.func @chunked_copy(%src: memref<4096xf32>, %dst: memref<4096xf32>) {
  %c0 = arith.constant 0 : index
  %c2048 = arith.constant 2048 : index
  %n = arith.constant 4096 : index
  scf.for %i = %c0 to %n step %c2048 {
    %from = memref.reinterpret_cast %src to offset: [%i], sizes: [2048], strides: [1] : memref<4096xf32> to memref<2048xf32, strided<[1], offset: ?>>
    %to = memref.reinterpret_cast %dst to offset: [%i], sizes: [2048], strides: [1] : memref<4096xf32> to memref<2048xf32, strided<[1], offset: ?>>
    memref.copy %from, %to : memref<2048xf32, strided<[1], offset: ?>> to memref<2048xf32, strided<[1], offset: ?>>
  } {xhlo.parallel_loop}
  return
}

// -----

// Calls of a function marked xhlo.thread_safe (a library any thread may run, as
// xhlo-fft-to-pocketfft's) may move to the pool. The calls do work the pass cannot
// see: the loop's xhlo.work gives it per iteration. Here 2 x 2048 elements reach
// min-work, while the same loop without xhlo.work is too small.
// CHECK-LABEL: func.func @library_calls
// CHECK: call @xhlo_parallel_for
// CHECK: scf.for
// CHECK: func.call @safe_library
// CHECK: } {xhlo.parallel_loop}
// CHECK-LABEL: func.func private @library_calls_parallel_0
// CHECK: scf.for
// CHECK: func.call @safe_library
func.func private @safe_library(index) attributes {xhlo.thread_safe}
func.func @library_calls() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    func.call @safe_library(%i) : (index) -> ()
  } {xhlo.parallel_loop, xhlo.work = 2048 : i64}
  scf.for %i = %c0 to %c2 step %c1 {
    func.call @safe_library(%i) : (index) -> ()
  } {xhlo.parallel_loop}
  return
}

// -----

// A vector of index (lanes of vector.step) travels as i64 lanes, as an index does.
// CHECK-LABEL: func.func @index_lanes
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<({{.*}}vector<4xi64>{{.*}})>
// CHECK: arith.index_cast %{{.*}} : vector<4xindex> to vector<4xi64>
// CHECK: call @xhlo_parallel_for(
// CHECK-LABEL: func.func private @index_lanes_parallel_0
// CHECK: llvm.extractvalue %{{.*}} : !llvm.struct<({{.*}}vector<4xi64>{{.*}})>
// CHECK: arith.index_cast %{{.*}} : vector<4xi64> to vector<4xindex>
func.func @index_lanes(%out: memref<65536x4xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  %lanes = vector.step : vector<4xindex>
  scf.for %i = %c0 to %n step %c1 {
    %v = arith.index_cast %lanes : vector<4xindex> to vector<4xi32>
    vector.transfer_write %v, %out[%i, %c0] {in_bounds = [true]} : vector<4xi32>, memref<65536x4xi32>
  } {xhlo.parallel_loop}
  return
}

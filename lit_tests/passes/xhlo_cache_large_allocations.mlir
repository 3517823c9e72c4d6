// RUN: xhlo-opt %s --xhlo-cache-large-allocations="min-bytes=1024 slots=4" --split-input-file --verify-diagnostics | FileCheck %s

// The declarations finalize-memref-to-llvm{use-generic-functions} leaves are
// replaced by internal definitions: small blocks go straight to malloc/free,
// blocks of at least min-bytes are parked in one of `slots` slots on free and
// taken back by an alloc of the same size; a public function frees the parked ones.
// CHECK-LABEL: llvm.func @allocates
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK-DAG: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @free(!llvm.ptr)
// CHECK-DAG: llvm.mlir.global internal @xhlo_cache_blocks() {{.*}} : !llvm.array<4 x i64>
// CHECK-DAG: llvm.mlir.global internal @xhlo_cache_sizes() {{.*}} : !llvm.array<4 x i64>
// CHECK-LABEL: llvm.func internal @_mlir_memref_to_llvm_alloc(%{{.*}}: i64) -> !llvm.ptr
// CHECK: llvm.mlir.constant(1024 : i64)
// CHECK: llvm.call @malloc
// CHECK-LABEL: llvm.func internal @_mlir_memref_to_llvm_free(%{{.*}}: !llvm.ptr)
// CHECK: llvm.call @free
// CHECK-LABEL: llvm.func @xhlo_free_cached_blocks()
llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
llvm.func @allocates(%n: i64) {
  %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
  llvm.call @_mlir_memref_to_llvm_free(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// A module that never allocates is left alone.
// CHECK-LABEL: llvm.func @no_heap
// CHECK-NOT: xhlo_cache
llvm.func @no_heap() {
  llvm.return
}

// -----

// Running the pass twice would define the functions twice.
llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// expected-error@+1 {{'xhlo_free_cached_blocks' is already defined}}
llvm.func @xhlo_free_cached_blocks() {
  llvm.return
}

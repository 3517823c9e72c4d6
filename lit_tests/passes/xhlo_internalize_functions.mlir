// RUN: xhlo-opt %s --xhlo-internalize-functions --split-input-file | FileCheck %s

// The C interface wrapper stays external (the host calls it); the public
// function behind it and private helpers become internal; declarations are
// left to the JIT.
// CHECK-LABEL: llvm.func internal @main
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK: llvm.call @helper
// CHECK-LABEL: llvm.func @_mlir_ciface_main
// CHECK: llvm.call @main
// CHECK-LABEL: llvm.func internal @helper
// CHECK-LABEL: llvm.func @expf(f32) -> f32
llvm.func @main(%x: f32) -> f32 attributes {llvm.emit_c_interface} {
  %0 = llvm.call @helper(%x) : (f32) -> f32
  llvm.return %0 : f32
}
llvm.func @_mlir_ciface_main(%x: f32) -> f32 attributes {llvm.emit_c_interface} {
  %0 = llvm.call @main(%x) : (f32) -> f32
  llvm.return %0 : f32
}
llvm.func @helper(%x: f32) -> f32 attributes {sym_visibility = "private"} {
  %0 = llvm.call @expf(%x) : (f32) -> f32
  llvm.return %0 : f32
}
llvm.func @expf(f32) -> f32

// -----

// Functions xhlo.runtime looks up by name stay external.
// CHECK-LABEL: llvm.func @xhlo_parallel_dispatch_slot() -> !llvm.ptr
// CHECK-LABEL: llvm.func @xhlo_free_cached_blocks()
llvm.mlir.global external @xhlo_parallel_dispatch() {addr_space = 0 : i32} : !llvm.ptr {
  %0 = llvm.mlir.zero : !llvm.ptr
  llvm.return %0 : !llvm.ptr
}
llvm.func @xhlo_parallel_dispatch_slot() -> !llvm.ptr attributes {sym_visibility = "private"} {
  %0 = llvm.mlir.addressof @xhlo_parallel_dispatch : !llvm.ptr
  llvm.return %0 : !llvm.ptr
}
llvm.func @xhlo_free_cached_blocks() {
  llvm.return
}

// -----

// A linkage some pass chose is kept.
// CHECK-LABEL: llvm.func linkonce @shared
// CHECK-LABEL: llvm.func weak @overridable
llvm.func linkonce @shared() {
  llvm.return
}
llvm.func weak @overridable() {
  llvm.return
}

// -----

// Outlined parallel loop bodies stay out of line (no_inline): inlining them
// through the serial path of xhlo_parallel_for compiled every loop twice.
// CHECK-LABEL: llvm.func internal @main_parallel_0
// CHECK-SAME: attributes {no_inline, xhlo.parallel_body}
// CHECK-LABEL: llvm.func internal @helper
// CHECK-NOT: no_inline
llvm.func @main_parallel_0(%captures: !llvm.ptr, %begin: i64, %end: i64) attributes {xhlo.parallel_body} {
  llvm.return
}
llvm.func @helper() {
  llvm.return
}

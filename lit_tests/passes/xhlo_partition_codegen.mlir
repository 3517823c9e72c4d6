// RUN: xhlo-opt %s --xhlo-partition-codegen="parts=2 min-part-cost=1" --split-input-file | FileCheck %s

// Greedy balance: the larger body (11 ops) goes to the emptier part 1, the
// smaller one then to part 0 (main and helper cost 7: constants are free). The moved
// body becomes external, lists what its part must copy (a libm declaration, a
// small constant, an internal helper) and is reached through a link slot.
// CHECK-LABEL: module attributes {xhlo.codegen_parts = 2 : i32}
// CHECK-LABEL: llvm.func internal @main
// CHECK: %[[SLOT:.*]] = llvm.mlir.addressof @xhlo_link_main_parallel_0 : !llvm.ptr
// CHECK: %[[BODY:.*]] = llvm.load %[[SLOT]] {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @xhlo_parallel_for(%[[BODY]],
// CHECK: %[[SMALL:.*]] = llvm.mlir.addressof @main_parallel_1 : !llvm.ptr
// CHECK: llvm.call @xhlo_parallel_for(%[[SMALL]],
// CHECK-LABEL: llvm.func @main_parallel_0
// CHECK-SAME: xhlo.codegen_needs = [@expf, @helper, @table]
// CHECK-SAME: xhlo.codegen_part = 1 : i32
// CHECK-LABEL: llvm.func internal @main_parallel_1
// CHECK-NOT: xhlo.codegen_part
// CHECK: llvm.mlir.global external @xhlo_link_main_parallel_0()
// CHECK-SAME: xhlo.link_to = "main_parallel_0"
module {
  llvm.func internal @main(%captures: !llvm.ptr) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %big = llvm.mlir.addressof @main_parallel_0 : !llvm.ptr
    llvm.call @xhlo_parallel_for(%big, %captures, %c0, %c4) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
    %small = llvm.mlir.addressof @main_parallel_1 : !llvm.ptr
    llvm.call @xhlo_parallel_for(%small, %captures, %c0, %c4) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
    llvm.return
  }
  llvm.func @xhlo_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
  llvm.func internal @main_parallel_0(%captures: !llvm.ptr, %begin: i64, %end: i64) attributes {no_inline, sym_visibility = "private", xhlo.parallel_body} {
    %table = llvm.mlir.addressof @table : !llvm.ptr
    %x = llvm.load %table : !llvm.ptr -> f32
    %y = llvm.call @helper(%x) : (f32) -> f32
    %z = llvm.fadd %y, %y : f32
    %w = llvm.fmul %z, %z : f32
    %v = llvm.fmul %w, %w : f32
    %u = llvm.fmul %v, %v : f32
    %t = llvm.fmul %u, %u : f32
    %s = llvm.fmul %t, %t : f32
    llvm.store %s, %captures : f32, !llvm.ptr
    llvm.return
  }
  llvm.func internal @main_parallel_1(%captures: !llvm.ptr, %begin: i64, %end: i64) attributes {no_inline, xhlo.parallel_body} {
    llvm.return
  }
  llvm.func internal @helper(%x: f32) -> f32 {
    %0 = llvm.call @expf(%x) : (f32) -> f32
    llvm.return %0 : f32
  }
  llvm.func @expf(f32) -> f32
  llvm.mlir.global internal constant @table(dense<1.0> : tensor<4xf32>) : !llvm.array<4 x f32>
}

// -----

// A body that reads a mutable global (here the parallel-for dispatch slot, as
// a nested parallel loop does) stays in part 0, and with nothing to move the
// module is left as it was.
// CHECK-LABEL: module {
// CHECK-NOT: xhlo.codegen
// CHECK: llvm.func internal @main_parallel_0
// CHECK-NOT: xhlo.codegen
module {
  llvm.mlir.global external @xhlo_parallel_dispatch() {addr_space = 0 : i32} : !llvm.ptr {
    %0 = llvm.mlir.zero : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
  llvm.func internal @main_parallel_0(%captures: !llvm.ptr, %begin: i64, %end: i64) attributes {no_inline, xhlo.parallel_body} {
    %slot = llvm.mlir.addressof @xhlo_parallel_dispatch : !llvm.ptr
    %dispatch = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    llvm.store %dispatch, %captures : !llvm.ptr, !llvm.ptr
    llvm.return
  }
}

// -----

// A body that calls a function keeping state in a mutable global (xhlo's cache of
// large allocations) moves: the function stays in part 0, made external, and the
// body calls it through a pointer global of its own part, which the JIT sets to
// part 0's function.
// CHECK-LABEL: module attributes {xhlo.codegen_parts = 2 : i32}
// CHECK-LABEL: llvm.func @alloc(%{{.*}}: i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func @main_parallel_0
// CHECK-SAME: xhlo.codegen_needs = [@xhlo_call_alloc_1]
// CHECK: %[[SLOT:.*]] = llvm.mlir.addressof @xhlo_call_alloc_1 : !llvm.ptr
// CHECK: %[[ALLOC:.*]] = llvm.load %[[SLOT]] {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[ROW:.*]] = llvm.call %[[ALLOC]](%{{.*}}) : !llvm.ptr, (i64) -> !llvm.ptr
// CHECK: llvm.store %{{.*}}, %[[ROW]]
// CHECK: llvm.mlir.global external @xhlo_call_alloc_1()
// CHECK-SAME: xhlo.codegen_part = 1 : i32
// CHECK-SAME: xhlo.link_to = "alloc"
module {
  llvm.mlir.global internal @cache() {addr_space = 0 : i32} : !llvm.ptr {
    %0 = llvm.mlir.zero : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
  llvm.func internal @alloc(%bytes: i64) -> !llvm.ptr attributes {no_inline} {
    %slot = llvm.mlir.addressof @cache : !llvm.ptr
    %block = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    llvm.return %block : !llvm.ptr
  }
  llvm.func internal @main_parallel_0(%captures: !llvm.ptr, %begin: i64, %end: i64) attributes {no_inline, xhlo.parallel_body} {
    %row = llvm.call @alloc(%end) : (i64) -> !llvm.ptr
    %one = llvm.mlir.constant(1.0 : f32) : f32
    %x = llvm.fadd %one, %one : f32
    llvm.store %x, %row : f32, !llvm.ptr
    llvm.return
  }
}

// -----

// Parts too small to pay for their set-up are not made (default min-part-cost).
// RUN: xhlo-opt %s --xhlo-partition-codegen=parts=2 --split-input-file | FileCheck %s --check-prefix=NOPART
// NOPART-NOT: xhlo.codegen_part
module {
  llvm.func internal @main_parallel_0(%captures: !llvm.ptr, %begin: i64, %end: i64) attributes {no_inline, xhlo.parallel_body} {
    llvm.return
  }
}

// RUN: xhlo-opt %s --xhlo-runtime-fast-path --split-input-file | FileCheck %s

// Each runtime call site's C-interface entry is defined: its descriptors go on the
// stack for the native fast path, and the Python callback runs only when that
// returns nonzero.

// CHECK-LABEL: llvm.func @caller
// CHECK: llvm.call @_mlir_ciface_xhlo_rt_op0(
// CHECK: llvm.call @_mlir_ciface_xhlo_rt_op1(
// CHECK: llvm.func @xhlo_rt_fast(i64, !llvm.ptr) -> i64
// CHECK: llvm.func @_mlir_ciface_xhlo_rt_slow_op0(!llvm.ptr, !llvm.ptr)
// CHECK-LABEL: llvm.func internal @_mlir_ciface_xhlo_rt_op0
// CHECK-SAME: (%[[D0:.*]]: !llvm.ptr, %[[D1:.*]]: !llvm.ptr)
// CHECK: %[[N:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK: %[[ARRAY:.*]] = llvm.alloca %[[N]] x !llvm.ptr
// CHECK: %[[AT0:.*]] = llvm.getelementptr %[[ARRAY]][0]
// CHECK: llvm.store %[[D0]], %[[AT0]]
// CHECK: %[[AT1:.*]] = llvm.getelementptr %[[ARRAY]][1]
// CHECK: llvm.store %[[D1]], %[[AT1]]
// CHECK: %[[K:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: %[[STATUS:.*]] = llvm.call @xhlo_rt_fast(%[[K]], %[[ARRAY]])
// CHECK: %[[DONE:.*]] = llvm.icmp "eq" %[[STATUS]]
// CHECK: llvm.cond_br %[[DONE]], ^[[RETURN:.*]], ^[[SLOW:[a-z0-9]+]]
// CHECK: ^[[SLOW]]:
// CHECK: llvm.call @_mlir_ciface_xhlo_rt_slow_op0(%[[D0]], %[[D1]])
// CHECK: llvm.func @_mlir_ciface_xhlo_rt_slow_op1(!llvm.ptr)
// CHECK-LABEL: llvm.func internal @_mlir_ciface_xhlo_rt_op1
// CHECK: llvm.mlir.constant(1 : i64) : i64
// CHECK: llvm.call @xhlo_rt_fast
// CHECK: llvm.call @_mlir_ciface_xhlo_rt_slow_op1
module {
  llvm.func @_mlir_ciface_xhlo_rt_op0(!llvm.ptr, !llvm.ptr) attributes {llvm.emit_c_interface, sym_visibility = "private"}
  llvm.func @_mlir_ciface_xhlo_rt_op1(!llvm.ptr) attributes {llvm.emit_c_interface, sym_visibility = "private"}
  llvm.func @caller(%a: !llvm.ptr, %b: !llvm.ptr) {
    llvm.call @_mlir_ciface_xhlo_rt_op0(%a, %b) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.call @_mlir_ciface_xhlo_rt_op1(%a) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// Without runtime calls nothing changes.

// CHECK-LABEL: llvm.func @no_runtime_calls
// CHECK-NOT: xhlo_rt_fast
module {
  llvm.func @no_runtime_calls() {
    llvm.return
  }
}

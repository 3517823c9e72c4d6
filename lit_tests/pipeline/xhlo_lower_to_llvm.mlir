// Stage 6 of xhlo.compile: scf/arith/math/memref -> the LLVM dialect, with a
// C interface (_mlir_ciface_) on public functions for the ExecutionEngine;
// the functions behind it are internal.
// RUN: xhlo-opt %s --xhlo-lower-to-llvm | FileCheck %s
// RUN: xhlo-opt %s -p 'builtin.module(xhlo-lower-to-llvm)' | FileCheck %s

// Scalar expm1 calls libm's expm1f (exact near zero).
// CHECK-DAG: llvm.func @expm1f(f32) -> f32
// CHECK-LABEL: llvm.func internal @main
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK: llvm.br
// CHECK: llvm.load
// CHECK: llvm.call @expm1f
// CHECK: llvm.store
// CHECK-LABEL: llvm.func @_mlir_ciface_main
// CHECK: llvm.call @main
// CHECK-NOT: scf.
// CHECK-NOT: memref.
// CHECK-NOT: arith.
func.func @main(%a: memref<4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = math.expm1 %x : f32
    memref.store %y, %out[%i] : memref<4xf32>
  }
  return
}

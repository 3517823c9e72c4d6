// --xhlo-compile-pipeline runs every stage of xhlo.compile: StableHLO in, the
// LLVM dialect out, the same as running the stages one after the other or
// the textual pipeline xhlo.pipeline_text() prints.
// RUN: xhlo-opt %s --xhlo-compile-pipeline -o %t.whole.mlir
// RUN: FileCheck %s --input-file %t.whole.mlir
// RUN: xhlo-opt %s --xhlo-stablehlo-prepare | xhlo-opt --xhlo-stablehlo-to-linalg | xhlo-opt --xhlo-fuse-and-vectorize \
// RUN:   | xhlo-opt --xhlo-bufferize | xhlo-opt --xhlo-lower-to-loops | xhlo-opt --xhlo-lower-to-llvm -o %t.staged.mlir
// RUN: diff %t.whole.mlir %t.staged.mlir
// RUN: xhlo-opt %s -p 'builtin.module(xhlo-stablehlo-prepare,xhlo-stablehlo-to-linalg,xhlo-fuse-and-vectorize,xhlo-bufferize,xhlo-lower-to-loops,xhlo-lower-to-llvm)' \
// RUN:   -o %t.named.mlir
// RUN: diff %t.whole.mlir %t.named.mlir
// RUN: %python -c "import xhlo; print(xhlo.pipeline_text())" > %t.pipeline
// RUN: xhlo-opt %s --pass-pipeline="%{readfile:%t.pipeline}" -o %t.text.mlir
// RUN: diff %t.whole.mlir %t.text.mlir

// CHECK-LABEL: llvm.func internal @main
// CHECK-SAME: attributes {llvm.emit_c_interface}
// The exp is vectorized and expanded into SIMD arithmetic (xhlo-vector-math).
// CHECK: llvm.intr.roundeven{{.*}}vector<3xf32>
// CHECK: llvm.intr.fma{{.*}}vector<3xf32>
// CHECK-NOT: llvm.intr.exp
// CHECK-LABEL: llvm.func @_mlir_ciface_main
// CHECK-NOT: stablehlo.
// CHECK-NOT: linalg.
func.func @main(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.exponential %a : tensor<2x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %1 = stablehlo.reduce(%0 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}

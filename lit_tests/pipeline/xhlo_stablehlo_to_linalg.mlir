// Stage 2 of xhlo.compile: StableHLO -> linalg/scf/arith on signless tensors.
// RUN: xhlo-opt %s --xhlo-stablehlo-to-linalg --split-input-file --verify-diagnostics | FileCheck %s
// RUN: xhlo-opt %s -p 'builtin.module(xhlo-stablehlo-to-linalg)' --split-input-file --verify-diagnostics \
// RUN:   | FileCheck %s

// Elementwise ops become linalg.generic; unsigned integers become signless.
// CHECK: #[[MAP:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xi8>) -> (tensor<3xf32>, tensor<3xi8>)
// CHECK: %[[TAN:.*]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[A]] : tensor<3xf32>)
// CHECK: math.tan
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[B]] : tensor<3xi8>, tensor<3xi8>)
// CHECK: arith.addi %{{.*}}, %{{.*}} : i8
// CHECK: return %[[TAN]], %[[SUM]] : tensor<3xf32>, tensor<3xi8>
// CHECK-NOT: stablehlo.
func.func @main(%a: tensor<3xf32>, %b: tensor<3xui8>) -> (tensor<3xf32>, tensor<3xui8>) {
  %0 = stablehlo.tan %a : tensor<3xf32>
  %1 = stablehlo.add %b, %b : tensor<3xui8>
  return %0, %1 : tensor<3xf32>, tensor<3xui8>
}

// -----

// Control flow becomes scf on tensors, with the ops inside lowered too.
// CHECK-LABEL: func.func @loop
// CHECK: scf.while
// CHECK: arith.cmpi slt
// CHECK: scf.condition
// CHECK: } do {
// CHECK: arith.addi
// CHECK: scf.yield
// CHECK-NOT: stablehlo.
func.func @loop(%n: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.while(%i = %n) : tensor<i32>
   cond {
    %c = stablehlo.constant dense<10> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %2 = stablehlo.add %i, %i : tensor<i32>
    stablehlo.return %2 : tensor<i32>
  }
  return %0 : tensor<i32>
}

// -----

// An op nothing lowered is reported by name (stage 1 lowers FFTs; this stage
// alone does not).
func.func @fft(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error@+1 {{xhlo-check-lowered: xhlo cannot lower 'stablehlo.fft' yet}}
  %0 = stablehlo.fft %a, type = FFT, length = [4] : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// RUN: xhlo-opt %s --xhlo-split-complex-dots="min-products=1" --split-input-file | FileCheck %s

// (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br): four real products
// with the product's dimension numbers.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xcomplex<f32>>, %[[B:.*]]: tensor<3x4xcomplex<f32>>)
// CHECK-DAG: %[[AR:.*]] = stablehlo.real %[[A]]
// CHECK-DAG: %[[AI:.*]] = stablehlo.imag %[[A]]
// CHECK-DAG: %[[BR:.*]] = stablehlo.real %[[B]]
// CHECK-DAG: %[[BI:.*]] = stablehlo.imag %[[B]]
// CHECK: %[[RR:.*]] = stablehlo.dot_general %[[AR]], %[[BR]], contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[II:.*]] = stablehlo.dot_general %[[AI]], %[[BI]]
// CHECK: %[[RE:.*]] = stablehlo.subtract %[[RR]], %[[II]]
// CHECK: %[[RI:.*]] = stablehlo.dot_general %[[AR]], %[[BI]]
// CHECK: %[[IR:.*]] = stablehlo.dot_general %[[AI]], %[[BR]]
// CHECK: %[[IM:.*]] = stablehlo.add %[[RI]], %[[IR]]
// CHECK: %[[C:.*]] = stablehlo.complex %[[RE]], %[[IM]]
// CHECK: return %[[C]]
func.func @matmul(%a: tensor<2x3xcomplex<f32>>, %b: tensor<3x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xcomplex<f32>>, tensor<3x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
  return %0 : tensor<2x4xcomplex<f32>>
}

// -----

// Real products stay.
// CHECK-LABEL: func.func @real
// CHECK-COUNT-1: stablehlo.dot_general
// CHECK-NOT: stablehlo.dot_general
func.func @real(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

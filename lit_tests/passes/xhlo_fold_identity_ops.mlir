// RUN: xhlo-opt %s --xhlo-fold-identity-ops --split-input-file | FileCheck %s

// Ops whose result type is their operand's are replaced by the operand.
// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[A:.*]]: tensor<ui64>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[A]], %[[B]], %[[B]], %[[B]]
func.func @identities(%a: tensor<ui64>, %b: tensor<2x3xf32>) -> (tensor<ui64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = stablehlo.reshape %a : (tensor<ui64>) -> tensor<ui64>
  %1 = stablehlo.transpose %b, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = stablehlo.broadcast_in_dim %b, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = stablehlo.convert %b : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<ui64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A transpose of a square matrix keeps its type but is no identity: kept.
// CHECK-LABEL: func.func @not_identities
// CHECK: stablehlo.transpose
// CHECK: stablehlo.reshape
func.func @not_identities(%b: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<9xf32>) {
  %0 = stablehlo.transpose %b, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %1 = stablehlo.reshape %b : (tensor<3x3xf32>) -> tensor<9xf32>
  return %0, %1 : tensor<3x3xf32>, tensor<9xf32>
}

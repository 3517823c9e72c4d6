// RUN: xhlo-opt %s --xhlo-expand-outer-products --split-input-file | FileCheck %s

// A batched outer product: each operand broadcast to the result (batch, lhs free,
// rhs free), converted to the result's element type first, then one multiply.
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[A:.*]]: tensor<5x3xi8>, %[[B:.*]]: tensor<3x4xi8>)
// CHECK-DAG: %[[CA:.*]] = stablehlo.convert %[[A]] : (tensor<5x3xi8>) -> tensor<5x3xi32>
// CHECK-DAG: %[[CB:.*]] = stablehlo.convert %[[B]] : (tensor<3x4xi8>) -> tensor<3x4xi32>
// CHECK: %[[BA:.*]] = stablehlo.broadcast_in_dim %[[CA]], dims = [1, 0] : (tensor<5x3xi32>) -> tensor<3x5x4xi32>
// CHECK: %[[BB:.*]] = stablehlo.broadcast_in_dim %[[CB]], dims = [0, 2] : (tensor<3x4xi32>) -> tensor<3x5x4xi32>
// CHECK: %[[M:.*]] = stablehlo.multiply %[[BA]], %[[BB]]
// CHECK-NOT: dot_general
// CHECK: return %[[M]]
func.func @batched(%a: tensor<5x3xi8>, %b: tensor<3x4xi8>) -> tensor<3x5x4xi32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [1] x [0], contracting_dims = [] x [] : (tensor<5x3xi8>, tensor<3x4xi8>) -> tensor<3x5x4xi32>
  return %0 : tensor<3x5x4xi32>
}

// -----

// Contractions and products of booleans stay.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-2: stablehlo.dot_general
func.func @kept(%a: tensor<5x3xf32>, %b: tensor<3x4xf32>, %p: tensor<2xi1>) -> (tensor<5x4xf32>, tensor<2x2xi1>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<5x3xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  %1 = stablehlo.dot_general %p, %p, contracting_dims = [] x [] : (tensor<2xi1>, tensor<2xi1>) -> tensor<2x2xi1>
  return %0, %1 : tensor<5x4xf32>, tensor<2x2xi1>
}

// RUN: xhlo-opt %s --xhlo-lower-concatenate="min-elements=8" --split-input-file | FileCheck %s

// Each operand is copied into its slice of the result (offsets along the dimension).
// CHECK-LABEL: func.func @columns
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK: %[[W0:.*]] = tensor.extract_slice %[[EMPTY]][0, 0] [2, 3] [1, 1]
// CHECK: %[[C0:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<2x3xf32>) outs(%[[W0]] : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[C0]] into %[[EMPTY]][0, 0] [2, 3] [1, 1]
// CHECK: %[[W1:.*]] = tensor.extract_slice %[[R0]][0, 3] [2, 5] [1, 1]
// CHECK: %[[C1:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<2x5xf32>) outs(%[[W1]] : tensor<2x5xf32>)
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[C1]] into %[[R0]][0, 3] [2, 5] [1, 1]
// CHECK-NOT: stablehlo.concatenate
// CHECK: return %[[R1]]
func.func @columns(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// An empty operand has no slice.
// CHECK-LABEL: func.func @empty_operand
// CHECK-COUNT-2: tensor.insert_slice
// CHECK-NOT: tensor.insert_slice
func.func @empty_operand(%a: tensor<4xi32>, %e: tensor<0xi32>, %b: tensor<4xi32>) -> tensor<8xi32> {
  %0 = stablehlo.concatenate %a, %e, %b, dim = 0 : (tensor<4xi32>, tensor<0xi32>, tensor<4xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// Small results (min-elements), unsigned elements and dynamic shapes keep the upstream lowering.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: stablehlo.concatenate
// CHECK-NOT: linalg.generic
func.func @kept(%a: tensor<2xf32>, %u: tensor<4xui8>, %d: tensor<?xf32>) -> (tensor<4xf32>, tensor<8xui8>, tensor<?xf32>) {
  %0 = stablehlo.concatenate %a, %a, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  %1 = stablehlo.concatenate %u, %u, dim = 0 : (tensor<4xui8>, tensor<4xui8>) -> tensor<8xui8>
  %2 = stablehlo.concatenate %d, %d, %d, %d, dim = 0 : (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<8xui8>, tensor<?xf32>
}

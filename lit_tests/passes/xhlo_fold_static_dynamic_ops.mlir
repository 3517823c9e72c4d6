// RUN: xhlo-opt %s --xhlo-fold-static-dynamic-ops --split-input-file | FileCheck %s

// A static result type fixes the shape: the runtime shape operand is unused.

// CHECK-LABEL: func.func @static_results
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<2x6xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<3xi32>, %[[S:[a-zA-Z0-9_]+]]: tensor<2xi32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.reshape %[[A]] : (tensor<2x6xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[BC:.*]] = stablehlo.broadcast_in_dim %[[B]], dims = [1] : (tensor<3xi32>) -> tensor<5x3xi32>
// CHECK-NEXT: %[[I:.*]] = stablehlo.iota dim = 1 : tensor<2x5xi64>
// CHECK-NEXT: return %[[R]], %[[BC]], %[[I]]
func.func @static_results(%a: tensor<2x6xf32>, %b: tensor<3xi32>, %s: tensor<2xi32>) -> (tensor<3x4xf32>, tensor<5x3xi32>, tensor<2x5xi64>) {
  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<2x6xf32>, tensor<2xi32>) -> tensor<3x4xf32>
  %1 = stablehlo.dynamic_broadcast_in_dim %b, %s, dims = [1] : (tensor<3xi32>, tensor<2xi32>) -> tensor<5x3xi32>
  %2 = stablehlo.dynamic_iota %s, dim = 1 : (tensor<2xi32>) -> tensor<2x5xi64>
  return %0, %1, %2 : tensor<3x4xf32>, tensor<5x3xi32>, tensor<2x5xi64>
}

// -----

// A dynamic result type stays for shape refinement.

// CHECK-LABEL: func.func @dynamic_result
// CHECK: stablehlo.dynamic_reshape
func.func @dynamic_result(%a: tensor<2x6xf32>, %s: tensor<2xi32>) -> tensor<?x4xf32> {
  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<2x6xf32>, tensor<2xi32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

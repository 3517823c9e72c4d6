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

// -----

// The size of a static dimension is a constant; a dynamic one stays.
// CHECK-LABEL: func.func @dimension_sizes
// CHECK-DAG: %[[C:.*]] = stablehlo.constant dense<4> : tensor<i32>
// CHECK-DAG: %[[D:.*]] = stablehlo.get_dimension_size %{{.*}}, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
// CHECK: return %[[C]], %[[D]]
func.func @dimension_sizes(%a: tensor<?x4xf32>) -> (tensor<i32>, tensor<i32>) {
  %0 = stablehlo.get_dimension_size %a, dim = 1 : (tensor<?x4xf32>) -> tensor<i32>
  %1 = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  return %0, %1 : tensor<i32>, tensor<i32>
}

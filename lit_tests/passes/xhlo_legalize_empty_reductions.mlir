// RUN: xhlo-opt %s --xhlo-legalize-empty-reductions --split-input-file | FileCheck %s

// Reducing no dimensions: the body combines the broadcast init with each element.
// CHECK-LABEL: func.func @no_dimensions
// CHECK-SAME: (%[[X:.*]]: tensor<127xi1>)
// CHECK: %[[INIT:.*]] = stablehlo.constant dense<false>
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %[[INIT]], dims = [] : (tensor<i1>) -> tensor<127xi1>
// CHECK: %[[M:.*]] = "stablehlo.map"(%[[B]], %[[X]])
// CHECK: stablehlo.or
// CHECK-NOT: stablehlo.reduce
// CHECK: return %[[M]]
func.func @no_dimensions(%x: tensor<127xi1>) -> tensor<127xi1> {
  %c = stablehlo.constant dense<false> : tensor<i1>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.or across dimensions = [] : (tensor<127xi1>, tensor<i1>) -> tensor<127xi1>
  return %0 : tensor<127xi1>
}

// -----

// Real reductions stay.
// CHECK-LABEL: func.func @sum
// CHECK: stablehlo.reduce
func.func @sum(%x: tensor<8xf32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

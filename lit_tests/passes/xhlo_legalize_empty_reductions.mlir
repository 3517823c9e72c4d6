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

// -----

// Reducing dimensions of extent 1 only (JAX's check of a gather's index vectors):
// the inputs reshaped to the result, then the body elementwise.
// CHECK-LABEL: func.func @unit_dimensions
// CHECK-SAME: (%[[X:.*]]: tensor<4x1x3x1xi1>)
// CHECK: %[[INIT:.*]] = stablehlo.constant dense<true>
// CHECK: %[[R:.*]] = stablehlo.reshape %[[X]] : (tensor<4x1x3x1xi1>) -> tensor<4x3xi1>
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %[[INIT]], dims = [] : (tensor<i1>) -> tensor<4x3xi1>
// CHECK: %[[M:.*]] = "stablehlo.map"(%[[B]], %[[R]])
// CHECK: stablehlo.and
// CHECK-NOT: stablehlo.reduce
// CHECK: return %[[M]]
func.func @unit_dimensions(%x: tensor<4x1x3x1xi1>) -> tensor<4x3xi1> {
  %c = stablehlo.constant dense<true> : tensor<i1>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.and across dimensions = [1, 3] : (tensor<4x1x3x1xi1>, tensor<i1>) -> tensor<4x3xi1>
  return %0 : tensor<4x3xi1>
}

// -----

// A dimension of extent 1 beside a longer one: a real reduction.
// CHECK-LABEL: func.func @mixed
// CHECK: stablehlo.reduce
func.func @mixed(%x: tensor<4x1x3xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1, 2] : (tensor<4x1x3xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Inputs without elements (two, as an argmax has): the init values, broadcast to the
// result's shape.
// CHECK-LABEL: func.func @no_elements
// CHECK-DAG: %[[V:.*]] = stablehlo.constant dense<0xFF800000> : tensor<f32>
// CHECK-DAG: %[[I:.*]] = stablehlo.constant dense<0> : tensor<i32>
// CHECK: %[[BV:.*]] = stablehlo.broadcast_in_dim %[[V]], dims = [] : (tensor<f32>) -> tensor<3xf32>
// CHECK: %[[BI:.*]] = stablehlo.broadcast_in_dim %[[I]], dims = [] : (tensor<i32>) -> tensor<3xi32>
// CHECK-NOT: stablehlo.reduce
// CHECK: return %[[BV]], %[[BI]]
func.func @no_elements(%x: tensor<0x3xf32>, %i: tensor<0x3xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %v0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%x init: %v0), (%i init: %i0) across dimensions = [0] : (tensor<0x3xf32>, tensor<0x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<i32>, %d: tensor<i32>) {
    %m = stablehlo.maximum %a, %b : tensor<f32>
    %n = stablehlo.maximum %c, %d : tensor<i32>
    stablehlo.return %m, %n : tensor<f32>, tensor<i32>
  }
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xi32>
}

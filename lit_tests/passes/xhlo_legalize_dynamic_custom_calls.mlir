// RUN: xhlo-opt %s --xhlo-legalize-dynamic-custom-calls --split-input-file | FileCheck %s

// A cumulative sum over a refined symbolic axis: the window operands are constants, so
// the call is a reduce_window of the shape its rule gives (5x16: a 5-long window, padded
// 4 below), its body a call of the reducer, converted back to the call's old type.
// CHECK-LABEL: func.func @cumsum
// CHECK: %[[W:.*]] = "stablehlo.reduce_window"(%arg0, %{{.*}}) <{base_dilations = array<i64: 1, 1>, padding = dense<{{\[\[}}4, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 5, 1>, window_strides = array<i64: 1, 1>}>
// CHECK: ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>):
// CHECK: %[[S:.*]] = func.call @reducer(%[[A]], %[[B]])
// CHECK: stablehlo.return %[[S]]
// CHECK: }) : (tensor<5x16xf32>, tensor<f32>) -> tensor<5x16xf32>
// CHECK: %[[C:.*]] = stablehlo.convert %[[W]] : (tensor<5x16xf32>) -> tensor<?x16xf32>
// CHECK-NOT: stablehlo.custom_call
// CHECK: return %[[C]]
// CHECK: func.func private @reducer
func.func @cumsum(%x: tensor<5x16xf32>) -> tensor<?x16xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %window = stablehlo.constant dense<[5, 1]> : tensor<2xi32>
  %ones = stablehlo.constant dense<1> : tensor<2xi32>
  %padding = stablehlo.constant dense<[[4, 0], [0, 0]]> : tensor<2x2xi32>
  %0 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%x, %zero, %window, %ones, %ones, %ones, %padding) {called_computations = [@reducer]} : (tensor<5x16xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
func.func @reducer(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %s = stablehlo.add %a, %b : tensor<f32>
  return %s : tensor<f32>
}

// -----

// Strides and dilations enter the shape rule: 9 elements, dilated by 2 (17), a window
// of 3 dilated by 2 (5), stride 3: 5 results.
// CHECK-LABEL: func.func @strided_window
// CHECK: "stablehlo.reduce_window"
// CHECK-SAME: base_dilations = array<i64: 2>, padding = dense<0> : tensor<1x2xi64>, window_dilations = array<i64: 2>, window_dimensions = array<i64: 3>, window_strides = array<i64: 3>
// CHECK: (tensor<9xf32>, tensor<f32>) -> tensor<5xf32>
func.func @strided_window(%x: tensor<9xf32>) -> tensor<?xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %window = stablehlo.constant dense<3> : tensor<1xi64>
  %two = stablehlo.constant dense<2> : tensor<1xi64>
  %padding = stablehlo.constant dense<0> : tensor<1x2xi64>
  %0 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%x, %zero, %window, %window, %two, %two, %padding) {called_computations = [@reducer]} : (tensor<9xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1x2xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @reducer(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %s = stablehlo.add %a, %b : tensor<f32>
  return %s : tensor<f32>
}

// -----

// The rbg PRNG with a constant output shape, and top_k with a constant k.
// CHECK-LABEL: func.func @random_and_top_k
// CHECK: %[[S:.*]], %[[B:.*]] = stablehlo.rng_bit_generator %arg0, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x4xui32>)
// CHECK: stablehlo.convert %[[B]] : (tensor<3x4xui32>) -> tensor<?x4xui32>
// CHECK: %[[V:.*]], %[[I:.*]] = chlo.top_k(%arg1, k = 2) : tensor<6x8xf32> -> (tensor<6x2xf32>, tensor<6x2xi32>)
// CHECK: stablehlo.convert %[[V]] : (tensor<6x2xf32>) -> tensor<6x?xf32>
// CHECK-NOT: stablehlo.custom_call
func.func @random_and_top_k(%state: tensor<2xui64>, %x: tensor<6x8xf32>) -> (tensor<?x4xui32>, tensor<6x?xf32>, tensor<6x?xi32>) {
  %shape = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %0:2 = stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator(%state, %shape) {rng_algorithm = #stablehlo<rng_algorithm DEFAULT>} : (tensor<2xui64>, tensor<2xi32>) -> (tensor<2xui64>, tensor<?x4xui32>)
  %k = stablehlo.constant dense<2> : tensor<i32>
  %1:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<6x8xf32>, tensor<i32>) -> (tensor<6x?xf32>, tensor<6x?xi32>)
  return %0#1, %1#0, %1#1 : tensor<?x4xui32>, tensor<6x?xf32>, tensor<6x?xi32>
}

// -----

// A shape operand known only at run time, or a dynamic operand: left for
// xhlo-legalize-custom-calls to reject.
// CHECK-LABEL: func.func @still_dynamic
// CHECK: stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator
// CHECK: stablehlo.custom_call @stablehlo.dynamic_top_k
func.func @still_dynamic(%state: tensor<2xui64>, %shape: tensor<2xi32>, %x: tensor<?x8xf32>) -> (tensor<?x4xui32>, tensor<?x2xf32>) {
  %0:2 = stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator(%state, %shape) {rng_algorithm = #stablehlo<rng_algorithm DEFAULT>} : (tensor<2xui64>, tensor<2xi32>) -> (tensor<2xui64>, tensor<?x4xui32>)
  %k = stablehlo.constant dense<2> : tensor<i32>
  %1:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<?x8xf32>, tensor<i32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
  return %0#1, %1#0 : tensor<?x4xui32>, tensor<?x2xf32>
}

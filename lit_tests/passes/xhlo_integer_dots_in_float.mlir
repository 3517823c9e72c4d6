// RUN: xhlo-opt %s --xhlo-integer-dots-in-float --split-input-file | FileCheck %s

// i8 x i8 -> i32 over K = 512: every partial sum is below 2^24, so f32 holds it exactly.
// CHECK-LABEL: func.func @int8
// CHECK-SAME: (%[[A:.*]]: tensor<4x512xi8>, %[[B:.*]]: tensor<512x8xi8>)
// CHECK: %[[FA:.*]] = stablehlo.convert %[[A]] : (tensor<4x512xi8>) -> tensor<4x512xf32>
// CHECK: %[[FB:.*]] = stablehlo.convert %[[B]] : (tensor<512x8xi8>) -> tensor<512x8xf32>
// CHECK: %[[P:.*]] = stablehlo.dot_general %[[FA]], %[[FB]], contracting_dims = [1] x [0] : (tensor<4x512xf32>, tensor<512x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[R:.*]] = stablehlo.convert %[[P]] : (tensor<4x8xf32>) -> tensor<4x8xi32>
// CHECK: return %[[R]]
func.func @int8(%a: tensor<4x512xi8>, %b: tensor<512x8xi8>) -> tensor<4x8xi32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x512xi8>, tensor<512x8xi8>) -> tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

// Past 2^24, f64.
// CHECK-LABEL: func.func @int8_long
// CHECK: stablehlo.dot_general {{.*}} -> tensor<2x2xf64>
func.func @int8_long(%a: tensor<2x2048xi8>, %b: tensor<2048x2xi8>) -> tensor<2x2xi32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2048xi8>, tensor<2048x2xi8>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// -----

// i32 sums wrap: the product stays integer.
// CHECK-LABEL: func.func @int32
// CHECK-NOT: stablehlo.convert
// CHECK: stablehlo.dot_general {{.*}} -> tensor<2x2xi32>
func.func @int32(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>) -> tensor<2x2xi32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

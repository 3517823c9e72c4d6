// RUN: xhlo-opt %s --xhlo-extend-integer-dot-operands --split-input-file | FileCheck %s

// Unsigned operands are converted (zero-extended) to the result type first.

// CHECK-LABEL: func.func @dot_unsigned
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<3x4xui8>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x5xi8>
// CHECK-NEXT: %[[WA:.*]] = stablehlo.convert %[[A]] : (tensor<3x4xui8>) -> tensor<3x4xi32>
// CHECK-NEXT: %[[WB:.*]] = stablehlo.convert %[[B]] : (tensor<4x5xi8>) -> tensor<4x5xi32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.dot_general %[[WA]], %[[WB]], contracting_dims = [1] x [0] : (tensor<3x4xi32>, tensor<4x5xi32>) -> tensor<3x5xi32>
// CHECK-NEXT: return %[[R]]
func.func @dot_unsigned(%a: tensor<3x4xui8>, %b: tensor<4x5xi8>) -> tensor<3x5xi32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x4xui8>, tensor<4x5xi8>) -> tensor<3x5xi32>
  return %0 : tensor<3x5xi32>
}

// -----

// Integer operands of a float result become floats (exact for ui8).

// CHECK-LABEL: func.func @convolution_to_float
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<1x6x1xui8>, %[[K:[a-zA-Z0-9_]+]]: tensor<3x1x1xui8>
// CHECK-NEXT: %[[WA:.*]] = stablehlo.convert %[[A]] : (tensor<1x6x1xui8>) -> tensor<1x6x1xf32>
// CHECK-NEXT: %[[WK:.*]] = stablehlo.convert %[[K]] : (tensor<3x1x1xui8>) -> tensor<3x1x1xf32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.convolution(%[[WA]], %[[WK]])
// CHECK-SAME: (tensor<1x6x1xf32>, tensor<3x1x1xf32>) -> tensor<1x4x1xf32>
func.func @convolution_to_float(%a: tensor<1x6x1xui8>, %k: tensor<3x1x1xui8>) -> tensor<1x4x1xf32> {
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x1xui8>, tensor<3x1x1xui8>) -> tensor<1x4x1xf32>
  return %0 : tensor<1x4x1xf32>
}

// -----

// Operands that already have the result type, and float operands, stay.

// CHECK-LABEL: func.func @unchanged
// CHECK-NOT: stablehlo.convert
// CHECK: stablehlo.dot_general
// CHECK-NOT: stablehlo.convert
// CHECK: stablehlo.dot_general
// CHECK-NOT: stablehlo.convert
func.func @unchanged(%a: tensor<3x4xi32>, %b: tensor<4x5xi32>, %c: tensor<3x4xbf16>) -> (tensor<3x5xi32>, tensor<3x3xf32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x4xi32>, tensor<4x5xi32>) -> tensor<3x5xi32>
  %1 = stablehlo.dot_general %c, %c, contracting_dims = [1] x [1] : (tensor<3x4xbf16>, tensor<3x4xbf16>) -> tensor<3x3xf32>
  return %0, %1 : tensor<3x5xi32>, tensor<3x3xf32>
}

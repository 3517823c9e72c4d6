// RUN: xhlo-opt %s --xhlo-fold-empty-tensors --split-input-file | FileCheck %s

// A slice starting at the end of a dimension and a padding removing a whole
// dimension yield no elements: empty constants.
// CHECK-LABEL: func.func @no_elements
// CHECK-NOT: stablehlo.slice
// CHECK-NOT: stablehlo.pad
// CHECK: %[[E0:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4x0xf32>
// CHECK: %[[E1:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4x0xf32>
// CHECK: return %[[E0]], %[[E1]]
func.func @no_elements(%x: tensor<4x2xf32>) -> (tensor<4x0xf32>, tensor<4x0xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.slice %x [0:4, 2:2] : (tensor<4x2xf32>) -> tensor<4x0xf32>
  %1 = stablehlo.pad %x, %zero, low = [0, -2], high = [0, 0], interior = [0, 0] : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x0xf32>
  return %0, %1 : tensor<4x0xf32>, tensor<4x0xf32>
}

// -----

// A concatenation drops its operands without elements; with one operand left it
// is that operand.
// CHECK-LABEL: func.func @concatenations
// CHECK-SAME: (%[[X:.*]]: tensor<4x2xf32>, %[[Y:.*]]: tensor<4x3xf32>)
// CHECK: %[[C:.*]] = stablehlo.concatenate %[[X]], %[[Y]], dim = 1 : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
// CHECK: return %[[X]], %[[C]]
func.func @concatenations(%x: tensor<4x2xf32>, %y: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x5xf32>) {
  %e = stablehlo.slice %x [0:4, 2:2] : (tensor<4x2xf32>) -> tensor<4x0xf32>
  %0 = stablehlo.concatenate %x, %e, dim = 1 : (tensor<4x2xf32>, tensor<4x0xf32>) -> tensor<4x2xf32>
  %1 = stablehlo.concatenate %e, %x, %e, %y, dim = 1 : (tensor<4x0xf32>, tensor<4x2xf32>, tensor<4x0xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<4x5xf32>
}

// -----

// A padding of nothing is the padding value, broadcast.
// CHECK-LABEL: func.func @padding_only
// CHECK-SAME: (%[[X:.*]]: tensor<4x2xf32>, %[[V:.*]]: tensor<f32>)
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %[[V]], dims = [] : (tensor<f32>) -> tensor<4x3xf32>
// CHECK: return %[[B]]
func.func @padding_only(%x: tensor<4x2xf32>, %v: tensor<f32>) -> tensor<4x3xf32> {
  %e = stablehlo.slice %x [0:4, 2:2] : (tensor<4x2xf32>) -> tensor<4x0xf32>
  %0 = stablehlo.pad %e, %v, low = [0, 2], high = [0, 1], interior = [0, 1] : (tensor<4x0xf32>, tensor<f32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Any element type: a complex one from two real ones (the bindings cannot hold a
// complex dense attribute).
// CHECK-LABEL: func.func @complex_elements
// CHECK: %[[RE:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<0x3xf32>
// CHECK: %[[IM:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<0x3xf32>
// CHECK: %[[E:.*]] = stablehlo.complex %[[RE]], %[[IM]] : tensor<0x3xcomplex<f32>>
// CHECK: return %[[E]]
func.func @complex_elements(%x: tensor<2x3xcomplex<f32>>) -> tensor<0x3xcomplex<f32>> {
  %0 = stablehlo.slice %x [2:2, 0:3] : (tensor<2x3xcomplex<f32>>) -> tensor<0x3xcomplex<f32>>
  return %0 : tensor<0x3xcomplex<f32>>
}

// -----

// Computations whose results hold nothing: a reduce_window whose window does not fit,
// a convolution whose kernel is larger than its input. Both become empty constants.
// CHECK-LABEL: func.func @empty_computations
// CHECK-NOT: stablehlo.reduce_window
// CHECK-NOT: stablehlo.convolution
// CHECK-DAG: %[[W:.*]] = stablehlo.constant dense<{{.*}}> : tensor<0x2xf32>
// CHECK-DAG: %[[C:.*]] = stablehlo.constant dense<{{.*}}> : tensor<1x0x0x4xf32>
// CHECK: return %[[W]], %[[C]]
func.func @empty_computations(%x: tensor<3x2xf32>, %image: tensor<1x2x2x3xf32>, %kernel: tensor<3x3x3x4xf32>) -> (tensor<0x2xf32>, tensor<1x0x0x4xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %z) <{window_dimensions = array<i64: 5, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<3x2xf32>, tensor<f32>) -> tensor<0x2xf32>
  %1 = stablehlo.convolution(%image, %kernel) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x0x0x4xf32>
  return %0, %1 : tensor<0x2xf32>, tensor<1x0x0x4xf32>
}

// RUN: xhlo-opt %s --xhlo-canonicalize-convolutions --split-input-file | FileCheck %s

// A convolution's input gradient as JAX exports it: the kernel's feature dims are
// swapped ([0, 1, o, i]). The kernel gets a transpose into HWIO; input and result
// are already NHWC.
// CHECK-LABEL: func.func @input_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<2x12x12x16xf32>, %[[K:.*]]: tensor<3x3x8x16xf32>)
// CHECK: %[[KT:.*]] = stablehlo.transpose %[[K]], dims = [0, 1, 3, 2] : (tensor<3x3x8x16xf32>) -> tensor<3x3x16x8xf32>
// CHECK: %[[Y:.*]] = stablehlo.convolution(%[[X]], %[[KT]]) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME: pad = {{\[\[}}1, 1], [1, 1]]
// CHECK: return %[[Y]]
func.func @input_gradient(%x: tensor<2x12x12x16xf32>, %k: tensor<3x3x8x16xf32>) -> tensor<2x12x12x8xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x12x12x16xf32>, tensor<3x3x8x16xf32>) -> tensor<2x12x12x8xf32>
  return %0 : tensor<2x12x12x8xf32>
}

// -----

// The weight gradient: batch and features of the activation swapped, the result in
// HWIO. Input and kernel are transposed in, the canonical result transposed back.
// CHECK-LABEL: func.func @weight_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<8x12x12x2xf32>, %[[G:.*]]: tensor<8x12x12x16xf32>)
// CHECK: %[[XT:.*]] = stablehlo.transpose %[[X]], dims = [3, 1, 2, 0] : (tensor<8x12x12x2xf32>) -> tensor<2x12x12x8xf32>
// CHECK: %[[GT:.*]] = stablehlo.transpose %[[G]], dims = [1, 2, 0, 3] : (tensor<8x12x12x16xf32>) -> tensor<12x12x8x16xf32>
// CHECK: %[[Y:.*]] = stablehlo.convolution(%[[XT]], %[[GT]]) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]{{.*}} -> tensor<2x3x3x16xf32>
// CHECK: %[[YT:.*]] = stablehlo.transpose %[[Y]], dims = [1, 2, 0, 3] : (tensor<2x3x3x16xf32>) -> tensor<3x3x2x16xf32>
// CHECK: return %[[YT]]
func.func @weight_gradient(%x: tensor<8x12x12x2xf32>, %g: tensor<8x12x12x16xf32>) -> tensor<3x3x2x16xf32> {
  %0 = stablehlo.convolution(%x, %g) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x12x12x2xf32>, tensor<8x12x12x16xf32>) -> tensor<3x3x2x16xf32>
  return %0 : tensor<3x3x2x16xf32>
}

// -----

// Left alone: the canonical layout, a grouped convolution of 4 channels a group, integers.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: stablehlo.transpose
// CHECK: return
func.func @left_alone(%x: tensor<2x12x12x16xf32>, %k: tensor<3x3x16x8xf32>, %kg: tensor<3x3x16x4xf32>, %xi: tensor<2x12x12x16xi32>, %ki: tensor<3x3x8x16xi32>)
    -> (tensor<2x12x12x8xf32>, tensor<2x12x12x16xf32>, tensor<2x12x12x8xi32>) {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x12x12x16xf32>, tensor<3x3x16x8xf32>) -> tensor<2x12x12x8xf32>
  %1 = stablehlo.convolution(%x, %kg) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 4 : i64} : (tensor<2x12x12x16xf32>, tensor<3x3x16x4xf32>) -> tensor<2x12x12x16xf32>
  %2 = stablehlo.convolution(%xi, %ki) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x12x12x16xi32>, tensor<3x3x8x16xi32>) -> tensor<2x12x12x8xi32>
  return %0, %1, %2 : tensor<2x12x12x8xf32>, tensor<2x12x12x16xf32>, tensor<2x12x12x8xi32>
}

// -----

// A transposed convolution (the input gradient of a stride-2 convolution) splits
// by output phase: for each (row, column) residue of the outputs, the kernel taps
// that meet input elements (every second one, from tap 1 or 0) convolve the
// undilated input; the four results interleave by concatenation and reshape.
// No zeros are multiplied and no input dilation is left.
// CHECK-LABEL: func.func @transposed
// CHECK-SAME: (%[[G:.*]]: tensor<2x6x6x16xf32>, %[[K:.*]]: tensor<3x3x8x16xf32>)
// CHECK: %[[KT:.*]] = stablehlo.transpose %[[K]], dims = [0, 1, 3, 2]
// CHECK: %[[K00:.*]] = stablehlo.slice %[[KT]] [1:2:2, 1:2:2, 0:16, 0:8]
// CHECK: stablehlo.convolution(%[[G]], %[[K00]]) {{.*}} window = {pad = {{\[\[}}0, 0], [0, 0]]} {{.*}} -> tensor<2x6x6x8xf32>
// CHECK: %[[K01:.*]] = stablehlo.slice %[[KT]] [1:2:2, 0:3:2, 0:16, 0:8]
// CHECK: stablehlo.convolution(%[[G]], %[[K01]]) {{.*}} window = {pad = {{\[\[}}0, 0], [0, 1]]}
// CHECK: stablehlo.concatenate {{.*}} dim = 3 : {{.*}} -> tensor<2x6x6x2x8xf32>
// CHECK: %[[K10:.*]] = stablehlo.slice %[[KT]] [0:3:2, 1:2:2, 0:16, 0:8]
// CHECK: %[[K11:.*]] = stablehlo.slice %[[KT]] [0:3:2, 0:3:2, 0:16, 0:8]
// CHECK: stablehlo.convolution(%[[G]], %[[K11]]) {{.*}} window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK: %[[ROWS:.*]] = stablehlo.concatenate {{.*}} dim = 2 : {{.*}} -> tensor<2x6x2x12x8xf32>
// CHECK: %[[Y:.*]] = stablehlo.reshape %[[ROWS]] : (tensor<2x6x2x12x8xf32>) -> tensor<2x12x12x8xf32>
// CHECK: return %[[Y]]
// CHECK-NOT: lhs_dilate
func.func @transposed(%g: tensor<2x6x6x16xf32>, %k: tensor<3x3x8x16xf32>) -> tensor<2x12x12x8xf32> {
  %0 = stablehlo.convolution(%g, %k) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {pad = [[1, 2], [1, 2]], lhs_dilate = [2, 2]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x6x6x16xf32>, tensor<3x3x8x16xf32>) -> tensor<2x12x12x8xf32>
  return %0 : tensor<2x12x12x8xf32>
}

// -----

// A preferred result type wider than the operands' (bf16 x bf16 -> f32) is kept.
// CHECK-LABEL: func.func @preferred_result_type
// CHECK: stablehlo.convolution
// CHECK-SAME: (tensor<2x12x12x16xbf16>, tensor<3x3x16x8xbf16>) -> tensor<2x12x12x8xf32>
// CHECK: return {{.*}} : tensor<2x8x12x12xf32>
func.func @preferred_result_type(%x: tensor<2x12x12x16xbf16>, %k: tensor<8x16x3x3xbf16>) -> tensor<2x8x12x12xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x12x12x16xbf16>, tensor<8x16x3x3xbf16>) -> tensor<2x8x12x12xf32>
  return %0 : tensor<2x8x12x12xf32>
}

// -----

// A 1-D convolution: a unit spatial dimension inserted before each operand's
// spatial one (reshapes), the window attributes given a unit entry first; NWC x
// WIO is then N1WC x 1WIO, already canonical.
// CHECK-LABEL: func.func @one_dimensional
// CHECK-SAME: (%[[X:.*]]: tensor<2x100x16xf32>, %[[K:.*]]: tensor<5x16x24xf32>)
// CHECK-DAG: %[[X2:.*]] = stablehlo.reshape %[[X]] : (tensor<2x100x16xf32>) -> tensor<2x1x100x16xf32>
// CHECK-DAG: %[[K2:.*]] = stablehlo.reshape %[[K]] : (tensor<5x16x24xf32>) -> tensor<1x5x16x24xf32>
// CHECK: %[[Y:.*]] = stablehlo.convolution(%[[X2]], %[[K2]]) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME: stride = [1, 2], pad = {{\[\[}}0, 0], [2, 2]], lhs_dilate = [1, 1], rhs_dilate = [1, 2]
// CHECK: %[[R:.*]] = stablehlo.reshape %[[Y]] : (tensor<2x1x48x24xf32>) -> tensor<2x48x24xf32>
// CHECK: return %[[R]]
func.func @one_dimensional(%x: tensor<2x100x16xf32>, %k: tensor<5x16x24xf32>) -> tensor<2x48x24xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [2], pad = [[2, 2]], rhs_dilate = [2]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x100x16xf32>, tensor<5x16x24xf32>) -> tensor<2x48x24xf32>
  return %0 : tensor<2x48x24xf32>
}

// -----

// Two groups of 8 input channels: one convolution per group on its slices of the
// input features and the kernel's output features, concatenated.
// CHECK-LABEL: func.func @grouped
// CHECK-SAME: (%[[X:.*]]: tensor<2x6x6x16xf32>, %[[K:.*]]: tensor<3x3x8x24xf32>)
// CHECK-DAG: %[[X0:.*]] = stablehlo.slice %[[X]] [0:2, 0:6, 0:6, 0:8]
// CHECK-DAG: %[[K0:.*]] = stablehlo.slice %[[K]] [0:3, 0:3, 0:8, 0:12]
// CHECK: %[[Y0:.*]] = stablehlo.convolution(%[[X0]], %[[K0]]) {{.*}} feature_group_count = 1 : i64} : (tensor<2x6x6x8xf32>, tensor<3x3x8x12xf32>) -> tensor<2x6x6x12xf32>
// CHECK-DAG: %[[X1:.*]] = stablehlo.slice %[[X]] [0:2, 0:6, 0:6, 8:16]
// CHECK-DAG: %[[K1:.*]] = stablehlo.slice %[[K]] [0:3, 0:3, 0:8, 12:24]
// CHECK: %[[Y1:.*]] = stablehlo.convolution(%[[X1]], %[[K1]])
// CHECK: %[[Y:.*]] = stablehlo.concatenate %[[Y0]], %[[Y1]], dim = 3
// CHECK: return %[[Y]]
func.func @grouped(%x: tensor<2x6x6x16xf32>, %k: tensor<3x3x8x24xf32>) -> tensor<2x6x6x24xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<2x6x6x16xf32>, tensor<3x3x8x24xf32>) -> tensor<2x6x6x24xf32>
  return %0 : tensor<2x6x6x24xf32>
}

// -----

// Depthwise (one channel a group): kept.
// CHECK-LABEL: func.func @depthwise
// CHECK: feature_group_count = 16
func.func @depthwise(%x: tensor<2x6x6x16xf32>, %k: tensor<3x3x1x16xf32>) -> tensor<2x6x6x16xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 16 : i64} : (tensor<2x6x6x16xf32>, tensor<3x3x1x16xf32>) -> tensor<2x6x6x16xf32>
  return %0 : tensor<2x6x6x16xf32>
}

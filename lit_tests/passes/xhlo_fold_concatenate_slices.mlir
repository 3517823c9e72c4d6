// RUN: xhlo-opt %s --xhlo-fold-concatenate-slices --split-input-file | FileCheck %s

// jnp.pad(x, 2, mode="reflect") of a vector: the border slice taken from the first
// concatenation reads x itself, and the concatenation, read by nothing else then,
// is spliced into the second one.
// CHECK-LABEL: func.func @reflect
// CHECK-SAME: (%[[X:.*]]: tensor<10xf32>)
// CHECK: %[[L:.*]] = stablehlo.reverse
// CHECK: %[[S:.*]] = stablehlo.slice %[[X]] [7:9] : (tensor<10xf32>) -> tensor<2xf32>
// CHECK: %[[R:.*]] = stablehlo.reverse %[[S]]
// CHECK: %[[C:.*]] = stablehlo.concatenate %[[L]], %[[X]], %[[R]], dim = 0 : (tensor<2xf32>, tensor<10xf32>, tensor<2xf32>) -> tensor<14xf32>
// CHECK-NOT: stablehlo.concatenate
// CHECK: return %[[C]]
func.func @reflect(%x: tensor<10xf32>) -> tensor<14xf32> {
  %0 = stablehlo.slice %x [1:3] : (tensor<10xf32>) -> tensor<2xf32>
  %1 = stablehlo.reverse %0, dims = [0] : tensor<2xf32>
  %2 = stablehlo.concatenate %1, %x, dim = 0 : (tensor<2xf32>, tensor<10xf32>) -> tensor<12xf32>
  %3 = stablehlo.slice %2 [9:11] : (tensor<12xf32>) -> tensor<2xf32>
  %4 = stablehlo.reverse %3, dims = [0] : tensor<2xf32>
  %5 = stablehlo.concatenate %2, %4, dim = 0 : (tensor<12xf32>, tensor<2xf32>) -> tensor<14xf32>
  return %5 : tensor<14xf32>
}

// -----

// Kept: a slice across two operands, a nested concatenation read elsewhere too, and
// one along another dimension.
// CHECK-LABEL: func.func @kept
// CHECK: %[[IN:.*]] = stablehlo.concatenate %arg0, %arg1, dim = 1
// CHECK: stablehlo.slice %[[IN]] [0:2, 2:5]
// CHECK: stablehlo.concatenate %[[IN]], %arg1, dim = 1
// CHECK: stablehlo.concatenate %[[IN]], %[[IN]], dim = 0
func.func @kept(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x9xf32>, tensor<4x6xf32>) {
  %in = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %s = stablehlo.slice %in [0:2, 2:5] : (tensor<2x6xf32>) -> tensor<2x3xf32>
  %c = stablehlo.concatenate %in, %b, dim = 1 : (tensor<2x6xf32>, tensor<2x3xf32>) -> tensor<2x9xf32>
  %d = stablehlo.concatenate %in, %in, dim = 0 : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<4x6xf32>
  return %s, %c, %d : tensor<2x3xf32>, tensor<2x9xf32>, tensor<4x6xf32>
}

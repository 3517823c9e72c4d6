// RUN: xhlo-opt %s --xhlo-linearize-point-gathers --canonicalize --split-input-file | FileCheck %s

// x[rows, cols]: each column clamped to its dimension and scaled by its stride, the
// sum gathered from the flattened operand; the concatenation is gone.
// CHECK-LABEL: func.func @rows_and_cols
// CHECK-SAME: (%[[X:.*]]: tensor<8x5xf32>, %[[R:.*]]: tensor<100x1xi32>, %[[C:.*]]: tensor<100x1xi32>)
// CHECK-NOT: stablehlo.concatenate
// CHECK-DAG: %[[R1:.*]] = stablehlo.reshape %[[R]] : (tensor<100x1xi32>) -> tensor<100xi32>
// CHECK-DAG: %[[RC:.*]] = stablehlo.clamp %{{.*}}, %[[R1]], %{{.*}} : tensor<100xi32>
// CHECK-DAG: %[[RS:.*]] = stablehlo.multiply %[[RC]], %{{.*}} : tensor<100xi32>
// CHECK-DAG: %[[CC:.*]] = stablehlo.clamp
// CHECK: %[[I:.*]] = stablehlo.add %[[RS]], %[[CC]] : tensor<100xi32>
// CHECK: %[[FLAT:.*]] = stablehlo.reshape %[[X]] : (tensor<8x5xf32>) -> tensor<40xf32>
// CHECK: "stablehlo.gather"(%[[FLAT]], %[[I]])
// CHECK-SAME: collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1
// CHECK-SAME: slice_sizes = array<i64: 1>
func.func @rows_and_cols(%x: tensor<8x5xf32>, %r: tensor<100x1xi32>, %c: tensor<100x1xi32>) -> tensor<100xf32> {
  %idx = stablehlo.concatenate %r, %c, dim = 1 : (tensor<100x1xi32>, tensor<100x1xi32>) -> tensor<100x2xi32>
  %0 = "stablehlo.gather"(%x, %idx) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1],
      start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}>
      : (tensor<8x5xf32>, tensor<100x2xi32>) -> tensor<100xf32>
  return %0 : tensor<100xf32>
}

// -----

// Rows of a matrix (slice_sizes 1 x 5: not single elements): untouched.
// CHECK-LABEL: func.func @rows
// CHECK: stablehlo.concatenate
// CHECK: "stablehlo.gather"(%{{.*}}, %{{.*}})
func.func @rows(%x: tensor<8x5xf32>, %r: tensor<100x1xi32>, %c: tensor<100x1xi32>) -> tensor<100x5xf32> {
  %idx = stablehlo.concatenate %r, %c, dim = 1 : (tensor<100x1xi32>, tensor<100x1xi32>) -> tensor<100x2xi32>
  %0 = "stablehlo.gather"(%x, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
      start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 5>}>
      : (tensor<8x5xf32>, tensor<100x2xi32>) -> tensor<100x5xf32>
  return %0 : tensor<100x5xf32>
}

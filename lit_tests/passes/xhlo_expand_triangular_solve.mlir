// RUN: xhlo-opt %s --xhlo-expand-triangular-solve --split-input-file --verify-diagnostics | FileCheck %s

// Left side, lower: mask a to its lower triangle, then forward substitution,
// one row of x per step for all right-hand sides (batched dot with the rows
// solved so far; the others are still zero).

// CHECK-LABEL: func.func @left_lower
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<2x3x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<2x3x4xf32>
// CHECK: %[[ROWS:.*]] = stablehlo.iota dim = 1 : tensor<2x3x3xi32>
// CHECK: %[[COLS:.*]] = stablehlo.iota dim = 2 : tensor<2x3x3xi32>
// CHECK: %[[IN_TRIANGLE:.*]] = stablehlo.compare LE, %[[COLS]], %[[ROWS]]
// CHECK: %[[M:.*]] = stablehlo.select %[[IN_TRIANGLE]], %[[A]], %{{.*}}
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0> : tensor<i32>
// CHECK: %[[X0:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<2x3x4xf32>
// CHECK: %[[LOOP:.*]]:2 = stablehlo.while(%[[I:.*]] = %[[ZERO]], %[[X:.*]] = %[[X0]])
// CHECK: do
// CHECK: %[[MROW:.*]] = stablehlo.dynamic_slice %[[M]], %[[ZERO]], %[[I]], %[[ZERO]], sizes = [2, 1, 3]
// CHECK: %[[KNOWN:.*]] = stablehlo.dot_general %[[MROW]], %[[X]], batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x1x3xf32>, tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
// CHECK: %[[BROW:.*]] = stablehlo.dynamic_slice %[[B]], %[[ZERO]], %[[I]], %[[ZERO]], sizes = [2, 1, 4]
// CHECK: %[[REST:.*]] = stablehlo.subtract %[[BROW]], %[[KNOWN]]
// CHECK: %[[DIAG:.*]] = stablehlo.dynamic_slice %[[M]], %[[ZERO]], %[[I]], %[[I]], sizes = [2, 1, 1]
// CHECK: %[[DIAGS:.*]] = stablehlo.broadcast_in_dim %[[DIAG]], dims = [0, 1, 2] : (tensor<2x1x1xf32>) -> tensor<2x1x4xf32>
// CHECK: %[[XROW:.*]] = stablehlo.divide %[[REST]], %[[DIAGS]]
// CHECK: %[[UPDATED:.*]] = stablehlo.dynamic_update_slice %[[X]], %[[XROW]], %[[ZERO]], %[[I]], %[[ZERO]]
// CHECK: %[[NEXT:.*]] = stablehlo.add %[[I]], %{{.*}}
// CHECK: stablehlo.return %[[NEXT]], %[[UPDATED]]
// CHECK: return %[[LOOP]]#1
// CHECK-NOT: stablehlo.triangular_solve
func.func @left_lower(%a: tensor<2x3x3xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Right side: x a^T = b is a x^T = b^T, solved on transposed b (a stays upper,
// so backward substitution from row n-1). Unit diagonal: ones on the diagonal,
// no division.

// CHECK-LABEL: func.func @right_upper_transpose_unit
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<3x3xf64>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf64>
// CHECK: %[[BT:.*]] = stablehlo.transpose %[[B]], dims = [1, 0] : (tensor<4x3xf64>) -> tensor<3x4xf64>
// CHECK: %[[ROWS:.*]] = stablehlo.iota dim = 0
// CHECK: %[[COLS:.*]] = stablehlo.iota dim = 1
// CHECK: stablehlo.compare GE, %[[COLS]], %[[ROWS]]
// CHECK: %[[MASKED:.*]] = stablehlo.select
// CHECK: %[[ON_DIAG:.*]] = stablehlo.compare EQ, %[[ROWS]], %[[COLS]]
// CHECK: %[[ONES:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<3x3xf64>
// CHECK: %[[M:.*]] = stablehlo.select %[[ON_DIAG]], %[[ONES]], %[[MASKED]]
// CHECK: %[[LOOP:.*]]:2 = stablehlo.while(%[[S:.*]] = %{{.*}}, %[[X:.*]] = %{{.*}})
// CHECK: do
// CHECK: %[[LAST:.*]] = stablehlo.constant dense<2> : tensor<i32>
// CHECK: %[[ROW:.*]] = stablehlo.subtract %[[LAST]], %[[S]]
// CHECK: %[[MROW:.*]] = stablehlo.dynamic_slice %[[M]], %[[ROW]], %{{.*}}, sizes = [1, 3]
// CHECK: stablehlo.dot_general %[[MROW]], %[[X]], contracting_dims = [1] x [0]
// CHECK: stablehlo.dynamic_slice %[[BT]], %[[ROW]]
// CHECK-NOT: stablehlo.divide
// CHECK: stablehlo.dynamic_update_slice %[[X]], %{{.*}}, %[[ROW]]
// CHECK: %[[XT:.*]] = stablehlo.transpose %[[LOOP]]#1, dims = [1, 0] : (tensor<3x4xf64>) -> tensor<4x3xf64>
// CHECK: return %[[XT]]
func.func @right_upper_transpose_unit(%a: tensor<3x3xf64>, %b: tensor<4x3xf64>) -> tensor<4x3xf64> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = false, lower = false, unit_diagonal = true, transpose_a = #stablehlo<transpose TRANSPOSE>} : (tensor<3x3xf64>, tensor<4x3xf64>) -> tensor<4x3xf64>
  return %0 : tensor<4x3xf64>
}

// -----

func.func @dynamic_batch(%a: tensor<?x4x4xf32>, %b: tensor<?x4x2xf32>) -> tensor<?x4x2xf32> {
  // expected-error@+1 {{xhlo-expand-triangular-solve: 'stablehlo.triangular_solve' needs static shapes, got tensor<?x4x4xf32>}}
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<?x4x4xf32>, tensor<?x4x2xf32>) -> tensor<?x4x2xf32>
  return %0 : tensor<?x4x2xf32>
}

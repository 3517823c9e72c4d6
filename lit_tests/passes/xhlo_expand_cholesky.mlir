// RUN: xhlo-opt %s --xhlo-expand-cholesky --split-input-file --verify-diagnostics | FileCheck %s

// Lower factor of a batch: one while loop over the columns, starting from zeros.
// Step j: column j of A minus L @ L[j, :]^T, square root of the pivot, the rows
// below divided by it, the rows above zero.

// CHECK-LABEL: func.func @lower_batched
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<2x3x3xf32>
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0> : tensor<i32>
// CHECK: %[[INIT:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<2x3x3xf32>
// CHECK: %[[LOOP:.*]]:2 = stablehlo.while(%[[J:.*]] = %[[ZERO]], %[[L:.*]] = %[[INIT]])
// CHECK: cond
// CHECK: %[[N:.*]] = stablehlo.constant dense<3> : tensor<i32>
// CHECK: stablehlo.compare LT, %[[J]], %[[N]]
// CHECK: do
// CHECK: %[[ROW:.*]] = stablehlo.dynamic_slice %[[L]], %[[ZERO]], %[[J]], %[[ZERO]], sizes = [2, 1, 3]
// CHECK: %[[PROJ:.*]] = stablehlo.dot_general %[[L]], %[[ROW]], batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<2x3x3xf32>, tensor<2x1x3xf32>) -> tensor<2x3x1xf32>
// CHECK: %[[COL:.*]] = stablehlo.dynamic_slice %[[A]], %[[ZERO]], %[[ZERO]], %[[J]], sizes = [2, 3, 1]
// CHECK: %[[RES:.*]] = stablehlo.subtract %[[COL]], %[[PROJ]]
// CHECK: %[[PIVOT:.*]] = stablehlo.dynamic_slice %[[RES]], %[[ZERO]], %[[J]], %[[ZERO]], sizes = [2, 1, 1]
// CHECK: %[[ROOT:.*]] = stablehlo.sqrt %[[PIVOT]]
// CHECK: %[[ROOTS:.*]] = stablehlo.broadcast_in_dim %[[ROOT]], dims = [0, 1, 2] : (tensor<2x1x1xf32>) -> tensor<2x3x1xf32>
// CHECK: %[[ROWS:.*]] = stablehlo.iota dim = 1 : tensor<2x3x1xi32>
// CHECK: %[[JS:.*]] = stablehlo.broadcast_in_dim %[[J]], dims = []
// CHECK: %[[BELOW:.*]] = stablehlo.compare GT, %[[ROWS]], %[[JS]]
// CHECK: %[[SCALED:.*]] = stablehlo.divide %[[RES]], %[[ROOTS]]
// CHECK: %[[MASKED:.*]] = stablehlo.select %[[BELOW]], %[[SCALED]], %{{.*}}
// CHECK: %[[DIAG:.*]] = stablehlo.compare EQ, %[[ROWS]], %[[JS]]
// CHECK: %[[NEWCOL:.*]] = stablehlo.select %[[DIAG]], %[[ROOTS]], %[[MASKED]]
// CHECK: %[[UPDATED:.*]] = stablehlo.dynamic_update_slice %[[L]], %[[NEWCOL]], %[[ZERO]], %[[ZERO]], %[[J]]
// CHECK: %[[NEXT:.*]] = stablehlo.add %[[J]], %{{.*}}
// CHECK: stablehlo.return %[[NEXT]], %[[UPDATED]]
// CHECK: return %[[LOOP]]#1
// CHECK-NOT: stablehlo.cholesky
func.func @lower_batched(%a: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %0 = stablehlo.cholesky %a, lower = true : tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}

// -----

// Upper (the default): factor conj(A^T) and return conj(L^T). Complex rows are
// conjugated in the projection and the pivot's real part is square-rooted.

// CHECK-LABEL: func.func @upper_complex
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<3x3xcomplex<f64>>
// CHECK: %[[AT:.*]] = stablehlo.transpose %[[A]], dims = [1, 0]
// CHECK: %[[RE:.*]] = stablehlo.real %[[AT]]
// CHECK: %[[IM:.*]] = stablehlo.imag %[[AT]]
// CHECK: %[[NEG:.*]] = stablehlo.negate %[[IM]]
// CHECK: %[[AH:.*]] = stablehlo.complex %[[RE]], %[[NEG]]
// CHECK: %[[LOOP:.*]]:2 = stablehlo.while
// CHECK: do
// CHECK: stablehlo.imag
// CHECK: stablehlo.negate
// CHECK: %[[CONJ_ROW:.*]] = stablehlo.complex
// CHECK: stablehlo.dot_general %{{.*}}, %[[CONJ_ROW]], contracting_dims = [1] x [1]
// CHECK: stablehlo.dynamic_slice %[[AH]]
// CHECK: %[[PIVOT_RE:.*]] = stablehlo.real %{{.*}} : (tensor<1x1xcomplex<f64>>) -> tensor<1x1xf64>
// CHECK: stablehlo.sqrt %[[PIVOT_RE]] : tensor<1x1xf64>
// CHECK: %[[T:.*]] = stablehlo.transpose %[[LOOP]]#1, dims = [1, 0]
// CHECK: stablehlo.imag %[[T]]
// CHECK: %[[U:.*]] = stablehlo.complex
// CHECK: return %[[U]]
func.func @upper_complex(%a: tensor<3x3xcomplex<f64>>) -> tensor<3x3xcomplex<f64>> {
  %0 = stablehlo.cholesky %a : tensor<3x3xcomplex<f64>>
  return %0 : tensor<3x3xcomplex<f64>>
}

// -----

func.func @dynamic_batch(%a: tensor<?x4x4xf32>) -> tensor<?x4x4xf32> {
  // expected-error@+1 {{xhlo-expand-cholesky: 'stablehlo.cholesky' needs a statically shaped operand, got tensor<?x4x4xf32>}}
  %0 = stablehlo.cholesky %a, lower = true : tensor<?x4x4xf32>
  return %0 : tensor<?x4x4xf32>
}

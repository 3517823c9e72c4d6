// RUN: xhlo-opt %s --xhlo-legalize-lapack-custom-calls --split-input-file --verify-diagnostics | FileCheck %s

// potrf: stablehlo.cholesky in the selected triangle, the input in the other
// (as LAPACK leaves it); info counts from 1 to the first non-positive pivot.
// CHECK-LABEL: func.func @potrf_lower
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<2x3x3xf32>
// CHECK: %[[L:.*]] = stablehlo.cholesky %[[A]], lower = true : tensor<2x3x3xf32>
// CHECK: %[[ROWS:.*]] = stablehlo.iota dim = 1 : tensor<2x3x3xi32>
// CHECK: %[[COLS:.*]] = stablehlo.iota dim = 2 : tensor<2x3x3xi32>
// CHECK: %[[LOWER:.*]] = stablehlo.compare GE, %[[ROWS]], %[[COLS]]
// CHECK: %[[FACTOR:.*]] = stablehlo.select %[[LOWER]], %[[L]], %[[A]]
// CHECK: %[[FIRST:.*]] = stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.minimum across dimensions = [1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
// CHECK: %[[INFO:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<2xi1>, tensor<2xi32>
// CHECK: return %[[FACTOR]], %[[INFO]] : tensor<2x3x3xf32>, tensor<2xi32>
// CHECK-NOT: custom_call
func.func @potrf_lower(%a: tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2xi32>) {
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}} : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2xi32>)
  return %0#0, %0#1 : tensor<2x3x3xf32>, tensor<2xi32>
}

// -----

// trsm: the character arguments become triangular_solve attributes
// (side R -> left_side false, uplo U -> lower false, trans_x C -> ADJOINT, diag U -> unit).
// CHECK-LABEL: func.func @trsm_right_upper_adjoint_unit
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<3x3xcomplex<f32>>, %[[B:[a-zA-Z0-9_]+]]: tensor<2x3xcomplex<f32>>
// CHECK: %[[X:.*]] = "stablehlo.triangular_solve"(%[[A]], %[[B]]) <{left_side = false, lower = false, transpose_a = #stablehlo<transpose ADJOINT>, unit_diagonal = true}>
// CHECK: return %[[X]]
func.func @trsm_right_upper_adjoint_unit(%a: tensor<3x3xcomplex<f32>>, %b: tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>> {
  %0 = stablehlo.custom_call @lapack_ctrsm_ffi(%a, %b) {mhlo.backend_config = {diag = 85 : ui8, side = 82 : ui8, trans_x = 67 : ui8, uplo = 85 : ui8}} : (tensor<3x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>
  return %0 : tensor<2x3xcomplex<f32>>
}

// -----

// getrf: one while loop over min(m, n) columns carrying (step, LU, ipiv, info);
// the pivot row is the first of largest magnitude, stored 1-based.
// CHECK-LABEL: func.func @getrf
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[LOOP:.*]]:4 = stablehlo.while(%[[K:.*]] = %{{.*}}, %[[LU:.*]] = %[[A]], %[[IPIV:.*]] = %{{.*}}, %[[INFO:.*]] = %{{.*}}) : tensor<i32>, tensor<4x3xf32>, tensor<3xi32>, tensor<i32>
// CHECK: cond
// CHECK: %[[STEPS:.*]] = stablehlo.constant dense<3> : tensor<i32>
// CHECK: stablehlo.compare LT, %[[K]], %[[STEPS]]
// CHECK: do
// CHECK: %[[COLUMN:.*]] = stablehlo.dynamic_slice %[[LU]], %{{.*}}, %[[K]], sizes = [4, 1]
// CHECK: %[[MAGNITUDE:.*]] = stablehlo.abs %[[COLUMN]]
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.maximum across dimensions = [0]
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.minimum across dimensions = [0]
// CHECK: stablehlo.divide
// CHECK: stablehlo.dot_general
// CHECK: stablehlo.subtract
// CHECK: %[[ONE:.*]] = stablehlo.constant dense<1> : tensor<1x1xi32>
// CHECK: %[[PIVOT1:.*]] = stablehlo.add %{{.*}}, %[[ONE]] : tensor<1x1xi32>
// CHECK: %[[PIVOT1D:.*]] = stablehlo.reshape %[[PIVOT1]] : (tensor<1x1xi32>) -> tensor<1xi32>
// CHECK: stablehlo.dynamic_update_slice %[[IPIV]], %[[PIVOT1D]], %[[K]]
// CHECK: return %[[LOOP]]#1, %[[LOOP]]#2, %[[LOOP]]#3
func.func @getrf(%a: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xi32>, tensor<i32>) {
  %0:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%a) {mhlo.backend_config = {}} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xi32>, tensor<i32>)
  return %0#0, %0#1, %0#2 : tensor<4x3xf32>, tensor<3xi32>, tensor<i32>
}

// -----

// geqrf then orgqr: a Householder loop over the columns (R and reflectors, tau),
// then a loop applying the reflectors in reverse to the identity.
// CHECK-LABEL: func.func @qr
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf64>
// CHECK: %[[QR:.*]]:3 = stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %[[A]], %{{.*}} = %{{.*}}) : tensor<i32>, tensor<4x3xf64>, tensor<3xf64>
// CHECK: stablehlo.sqrt
// CHECK: %[[Q:.*]]:2 = stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : tensor<i32>, tensor<4x3xf64>
// CHECK: stablehlo.dynamic_slice %[[QR]]#1
// CHECK: stablehlo.dynamic_slice %[[QR]]#2
// CHECK: return %[[Q]]#1, %[[QR]]#2 : tensor<4x3xf64>, tensor<3xf64>
// CHECK-NOT: custom_call
func.func @qr(%a: tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<3xf64>) {
  %0:2 = stablehlo.custom_call @lapack_dgeqrf_ffi(%a) {mhlo.backend_config = {}} : (tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<3xf64>)
  %1 = stablehlo.custom_call @lapack_dorgqr_ffi(%0#0, %0#1) {mhlo.backend_config = {}} : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4x3xf64>
  return %1, %0#1 : tensor<4x3xf64>, tensor<3xf64>
}

// -----

// syevd: Jacobi sweeps (a while loop over sweeps around a while loop over the
// pairs p < q), then the eigenvalues are sorted ascending with their vectors.
// CHECK-LABEL: func.func @syevd
// CHECK: %[[SWEEPS:.*]]:3 = stablehlo.while(%{{.*}}) : tensor<i32>, tensor<3x3xf32>, tensor<3x3xf32>
// CHECK: cond
// CHECK: %[[MAX:.*]] = stablehlo.constant dense<30> : tensor<i32>
// CHECK: do
// CHECK: stablehlo.while(%{{.*}}) : tensor<i32>, tensor<i32>, tensor<3x3xf32>, tensor<3x3xf32>
// CHECK: %[[SORTED:.*]]:2 = "stablehlo.sort"
// CHECK: stablehlo.compare LT, %{{.*}}, %{{.*}}, TOTALORDER
// CHECK: stablehlo.dot_general %[[SWEEPS]]#2
// CHECK: return %{{.*}}, %[[SORTED]]#0, %{{.*}} : tensor<3x3xf32>, tensor<3xf32>, tensor<i32>
func.func @syevd(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<i32>) {
  %0:3 = stablehlo.custom_call @lapack_ssyevd_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<i32>)
  return %0#0, %0#1, %0#2 : tensor<3x3xf32>, tensor<3xf32>, tensor<i32>
}

// -----

// gesdd: singular values sorted descending; no custom call survives.
// CHECK-LABEL: func.func @gesdd
// CHECK: "stablehlo.sort"
// CHECK: stablehlo.compare GT, %{{.*}}, %{{.*}}, TOTALORDER
// CHECK-NOT: custom_call
func.func @gesdd(%a: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x3xf32>, tensor<2x2xf32>) {
  %0:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%a) {mhlo.backend_config = {mode = 65 : ui8}} : (tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xf32>, tensor<3x3xf32>, tensor<2x2xf32>, tensor<i32>)
  return %0#1, %0#2, %0#3 : tensor<2xf32>, tensor<3x3xf32>, tensor<2x2xf32>
}

// -----

// geev: a real matrix goes complex; shifted QR steps (T, Z, active size and
// stall counter per matrix) until every matrix has deflated; eigenvalues are
// the diagonal of T, returned as real and imaginary parts.
// CHECK-LABEL: func.func @geev
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<3x3xf32>
// CHECK: %[[C:.*]] = stablehlo.complex %[[A]], %{{.*}} : tensor<3x3xcomplex<f32>>
// CHECK: %[[SCHUR:.*]]:5 = stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %[[C]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : tensor<i32>, tensor<3x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<1x1xi32>, tensor<1x1xi32>
// CHECK: %[[T:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[SCHUR]]#1
// CHECK: %[[W:.*]] = stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.add across dimensions = [1] : (tensor<3x3xcomplex<f32>>, tensor<complex<f32>>) -> tensor<3xcomplex<f32>>
// CHECK: %[[RE:.*]] = stablehlo.real %[[W]] : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
// CHECK: %[[IM:.*]] = stablehlo.imag %[[W]] : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
// CHECK: return %[[RE]], %[[IM]]
// CHECK-NOT: custom_call
func.func @geev(%a: tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3x3xcomplex<f32>>, tensor<i32>) {
  %0:5 = stablehlo.custom_call @lapack_sgeev_ffi(%a) {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}} : (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<i32>)
  return %0#0, %0#1, %0#3, %0#4 : tensor<3xf32>, tensor<3xf32>, tensor<3x3xcomplex<f32>>, tensor<i32>
}

// -----

// Other custom calls are left for xhlo-legalize-custom-calls.
// CHECK-LABEL: func.func @other_target
// CHECK: stablehlo.custom_call @lapack_sgehrd_ffi
func.func @other_target(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = stablehlo.custom_call @lapack_sgehrd_ffi(%a) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// The complex QR iteration gives no real (quasi-triangular) Schur form.
func.func @real_schur(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  // expected-error@+1 {{the real Schur form (real ?gees) is not supported; complex input is}}
  %0:5 = stablehlo.custom_call @lapack_sgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<i32>, tensor<i32>)
  return %0#0 : tensor<3x3xf32>
}

// -----

func.func @not_a_matrix(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'lapack_spotrf_ffi' needs a matrix operand, got tensor<4xf32>}}
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>)
  return %0#0 : tensor<4xf32>
}

// -----

// Empty matrices: LAPACK returns at once (info 0); every result is a zero constant.
// CHECK-LABEL: func.func @empty_batch
// CHECK-DAG: %[[A:.*]] = stablehlo.constant dense<{{.*}}> : tensor<3x0x0xf32>
// CHECK-DAG: %[[INFO:.*]] = stablehlo.constant dense<0> : tensor<3xi32>
// CHECK-NOT: custom_call
// CHECK: return %[[A]], %[[INFO]]
func.func @empty_batch(%a: tensor<3x0x0xf32>) -> (tensor<3x0x0xf32>, tensor<3xi32>) {
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}} : (tensor<3x0x0xf32>) -> (tensor<3x0x0xf32>, tensor<3xi32>)
  return %0#0, %0#1 : tensor<3x0x0xf32>, tensor<3xi32>
}

// -----

// gtsv: an elimination loop (rows swap by pivot magnitude) and a back-substitution loop.
// CHECK-LABEL: func.func @tridiagonal
// CHECK-NOT: custom_call
// CHECK: stablehlo.while
// CHECK: stablehlo.compare GT
// CHECK: stablehlo.while
// CHECK: stablehlo.divide
// CHECK: return
func.func @tridiagonal(%dl: tensor<5xf32>, %d: tensor<5xf32>, %du: tensor<5xf32>, %b: tensor<5x2xf32>) -> (tensor<5x2xf32>, tensor<i32>) {
  %0:5 = stablehlo.custom_call @lapack_sgtsv_ffi(%dl, %d, %du, %b) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5x2xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5x2xf32>, tensor<i32>)
  return %0#3, %0#4 : tensor<5x2xf32>, tensor<i32>
}

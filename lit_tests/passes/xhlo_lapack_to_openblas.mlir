// RUN: xhlo-opt %s --xhlo-lapack-to-openblas --split-input-file | FileCheck %s

// A batched getrf: the operand flattened to [batch, m, n] and lent read-only, one
// buffer per result, and a body that copies the operand into the LU result and calls
// LAPACKE once per matrix (row-major, lda = n), storing its return value as info.
// CHECK-LABEL: func.func @lu
// CHECK: %[[IN:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<2x4x3xf32> to memref<2x4x3xf32>
// CHECK: %[[LU:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4x3xf32>
// CHECK: %[[PIV:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3xi32>
// CHECK: %[[INFO:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2xi32>
// CHECK: call @xhlo_lapack0(%[[IN]], %[[LU]], %[[PIV]], %[[INFO]])
// CHECK: bufferization.to_tensor %[[LU]] restrict writable
// CHECK-NOT: stablehlo.custom_call
// CHECK: func.func private @xhlo_lapack0(%arg0: memref<2x4x3xf32>, %arg1: memref<2x4x3xf32>, %arg2: memref<2x3xi32>, %arg3: memref<2xi32>)
// CHECK: memref.copy %arg0, %arg1
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK-DAG: %[[ROW_MAJOR:.*]] = arith.constant 101 : i32
// CHECK-DAG: %[[M:.*]] = arith.constant 4 : i32
// CHECK-DAG: %[[N:.*]] = arith.constant 3 : i32
// CHECK: %[[R:.*]] = func.call @scipy_LAPACKE_sgetrf(%[[ROW_MAJOR]], %[[M]], %[[N]], %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK: memref.store %[[R]], %arg3[%[[B]]]
func.func @lu(%a: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2xi32>) {
  %0:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%a) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}} : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2xi32>)
  return %0#0, %0#1, %0#2 : tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2xi32>
}

// -----

// potrf reads the row-major buffer column-major with the other triangle (no transposes).
// CHECK-LABEL: func.func @cholesky
// CHECK: func.func private @xhlo_lapack0
// CHECK-DAG: %[[COL_MAJOR:.*]] = arith.constant 102 : i32
// CHECK-DAG: %[[UPPER:.*]] = arith.constant 85 : i8
// CHECK: func.call @scipy_LAPACKE_zpotrf(%[[COL_MAJOR]], %[[UPPER]],
func.func @cholesky(%a: tensor<5x5xcomplex<f64>>) -> (tensor<5x5xcomplex<f64>>, tensor<i32>) {
  %0:2 = stablehlo.custom_call @lapack_zpotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<5x5xcomplex<f64>>) -> (tensor<5x5xcomplex<f64>>, tensor<i32>)
  return %0#0, %0#1 : tensor<5x5xcomplex<f64>>, tensor<i32>
}

// -----

// trsm: cblas with its enums (left, lower, transposed, unit diagonal), alpha = 1, on a copy of b.
// CHECK-LABEL: func.func @triangular
// CHECK: func.func private @xhlo_lapack0
// CHECK: memref.copy %arg1, %arg2
// CHECK: func.call @scipy_cblas_dtrsm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, i32, i32, i32, i32, f64, !llvm.ptr, i32, !llvm.ptr, i32) -> ()
func.func @triangular(%a: tensor<4x4xf64>, %b: tensor<4x2xf64>) -> tensor<4x2xf64> {
  %0 = stablehlo.custom_call @lapack_dtrsm_ffi(%a, %b) {mhlo.backend_config = {diag = 85 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<4x4xf64>, tensor<4x2xf64>) -> tensor<4x2xf64>
  return %0 : tensor<4x2xf64>
}

// -----

// What OpenBLAS is not asked for stays for xhlo-legalize-lapack-custom-calls.
// CHECK-LABEL: func.func @complex_trsm
// CHECK: stablehlo.custom_call @lapack_ctrsm_ffi
func.func @complex_trsm(%a: tensor<3x3xcomplex<f32>>, %b: tensor<3x1xcomplex<f32>>) -> tensor<3x1xcomplex<f32>> {
  %0 = stablehlo.custom_call @lapack_ctrsm_ffi(%a, %b) {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<3x3xcomplex<f32>>, tensor<3x1xcomplex<f32>>) -> tensor<3x1xcomplex<f32>>
  return %0 : tensor<3x1xcomplex<f32>>
}

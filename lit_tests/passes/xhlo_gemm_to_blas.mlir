// RUN: xhlo-opt %s --xhlo-gemm-to-blas --split-input-file | FileCheck %s

// Row-major A (64x96) times B (96x80) into C: sgemm(RowMajor, NoTrans, NoTrans,
// M=64, N=80, K=96, alpha=1, A, lda=96, B, ldb=80, beta=1, C, ldc=80).
// CHECK: func.func private @scipy_cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: memref<64x96xf32>, %[[B:.*]]: memref<96x80xf32>, %[[C:.*]]: memref<64x80xf32>)
// CHECK-DAG: %[[ROW_MAJOR:.*]] = arith.constant 101 : i32
// CHECK-DAG: %[[NO_TRANS:.*]] = arith.constant 111 : i32
// CHECK-DAG: %[[M:.*]] = arith.constant 64 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: memref.extract_aligned_pointer_as_index %[[C]]
// CHECK: %[[PA:.*]] = llvm.inttoptr
// CHECK: %[[PB:.*]] = llvm.inttoptr
// CHECK: %[[PC:.*]] = llvm.inttoptr
// CHECK: call @scipy_cblas_sgemm(%[[ROW_MAJOR]], %[[NO_TRANS]], %{{.*}}, %[[M]], %{{.*}}, %{{.*}}, %[[ONE]], %[[PA]], %{{.*}}, %[[PB]], %{{.*}}, %[[ONE]], %[[PC]], %{{.*}})
// CHECK-NOT: linalg.contract
func.func @matmul(%a: memref<64x96xf32>, %b: memref<96x80xf32>, %c: memref<64x80xf32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<64x96xf32>, memref<96x80xf32>) outs(%c : memref<64x80xf32>)
  return
}

// -----

// Two batch dimensions whose strides nest become one strided batch call of
// 2*8 matrices (strides 2048, 1536, 3072 elements); the rhs (n, k) is transposed (112).
// CHECK: func.func private @scipy_cblas_dgemm_batch_strided(i32, i32, i32, i32, i32, i32, f64, !llvm.ptr, i32, i32, !llvm.ptr, i32, i32, f64, !llvm.ptr, i32, i32, i32)
// CHECK-LABEL: func.func @batched_transposed
// CHECK-DAG: %[[TRANS:.*]] = arith.constant 112 : i32
// CHECK-DAG: %[[COUNT:.*]] = arith.constant 16 : i32
// CHECK-DAG: %[[SA:.*]] = arith.constant 2048 : i32
// CHECK-DAG: %[[SB:.*]] = arith.constant 1536 : i32
// CHECK-DAG: %[[SC:.*]] = arith.constant 3072 : i32
// CHECK-NOT: scf.for
// CHECK: call @scipy_cblas_dgemm_batch_strided(%{{.*}}, %{{.*}}, %[[TRANS]], {{.*}}, %[[SA]], {{.*}}, %[[SB]], {{.*}}, %[[SC]], %[[COUNT]])
// CHECK-NOT: linalg.contract
func.func @batched_transposed(%q: memref<2x8x64x32xf64>, %k: memref<2x8x48x32xf64>, %s: memref<2x8x64x48xf64>) {
  linalg.contract indexing_maps = [affine_map<(b, h, m, n, k) -> (b, h, m, k)>, affine_map<(b, h, m, n, k) -> (b, h, n, k)>, affine_map<(b, h, m, n, k) -> (b, h, m, n)>] {xhlo.blas} ins(%q, %k : memref<2x8x64x32xf64>, memref<2x8x48x32xf64>) outs(%s : memref<2x8x64x48xf64>)
  return
}

// -----

// The lhs is a view whose batch strides do not nest (b: 32768, not 8 * 2048), so
// a loop over b wraps a batch call over h (8 matrices, lhs stride 2048).
// CHECK-LABEL: func.func @batch_dims_that_do_not_nest
// CHECK: %[[SA:.*]] = arith.constant 2048 : i32
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: %[[COUNT:.*]] = arith.constant 8 : i32
// CHECK: call @scipy_cblas_sgemm_batch_strided({{.*}}, %[[SA]], {{.*}}, %[[COUNT]])
func.func @batch_dims_that_do_not_nest(%a: memref<2x8x64x32xf32, strided<[32768, 2048, 32, 1]>>, %b: memref<2x8x32x48xf32>, %c: memref<2x8x64x48xf32>) {
  linalg.contract indexing_maps = [affine_map<(b, h, m, n, k) -> (b, h, m, k)>, affine_map<(b, h, m, n, k) -> (b, h, k, n)>, affine_map<(b, h, m, n, k) -> (b, h, m, n)>] {xhlo.blas} ins(%a, %b : memref<2x8x64x32xf32, strided<[32768, 2048, 32, 1]>>, memref<2x8x32x48xf32>) outs(%c : memref<2x8x64x48xf32>)
  return
}

// -----

// Large matrices: a threaded call per matrix, in a loop.
// CHECK-LABEL: func.func @large_batch
// CHECK: scf.for
// CHECK: call @scipy_cblas_sgemm(
func.func @large_batch(%a: memref<2x512x512xf32>, %b: memref<2x512x512xf32>, %c: memref<2x512x512xf32>) {
  linalg.contract indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>] {xhlo.blas} ins(%a, %b : memref<2x512x512xf32>, memref<2x512x512xf32>) outs(%c : memref<2x512x512xf32>)
  return
}

// -----

// A tagged zero fill of the output (through a reshape) right before the call: the
// fill goes, beta = 0.
// CHECK-LABEL: func.func @zero_fill
// CHECK-NOT: linalg.fill
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: call @scipy_cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]],
func.func @zero_fill(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<4x16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%c : memref<4x16x64xf32>)
  %flat = memref.collapse_shape %c [[0, 1], [2]] : memref<4x16x64xf32> into memref<64x64xf32>
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%flat : memref<64x64xf32>)
  return
}

// -----

// A write between the fill and the contraction: the fill stays (untagged), beta = 1.
// CHECK-LABEL: func.func @zero_fill_then_a_write
// CHECK: linalg.fill ins
// CHECK: memref.store
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @scipy_cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]],
func.func @zero_fill_then_a_write(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %i = arith.constant 3 : index
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%c : memref<64x64xf32>)
  memref.store %one, %c[%i, %i] : memref<64x64xf32>
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// A view into a wider buffer: lda is its row stride (96), not its width (64).
// CHECK-LABEL: func.func @view
// CHECK: %[[LDA:.*]] = arith.constant 96 : i32
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg0
// CHECK: arith.muli %[[OFFSET]]
// CHECK: call @scipy_cblas_sgemm({{.*}}, %{{.*}}, %[[LDA]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
func.func @view(%a: memref<64x64xf32, strided<[96, 1], offset: ?>>, %b: memref<64x48xf32>, %c: memref<64x48xf32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<64x64xf32, strided<[96, 1], offset: ?>>, memref<64x48xf32>) outs(%c : memref<64x48xf32>)
  return
}

// -----

// BLAS writes C row-major: a column-major output keeps the loop lowering.
// CHECK-LABEL: func.func @column_major_output
// CHECK: linalg.contract
// CHECK-NOT: call
func.func @column_major_output(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32, strided<[1, 64]>>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32, strided<[1, 64]>>)
  return
}

// -----

// Only contractions xhlo-prepare-gemms tagged are rewritten.
// CHECK-LABEL: func.func @untagged
// CHECK: linalg.contract
// CHECK-NOT: call
func.func @untagged(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// A folded scale (xhlo.blas_alpha) is the call's alpha; beta = 0 from the zero fill.
// CHECK-LABEL: func.func @alpha
// CHECK: %[[ALPHA:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @scipy_cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ALPHA]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]],
func.func @alpha(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas, xhlo.blas_alpha = 0.125 : f64} ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// A contraction that keeps its loops (column-major output) scales its result after them.
// CHECK-LABEL: func.func @alpha_without_blas
// CHECK: linalg.contract
// CHECK-NOT: xhlo.blas_alpha
// CHECK-NEXT: linalg.generic {{.*}} outs(%{{.*}} : memref<64x64xf32, strided<[1, 64]>>)
// CHECK: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK-NOT: call
func.func @alpha_without_blas(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32, strided<[1, 64]>>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%c : memref<64x64xf32, strided<[1, 64]>>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas, xhlo.blas_alpha = 0.125 : f64} ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32, strided<[1, 64]>>)
  return
}

// -----

// The zeroed output is read (a view of it copied) between its fill and the product:
// the fill stays and the call accumulates (beta = 1).
// CHECK-LABEL: func.func @output_read_before
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @scipy_cblas_sgemm({{.*}}, %[[ONE]], %{{.*}}, %{{.*}})
func.func @output_read_before(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>, %saved: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%c : memref<64x64xf32>)
  %rows = memref.subview %c[0, 0] [8, 64] [1, 1] : memref<64x64xf32> to memref<8x64xf32, strided<[64, 1]>>
  linalg.copy ins(%rows : memref<8x64xf32, strided<[64, 1]>>) outs(%saved : memref<8x64xf32>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// Scratch arena slots (xhlo-scratch-arena's views of the last argument) are buffers of
// their own: a copy into another slot between the fill and the product leaves the fill
// droppable (beta = 0), a read of the output's own slot keeps it.
// CHECK-LABEL: func.func @arena_slots
// CHECK-NOT: linalg.fill
// CHECK: linalg.copy
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @scipy_cblas_sgemm({{.*}}, %[[ZERO]], %{{.*}}, %{{.*}})
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @scipy_cblas_sgemm({{.*}}, %[[ONE]], %{{.*}}, %{{.*}})
func.func @arena_slots(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %arena: memref<65536xi8>) attributes {xhlo.scratch_bytes = 65536 : i64} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c16k = arith.constant 16384 : index
  %c32k = arith.constant 32768 : index
  %c = memref.view %arena[%c0][] : memref<65536xi8> to memref<64x64xf32>
  %other = memref.view %arena[%c16k][] : memref<65536xi8> to memref<64x64xf32>
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.copy ins(%a : memref<64x64xf32>) outs(%other : memref<64x64xf32>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%other, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  %d = memref.view %arena[%c32k][] : memref<65536xi8> to memref<64x64xf32>
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%d : memref<64x64xf32>)
  %rows = memref.subview %d[0, 0] [8, 64] [1, 1] : memref<64x64xf32> to memref<8x64xf32, strided<[64, 1]>>
  %saved = memref.subview %other[0, 0] [8, 64] [1, 1] : memref<64x64xf32> to memref<8x64xf32, strided<[64, 1]>>
  linalg.copy ins(%rows : memref<8x64xf32, strided<[64, 1]>>) outs(%saved : memref<8x64xf32, strided<[64, 1]>>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%c, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%d : memref<64x64xf32>)
  return
}

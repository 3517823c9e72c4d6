// RUN: xhlo-opt %s --xhlo-lower-small-gemms="accumulators=16" --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-lower-small-gemms="accumulators=6" --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: xhlo-opt %s --xhlo-lower-small-gemms="accumulators=16 streamed-tile-bytes=2048" --split-input-file | FileCheck %s --check-prefix=WIDE

// The checks use AVX-512's 16 accumulators; the default follows the host's
// registers (6 on AVX2, where 16 vectors of 16 floats spilled).

// 16 rows x 1024 columns: one 16-row block of one-vector (16-float) sums per
// column tile; the tile loop is parallel, the reduction loop carries the 16
// sums, the zero fill goes (the sums start at zero).
// CHECK-LABEL: func.func @lstm_step
// CHECK-NOT: linalg.fill
// CHECK: %[[RHS:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [384, 1024], strides: [1024, 1]
// CHECK: %[[OUT:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [16, 1024], strides: [1024, 1]
// CHECK: scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[SUMS:.*]]:16 = scf.for %[[K:.*]] = {{.*}} iter_args({{.*}}) -> (vector<16xf32>, {{.*}}) {
// CHECK: vector.load %[[RHS]][%[[K]], %[[COL]]]
// CHECK-COUNT-16: vector.fma
// CHECK: scf.yield
// CHECK: vector.store %[[SUMS]]#0, %[[OUT]][%{{.*}}, %[[COL]]]
// CHECK: } {xhlo.parallel_loop}
// CHECK-NOT: linalg.contract
// With 6: blocks of 6 rows carry 6 sums.
// AVX2-LABEL: func.func @lstm_step
// AVX2: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// AVX2-COUNT-6: vector.fma
// AVX2-NOT: vector.fma
// AVX2: scf.yield
func.func @lstm_step(%a: memref<16x384xf32>, %w: memref<384x1024xf32>, %c: memref<16x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%c : memref<16x1024xf32>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %w : memref<16x384xf32>, memref<384x1024xf32>) outs(%c : memref<16x1024xf32>)
  return
}

// -----

// Without a zero fill the sums start from the result: C += A B.
// CHECK-LABEL: func.func @accumulate
// CHECK: %[[OUT:.*]] = memref.reinterpret_cast %{{.*}} sizes: [4, 256]
// CHECK-COUNT-16: vector.load %[[OUT]]
// CHECK: scf.for
// CHECK-NOT: linalg.contract
func.func @accumulate(%a: memref<4x64xf32>, %b: memref<64x256xf32>, %c: memref<4x256xf32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<4x64xf32>, memref<64x256xf32>) outs(%c : memref<4x256xf32>)
  return
}

// -----

// A transposed rhs (n, k) would need strided vector reads: left to xhlo-gemm-to-blas.
// CHECK-LABEL: func.func @transposed_rhs
// CHECK: linalg.contract
// CHECK-NOT: vector.fma
func.func @transposed_rhs(%a: memref<16x64xf32>, %b: memref<512x64xf32>, %c: memref<16x512xf32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<16x64xf32>, memref<512x64xf32>) outs(%c : memref<16x512xf32>)
  return
}

// -----

// A batch of 8 matrices: the batch loop is the parallel one (one dispatch to the
// pool), each matrix's column tiles run in it one after the other.
// CHECK-LABEL: func.func @batch
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: xhlo.parallel_loop
// CHECK: vector.fma
// CHECK: } {xhlo.parallel_loop}
// CHECK-NOT: linalg.contract
func.func @batch(%a: memref<8x8x64xf32>, %b: memref<8x64x512xf32>, %c: memref<8x8x512xf32>) {
  linalg.contract indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>] {xhlo.blas} ins(%a, %b : memref<8x8x64xf32>, memref<8x64x512xf32>) outs(%c : memref<8x8x512xf32>)
  return
}

// -----

// An 8 MiB rhs (over max-rhs-bytes) read by 2 rows, 8 vectors (512 bytes of a
// row) per step: streamed, not left to BLAS. 16 rows read it one vector per step,
// and narrower tiles than streamed-tile-bytes leave both to BLAS.
// CHECK-LABEL: func.func @matrix_vector
// CHECK: vector.fma
// CHECK-NOT: linalg.contract
// CHECK-LABEL: func.func @sixteen_rows
// CHECK: linalg.contract
// WIDE-LABEL: func.func @matrix_vector
// WIDE: linalg.contract
func.func @matrix_vector(%a: memref<2x1024xf32>, %b: memref<1024x2048xf32>, %c: memref<2x2048xf32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<2x1024xf32>, memref<1024x2048xf32>) outs(%c : memref<2x2048xf32>)
  return
}
func.func @sixteen_rows(%a: memref<16x1024xf32>, %b: memref<1024x2048xf32>, %c: memref<16x2048xf32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<16x1024xf32>, memref<1024x2048xf32>) outs(%c : memref<16x2048xf32>)
  return
}

// RUN: xhlo-opt %s --xhlo-lower-bf16-gemms --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-lower-bf16-gemms="blocks=12x2 chunk-rows=24" --split-input-file | FileCheck %s --check-prefix=BLOCK12

// 100 x 64 columns over 128 inner elements: the rhs packed into one panel of 4
// vectors (row pairs interleaved), then 6 x 4 sums per block over 64 row pairs,
// one (chunk of rows, panel) per parallel iteration; the last chunk ends at row
// 100 and its last block starts at row 94 at the latest (rows 94-95 are stored
// twice, with the same sums). The zero fill goes (the sums start at zero).
// CHECK-LABEL: func.func @product
// CHECK-NOT: linalg.fill
// CHECK: %[[PACKED:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x64x128xbf16>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for
// CHECK-COUNT-4: vector.shuffle
// CHECK: } {xhlo.parallel_loop}
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[C94:.*]] = arith.constant 94 : index
// CHECK: arith.minui %{{.*}}, %[[C94]]
// CHECK: %[[SUMS:.*]]:24 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xf32>,
// CHECK-COUNT-4: vector.load %[[PACKED]]
// CHECK: vector.load %{{.*}} : memref<100x128xbf16, strided<[128, 1], offset: ?>>, vector<2xbf16>
// CHECK-COUNT-24: x86.avx512.dot
// CHECK: scf.yield
// CHECK-COUNT-24: vector.store
// CHECK: } {xhlo.parallel_loop}
// CHECK-NOT: x86.avx512.dot
// CHECK: memref.dealloc %[[PACKED]]
// CHECK-NOT: linalg.contract
// Blocks of 12 rows x 2 vectors: two panels, four chunks of 24 rows (the last to
// row 100), the last block from row 88.
// BLOCK12-LABEL: func.func @product
// BLOCK12: memref.alloc() {alignment = 64 : i64} : memref<2x64x64xbf16>
// BLOCK12: %[[C8:.*]] = arith.constant 8 : index
// BLOCK12: scf.for %{{.*}} = %{{.*}} to %[[C8]] step
// BLOCK12: arith.constant 88 : index
// BLOCK12: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, {{.*}}) {
// BLOCK12-COUNT-24: x86.avx512.dot
// BLOCK12-NOT: x86.avx512.dot
func.func @product(%a: memref<100x128xbf16>, %b: memref<128x64xbf16>, %c: memref<100x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%c : memref<100x64xf32>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<100x128xbf16>, memref<128x64xbf16>) outs(%c : memref<100x64xf32>)
  return
}

// -----

// Without a zero fill the sums start from the result (C += A B): no block may
// run twice, so 14 rows are a block of 12 and one of 2. A folded scale would
// then scale what C held, so such a product stays.
// CHECK-LABEL: func.func @accumulate
// BLOCK12-LABEL: func.func @accumulate
// CHECK: vector.load %{{.*}} : memref<14x16xf32, strided<[16, 1], offset: ?>>, vector<16xf32>
// CHECK-COUNT-12: x86.avx512.dot
// CHECK: vector.load %{{.*}} : memref<14x16xf32, strided<[16, 1], offset: ?>>, vector<16xf32>
// CHECK-COUNT-2: x86.avx512.dot
// CHECK-NOT: linalg.contract
// CHECK-LABEL: func.func @scaled_accumulate
// CHECK: linalg.contract
func.func @accumulate(%a: memref<14x64xbf16>, %b: memref<64x16xbf16>, %c: memref<14x16xf32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<14x64xbf16>, memref<64x16xbf16>) outs(%c : memref<14x16xf32>)
  return
}
func.func @scaled_accumulate(%a: memref<12x64xbf16>, %b: memref<64x16xbf16>, %c: memref<12x16xf32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas, xhlo.blas_alpha = 5.000000e-01 : f32} ins(%a, %b : memref<12x64xbf16>, memref<64x16xbf16>) outs(%c : memref<12x16xf32>)
  return
}

// -----

// A transposed rhs (stored cols x inner, x @ w.T): per panel vector, blocks of 16
// columns by 16 pairs, each column's 16 pairs one load, transposed by 4 x 16
// shuffles into 16 stores of 16 columns' pairs.
// CHECK-LABEL: func.func @transposed_rhs
// CHECK: %[[PACKED:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x32x128xbf16>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK-COUNT-16: vector.load %{{.*}} : memref<64x64xbf16, strided<[64, 1], offset: ?>>, vector<32xbf16>
// CHECK-COUNT-64: vector.shuffle %{{.*}}, %{{.*}} [{{.*}}] : vector<16xi32>, vector<16xi32>
// CHECK-COUNT-16: vector.store %{{.*}}, %[[PACKED]]
// CHECK: } {xhlo.parallel_loop}
// CHECK: x86.avx512.dot
func.func @transposed_rhs(%a: memref<24x64xbf16>, %w: memref<64x64xbf16>, %c: memref<24x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%c : memref<24x64xf32>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %w : memref<24x64xbf16>, memref<64x64xbf16>) outs(%c : memref<24x64xf32>)
  return
}

// -----

// A transposed lhs (stored inner x rows, x.T @ g): its row pairs interleaved into
// a copy [k / 2][2 row + k % 2], from which the kernel broadcasts each pair.
// CHECK-LABEL: func.func @transposed_lhs
// CHECK: %[[PANELS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x32x128xbf16>
// CHECK: %[[PAIRS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x64xbf16>
// CHECK: vector.shuffle
// CHECK: } {xhlo.parallel_loop}
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, {{.*}}] : vector<16xbf16>, vector<16xbf16>
// CHECK: vector.store %{{.*}}, %[[PAIRS]]
// CHECK: } {xhlo.parallel_loop}
// CHECK: vector.load %[[PAIRS]][%{{.*}}, %{{.*}}] : memref<32x64xbf16>, vector<2xbf16>
// CHECK: x86.avx512.dot
// CHECK: memref.dealloc %[[PANELS]]
// CHECK: memref.dealloc %[[PAIRS]]
func.func @transposed_lhs(%x: memref<64x32xbf16>, %g: memref<64x64xbf16>, %c: memref<32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%c : memref<32x64xf32>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%x, %g : memref<64x32xbf16>, memref<64x64xbf16>) outs(%c : memref<32x64xf32>)
  return
}

// -----

// One row: the rhs is read in place (no packing), in panels of 16 vectors: per
// step each vector's two rows are loaded and interleaved, one dot per sum.
// CHECK-LABEL: func.func @one_row
// BLOCK12-LABEL: func.func @one_row
// CHECK-NOT: memref.alloc
// CHECK: %{{.*}}:16 = scf.for {{.*}} -> (vector<16xf32>,
// CHECK-COUNT-16: x86.avx512.dot
// CHECK: scf.yield
// CHECK-COUNT-16: vector.store
// CHECK: } {xhlo.parallel_loop}
// CHECK-NOT: linalg.contract
func.func @one_row(%a: memref<1x64xbf16>, %b: memref<64x512xbf16>, %c: memref<1x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%c : memref<1x512xf32>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<1x64xbf16>, memref<64x512xbf16>) outs(%c : memref<1x512xf32>)
  return
}

// RUN: xhlo-opt %s --xhlo-lower-int8-gemms --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-lower-int8-gemms="unpacked-rows=100" --split-input-file | FileCheck %s --check-prefix=UNPACKED

// 100 x 64 columns over 128 inner elements: the rhs packed into one panel of 4
// vectors (groups of four rows interleaved) and each panel's column sums, times
// -128, kept as the start of its sums; then 6 x 4 sums per block over 32 groups,
// each lhs group broadcast with its sign bit flipped (the unsigned operand of
// vpdpbusd). The zero fill goes (the sums start from the correction).
// CHECK-LABEL: func.func @product
// CHECK-NOT: linalg.fill
// CHECK: %[[PACKED:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x32x256xi8>
// CHECK: %[[STARTS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x64xi32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for
// CHECK-COUNT-12: vector.shuffle
// CHECK: %[[SUMS:.*]]:4 = scf.for {{.*}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: arith.muli %{{.*}} : vector<16xi32>
// CHECK-COUNT-4: vector.store {{.*}}, %[[STARTS]]
// CHECK: } {xhlo.parallel_loop}
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: arith.constant 94 : index
// CHECK-COUNT-4: vector.load %[[STARTS]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xi32>,
// CHECK-COUNT-4: vector.load %[[PACKED]]
// CHECK: vector.load %{{.*}} : memref<100x128xi8, strided<[128, 1], offset: ?>>, vector<4xi8>
// CHECK: arith.xori
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: scf.yield
// CHECK-COUNT-24: vector.store {{.*}} vector<16xi32>
// CHECK: } {xhlo.parallel_loop}
// CHECK: memref.dealloc %[[PACKED]]
// CHECK: memref.dealloc %[[STARTS]]
// CHECK-NOT: linalg.contract
// Rows whose sums (a vector each, and a row sum each) would not fit the 24 sum
// registers are packed, even where unpacked-rows (100 here) allows more.
// UNPACKED-LABEL: func.func @product
// UNPACKED: memref.alloc() {alignment = 64 : i64} : memref<1x32x256xi8>
func.func @product(%a: memref<100x128xi8>, %b: memref<128x64xi8>, %c: memref<100x64xi32>) {
  %zero = arith.constant 0 : i32
  linalg.fill {xhlo.blas} ins(%zero : i32) outs(%c : memref<100x64xi32>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<100x128xi8>, memref<128x64xi8>) outs(%c : memref<100x64xi32>)
  return
}

// -----

// Without a zero fill the sums start from the result plus the correction; inner
// sizes that are not whole groups of four, and bf16 products, are not this pass's.
// CHECK-LABEL: func.func @accumulate
// CHECK: vector.load %{{.*}} : memref<12x16xi32, strided<[16, 1], offset: ?>>, vector<16xi32>
// CHECK: arith.addi %{{.*}} : vector<16xi32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: linalg.contract
// CHECK-LABEL: func.func @odd_inner
// CHECK: linalg.contract
// CHECK-LABEL: func.func @bf16
// CHECK: linalg.contract
func.func @accumulate(%a: memref<12x64xi8>, %b: memref<64x16xi8>, %c: memref<12x16xi32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<12x64xi8>, memref<64x16xi8>) outs(%c : memref<12x16xi32>)
  return
}
func.func @odd_inner(%a: memref<12x66xi8>, %b: memref<66x16xi8>, %c: memref<12x16xi32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<12x66xi8>, memref<66x16xi8>) outs(%c : memref<12x16xi32>)
  return
}
func.func @bf16(%a: memref<12x64xbf16>, %b: memref<64x16xbf16>, %c: memref<12x16xf32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<12x64xbf16>, memref<64x16xbf16>) outs(%c : memref<12x16xf32>)
  return
}

// -----

// Two rows (an LLM's decoding step): nothing is packed. Each parallel iteration
// takes a panel of 8 vectors (128 columns): per step it reads and interleaves
// four rows of the rhs in place, flips their sign bits (the rhs is the unsigned
// operand here) and adds each row's own sum of groups (a dot of ones with the
// broadcast lhs group), which corrects that row's sums at the end.
// CHECK-LABEL: func.func @few_rows
// CHECK-NOT: memref.alloc
// CHECK: scf.for
// CHECK: %{{.*}}:18 = scf.for {{.*}} -> (vector<16xi32>,
// CHECK-COUNT-8: arith.xori %{{.*}} : vector<64xi8>
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %[[ONES:.*]], %{{.*}})
// CHECK: scf.yield
// CHECK-COUNT-2: arith.muli %{{.*}} : vector<16xi32>
// CHECK-COUNT-16: arith.addi %{{.*}} : vector<16xi32>
// CHECK-COUNT-16: vector.store
// CHECK: } {xhlo.parallel_loop}
// CHECK-NOT: linalg.contract
func.func @few_rows(%a: memref<2x128xi8>, %b: memref<128x256xi8>, %c: memref<2x256xi32>) {
  %zero = arith.constant 0 : i32
  linalg.fill {xhlo.blas} ins(%zero : i32) outs(%c : memref<2x256xi32>)
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] {xhlo.blas} ins(%a, %b : memref<2x128xi8>, memref<128x256xi8>) outs(%c : memref<2x256xi32>)
  return
}

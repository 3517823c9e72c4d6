// RUN: xhlo-opt %s --xhlo-bf16-gemm-operands="avx512-bf16=true" --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-bf16-gemm-operands="avx512-bf16=false" --split-input-file | FileCheck %s --check-prefix=NOBF16

#id = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A tagged product of two f32 extensions of bf16 tensors reads the bf16 tensors;
// its body extends them, and the conversions are left for canonicalize to drop.
// CHECK-LABEL: func.func @widened_product
// CHECK-SAME: (%[[A:.*]]: tensor<64x128xbf16>, %[[B:.*]]: tensor<128x32xbf16>
// CHECK: %[[P:.*]] = linalg.contract indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] {xhlo.blas} ins(%[[A]], %[[B]] : tensor<64x128xbf16>, tensor<128x32xbf16>) outs(%{{.*}} : tensor<64x32xf32>)
// CHECK: return %[[P]]
// Without AVX512-BF16 nothing changes.
// NOBF16-LABEL: func.func @widened_product
// NOBF16: linalg.contract {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x128xf32>, tensor<128x32xf32>)
func.func @widened_product(%a: tensor<64x128xbf16>, %b: tensor<128x32xbf16>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %ea = tensor.empty() : tensor<64x128xf32>
  %a32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x128xbf16>) outs(%ea : tensor<64x128xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  %eb = tensor.empty() : tensor<128x32xf32>
  %b32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<128x32xbf16>) outs(%eb : tensor<128x32xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<128x32xf32>
  %p = linalg.contract indexing_maps = [#mk, #kn, #mn] {xhlo.blas} ins(%a32, %b32 : tensor<64x128xf32>, tensor<128x32xf32>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %p : tensor<64x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A transposed rhs (x @ w.T) read in place: the contraction reads the bf16 tensor
// through the same map. A transposing extension (fusion folded a transpose into
// the conversion) is read through the composed map. Products of f32 data stay.
// CHECK: #map2 = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @transposed_rhs
// CHECK-SAME: (%[[A:.*]]: tensor<64x128xbf16>, %[[W:.*]]: tensor<32x128xbf16>
// CHECK: linalg.contract indexing_maps = [#map1, #map2, #map3] {xhlo.blas} ins(%[[A]], %[[W]] : tensor<64x128xbf16>, tensor<32x128xbf16>)
// CHECK-LABEL: func.func @transposing_extension
// CHECK-SAME: (%[[A:.*]]: tensor<64x128xbf16>, %[[W:.*]]: tensor<32x128xbf16>
// CHECK: linalg.contract indexing_maps = [#map1, #map2, #map3] {xhlo.blas} ins(%[[A]], %[[W]] : tensor<64x128xbf16>, tensor<32x128xbf16>)
// CHECK-LABEL: func.func @f32_data
// CHECK: linalg.contract {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x128xf32>, tensor<32x128xf32>)
func.func @transposed_rhs(%a: tensor<64x128xbf16>, %w: tensor<32x128xbf16>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %ea = tensor.empty() : tensor<64x128xf32>
  %a32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x128xbf16>) outs(%ea : tensor<64x128xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  %ew = tensor.empty() : tensor<32x128xf32>
  %w32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<32x128xbf16>) outs(%ew : tensor<32x128xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<32x128xf32>
  %p = linalg.contract indexing_maps = [#mk, #nk, #mn] {xhlo.blas} ins(%a32, %w32 : tensor<64x128xf32>, tensor<32x128xf32>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %p : tensor<64x32xf32>
}
func.func @transposing_extension(%a: tensor<64x128xbf16>, %w: tensor<32x128xbf16>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %ea = tensor.empty() : tensor<64x128xf32>
  %a32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x128xbf16>) outs(%ea : tensor<64x128xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  %ew = tensor.empty() : tensor<128x32xf32>
  %w32 = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<32x128xbf16>) outs(%ew : tensor<128x32xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<128x32xf32>
  %p = linalg.contract indexing_maps = [#mk, #kn, #mn] {xhlo.blas} ins(%a32, %w32 : tensor<64x128xf32>, tensor<128x32xf32>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %p : tensor<64x32xf32>
}
func.func @f32_data(%a: tensor<64x128xf32>, %w: tensor<32x128xf32>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %p = linalg.contract indexing_maps = [#mk, #nk, #mn] {xhlo.blas} ins(%a, %w : tensor<64x128xf32>, tensor<32x128xf32>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %p : tensor<64x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A transposed rhs of 48 inner elements (not blocks of 32) is left to sgemm.
// CHECK-LABEL: func.func @short_transposed_rhs
// CHECK: linalg.contract {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x48xf32>, tensor<32x48xf32>)
func.func @short_transposed_rhs(%a: tensor<64x48xbf16>, %w: tensor<32x48xbf16>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %ea = tensor.empty() : tensor<64x48xf32>
  %a32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x48xbf16>) outs(%ea : tensor<64x48xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<64x48xf32>
  %ew = tensor.empty() : tensor<32x48xf32>
  %w32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<32x48xbf16>) outs(%ew : tensor<32x48xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<32x48xf32>
  %p = linalg.contract indexing_maps = [#mk, #nk, #mn] {xhlo.blas} ins(%a32, %w32 : tensor<64x48xf32>, tensor<32x48xf32>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %p : tensor<64x32xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// bf16 data computed in f32 (an op yielding extf(truncf(v))): a clone yields the bf16
// values, and the product reads them. A reshape of an extension is the same reshape of
// the bf16 tensor.
// CHECK-LABEL: func.func @rounded_and_reshaped
// CHECK-SAME: (%[[X:.*]]: tensor<64x128xf32>, %[[W:.*]]: tensor<128x4x8xbf16>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x128xbf16>
// CHECK: %[[XB:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<64x128xf32>) outs(%[[E]] : tensor<64x128xbf16>)
// CHECK: math.tanh
// CHECK: %[[T:.*]] = arith.truncf
// CHECK-NEXT: linalg.yield %[[T]] : bf16
// CHECK: %[[WB:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2]] : tensor<128x4x8xbf16> into tensor<128x32xbf16>
// CHECK: linalg.contract {{.*}} {xhlo.blas} ins(%[[XB]], %[[WB]] : tensor<64x128xbf16>, tensor<128x32xbf16>)
func.func @rounded_and_reshaped(%x: tensor<64x128xf32>, %w: tensor<128x4x8xbf16>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %ex = tensor.empty() : tensor<64x128xf32>
  %x32 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x128xf32>) outs(%ex : tensor<64x128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    %r = arith.truncf %t : f32 to bf16
    %e = arith.extf %r : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  %ew = tensor.empty() : tensor<128x4x8xf32>
  %w32 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<128x4x8xbf16>) outs(%ew : tensor<128x4x8xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %e = arith.extf %v : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<128x4x8xf32>
  %wc = tensor.collapse_shape %w32 [[0], [1, 2]] : tensor<128x4x8xf32> into tensor<128x32xf32>
  %p = linalg.contract indexing_maps = [#mk, #kn, #mn] {xhlo.blas} ins(%x32, %wc : tensor<64x128xf32>, tensor<128x32xf32>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %p : tensor<64x32xf32>
}

// RUN: xhlo-opt %s --xhlo-prepare-gemms --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-prepare-gemms="im2col=false" --split-input-file | FileCheck %s --check-prefix=NOCONV

// NOCONV-LABEL: func.func @convolution
// NOCONV-NEXT: linalg.conv_2d_nhwc_hwcf

// A float matmul worth a BLAS call becomes a tagged linalg.contract with the same maps.
// CHECK-DAG: #[[MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<64x96xf32>, %[[B:.*]]: tensor<96x80xf32>, %[[C:.*]]: tensor<64x80xf32>)
// CHECK-NEXT: %[[P:.*]] = linalg.contract indexing_maps = [#[[MK]], #[[KN]], #[[MN]]] {xhlo.blas} ins(%[[A]], %[[B]] : tensor<64x96xf32>, tensor<96x80xf32>) outs(%[[C]] : tensor<64x80xf32>)
// CHECK-NEXT: return %[[P]]
func.func @matmul(%a: tensor<64x96xf32>, %b: tensor<96x80xf32>, %c: tensor<64x80xf32>) -> tensor<64x80xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x80xf32>) outs(%c : tensor<64x80xf32>) -> tensor<64x80xf32>
  return %0 : tensor<64x80xf32>
}

// -----

// The +0.0 fill a tagged contraction accumulates into is tagged as well (xhlo-vectorize
// leaves it; xhlo-gemm-to-blas turns it into beta = 0). A fill of another value is not.
// CHECK-LABEL: func.func @zero_fill
// CHECK: %[[ZERO:.*]] = linalg.fill {xhlo.blas} ins(%{{.*}} : f32)
// CHECK: linalg.contract {{.*}} {xhlo.blas} {{.*}} outs(%[[ZERO]] : tensor<64x80xf32>)
// CHECK: %[[ONES:.*]] = linalg.fill ins(%{{.*}} : f32)
// CHECK: linalg.contract {{.*}} {xhlo.blas} {{.*}} outs(%[[ONES]] : tensor<64x80xf32>)
func.func @zero_fill(%a: tensor<64x96xf32>, %b: tensor<96x80xf32>) -> (tensor<64x80xf32>, tensor<64x80xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<64x80xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x80xf32>) -> tensor<64x80xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x80xf32>) outs(%z : tensor<64x80xf32>) -> tensor<64x80xf32>
  %o = linalg.fill ins(%one : f32) outs(%e : tensor<64x80xf32>) -> tensor<64x80xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x80xf32>) outs(%o : tensor<64x80xf32>) -> tensor<64x80xf32>
  return %0, %1 : tensor<64x80xf32>, tensor<64x80xf32>
}

// -----

// A zero-initialized product whose only use scales it by a constant takes the scale
// as the call's alpha: x / 8 (1/8 is exact) and x * 0.7 fold; x / 3 does not.
// CHECK-LABEL: func.func @scaled
// CHECK: %[[P8:.*]] = linalg.contract {{.*}} {xhlo.blas, xhlo.blas_alpha = 1.250000e-01 : f64}
// CHECK: %[[P7:.*]] = linalg.contract {{.*}} {xhlo.blas, xhlo.blas_alpha = 0.69999998807907104 : f64}
// CHECK: %[[P3:.*]] = linalg.contract {{.*}} {xhlo.blas}
// CHECK: %[[D3:.*]] = linalg.generic {{.*}} ins(%[[P3]]
// CHECK: arith.divf
// CHECK: return %[[P8]], %[[P7]], %[[D3]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @scaled(%a: tensor<64x96xf32>, %b: tensor<96x80xf32>) -> (tensor<64x80xf32>, tensor<64x80xf32>, tensor<64x80xf32>) {
  %zero = arith.constant 0.0 : f32
  %eight = arith.constant 8.0 : f32
  %three = arith.constant 3.0 : f32
  %seven = arith.constant 0.7 : f32
  %e = tensor.empty() : tensor<64x80xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<64x80xf32>) -> tensor<64x80xf32>
  %p0 = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x80xf32>) outs(%z0 : tensor<64x80xf32>) -> tensor<64x80xf32>
  %s0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p0 : tensor<64x80xf32>) outs(%e : tensor<64x80xf32>) {
  ^bb0(%x: f32, %o: f32):
    %q = arith.divf %x, %eight : f32
    linalg.yield %q : f32
  } -> tensor<64x80xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e : tensor<64x80xf32>) -> tensor<64x80xf32>
  %p1 = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x80xf32>) outs(%z1 : tensor<64x80xf32>) -> tensor<64x80xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p1 : tensor<64x80xf32>) outs(%e : tensor<64x80xf32>) {
  ^bb0(%x: f32, %o: f32):
    %q = arith.mulf %seven, %x : f32
    linalg.yield %q : f32
  } -> tensor<64x80xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e : tensor<64x80xf32>) -> tensor<64x80xf32>
  %p2 = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x80xf32>) outs(%z2 : tensor<64x80xf32>) -> tensor<64x80xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p2 : tensor<64x80xf32>) outs(%e : tensor<64x80xf32>) {
  ^bb0(%x: f32, %o: f32):
    %q = arith.divf %x, %three : f32
    linalg.yield %q : f32
  } -> tensor<64x80xf32>
  return %s0, %s1, %s2 : tensor<64x80xf32>, tensor<64x80xf32>, tensor<64x80xf32>
}

// -----

// Batch dims (b, h) lead every operand; the rhs holds (n, k): BLAS transposes it.
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @batched_transposed_rhs
// CHECK: linalg.contract indexing_maps = [#[[Q]], #[[K]], #[[S]]] {xhlo.blas}
// CHECK-NOT: linalg.generic
func.func @batched_transposed_rhs(%q: tensor<2x8x64x32xf32>, %k: tensor<2x8x48x32xf32>, %s: tensor<2x8x64x48xf32>) -> tensor<2x8x64x48xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, k) -> (b, h, m, k)>, affine_map<(b, h, m, n, k) -> (b, h, n, k)>, affine_map<(b, h, m, n, k) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x8x64x32xf32>, tensor<2x8x48x32xf32>) outs(%s : tensor<2x8x64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x8x64x48xf32>
  return %0 : tensor<2x8x64x48xf32>
}

// -----

// The result's rows come from the second input: it becomes the contraction's lhs.
// CHECK-LABEL: func.func @rows_in_second_input
// CHECK-SAME: (%[[B:.*]]: tensor<96x80xf32>, %[[A:.*]]: tensor<64x96xf32>, %[[C:.*]]: tensor<64x80xf32>)
// CHECK: linalg.contract {{.*}} {xhlo.blas} ins(%[[A]], %[[B]] : tensor<64x96xf32>, tensor<96x80xf32>)
func.func @rows_in_second_input(%b: tensor<96x80xf32>, %a: tensor<64x96xf32>, %c: tensor<64x80xf32>) -> tensor<64x80xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%b, %a : tensor<96x80xf32>, tensor<64x96xf32>) outs(%c : tensor<64x80xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %p, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64x80xf32>
  return %0 : tensor<64x80xf32>
}

// -----

// Below min-volume (32^3 multiply-adds): analysed (generalized) but not tagged.
// CHECK-LABEL: func.func @too_small
// CHECK: linalg.generic
// CHECK-NOT: xhlo.blas
func.func @too_small(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// BLAS multiplies floats only.
// CHECK-LABEL: func.func @integer
// CHECK-NEXT: linalg.matmul ins
// CHECK-NOT: xhlo.blas
func.func @integer(%a: tensor<64x64xi32>, %b: tensor<64x64xi32>, %c: tensor<64x64xi32>) -> tensor<64x64xi32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x64xi32>, tensor<64x64xi32>) outs(%c : tensor<64x64xi32>) -> tensor<64x64xi32>
  return %0 : tensor<64x64xi32>
}

// -----

// A reduction that is not a multiply-accumulate is no matmul.
// CHECK-LABEL: func.func @not_a_product
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK-NOT: xhlo.blas
func.func @not_a_product(%a: tensor<64x96xf32>, %b: tensor<96x80xf32>, %c: tensor<64x80xf32>) -> tensor<64x80xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<64x96xf32>, tensor<96x80xf32>) outs(%c : tensor<64x80xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.addf %x, %y : f32
    %r = arith.maximumf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<64x80xf32>
  return %0 : tensor<64x80xf32>
}

// -----

// An NHWC convolution becomes patches[n, oh, ow, kh, kw, c] (a copy reading C
// contiguous channels per tap) collapsed into a 64x2304 matrix, times the
// collapsed 2304x32 filter (256 channels: beyond the direct loops).
// CHECK-DAG: #[[TAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d3, d2 + d4, d5)>
// CHECK-LABEL: func.func @convolution
// CHECK-SAME: (%[[X:.*]]: tensor<1x10x10x256xf32>, %[[W:.*]]: tensor<3x3x256x32xf32>, %[[O:.*]]: tensor<1x8x8x32xf32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<1x8x8x3x3x256xf32>
// CHECK: %[[PATCHES:.*]] = linalg.generic {indexing_maps = [#[[TAP]], #{{.*}}], {{.*}}} ins(%[[X]] : tensor<1x10x10x256xf32>) outs(%[[EMPTY]] : tensor<1x8x8x3x3x256xf32>)
// CHECK: %[[COLS:.*]] = tensor.collapse_shape %[[PATCHES]] {{\[}}[0, 1, 2], [3, 4, 5]] : tensor<1x8x8x3x3x256xf32> into tensor<64x2304xf32>
// CHECK: %[[FILTER:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0, 1, 2], [3]] : tensor<3x3x256x32xf32> into tensor<2304x32xf32>
// CHECK: %[[OUT:.*]] = tensor.collapse_shape %[[O]]
// CHECK: %[[P:.*]] = linalg.contract {{.*}} {xhlo.blas} ins(%[[COLS]], %[[FILTER]] : tensor<64x2304xf32>, tensor<2304x32xf32>) outs(%[[OUT]] : tensor<64x32xf32>)
// CHECK: tensor.expand_shape %[[P]]
func.func @convolution(%x: tensor<1x10x10x256xf32>, %w: tensor<3x3x256x32xf32>, %o: tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x10x10x256xf32>, tensor<3x3x256x32xf32>) outs(%o : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  return %0 : tensor<1x8x8x32xf32>
}

// -----

// Attention merging its heads before the output projection, as fusion leaves it: the
// lhs [b, h, q, d] interleaves rows (b, q) and inner loops (h, d), which no matrix
// describes. A transposed copy [b, q, h, d] of it makes the contraction a matmul.
// CHECK-DAG: #[[BQHD:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[HDN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d2)>
// CHECK-DAG: #[[BQN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @merged_heads
// CHECK-SAME: (%[[O:.*]]: tensor<2x4x32x16xf32>, %[[W:.*]]: tensor<4x16x48xf32>, %[[C:.*]]: tensor<2x32x48xf32>)
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<2x32x4x16xf32>
// CHECK-NEXT: %[[T:.*]] = linalg.transpose ins(%[[O]] : tensor<2x4x32x16xf32>) outs(%[[E]] : tensor<2x32x4x16xf32>) permutation = [0, 2, 1, 3]
// CHECK-NEXT: linalg.contract indexing_maps = [#[[BQHD]], #[[HDN]], #[[BQN]]] {xhlo.blas} ins(%[[T]], %[[W]] : {{.*}}) outs(%[[C]] : tensor<2x32x48xf32>)
#bhqd = affine_map<(b, q, n, h, d) -> (b, h, q, d)>
#hdn = affine_map<(b, q, n, h, d) -> (h, d, n)>
#bqn = affine_map<(b, q, n, h, d) -> (b, q, n)>
func.func @merged_heads(%o: tensor<2x4x32x16xf32>, %w: tensor<4x16x48xf32>, %c: tensor<2x32x48xf32>) -> tensor<2x32x48xf32> {
  %0 = linalg.generic {indexing_maps = [#bhqd, #hdn, #bqn], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%o, %w : tensor<2x4x32x16xf32>, tensor<4x16x48xf32>) outs(%c : tensor<2x32x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x32x48xf32>
  return %0 : tensor<2x32x48xf32>
}

// -----

// A transposed copy of an input (the StableHLO lowering's generic for `transpose`)
// is read through: the contraction takes W with a transposed map, which BLAS reads
// in place, and the copy is left dead.
// CHECK-DAG: #[[GK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[GN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @transposed_weight
// CHECK-SAME: (%[[W:.*]]: tensor<96x64xf32>, %[[G:.*]]: tensor<48x64xf32>, %[[C:.*]]: tensor<48x96xf32>)
// CHECK: linalg.contract indexing_maps = [#[[GK]], #[[NK]], #[[GN]]] {xhlo.blas} ins(%[[G]], %[[W]] : tensor<48x64xf32>, tensor<96x64xf32>)
#swap = affine_map<(d0, d1) -> (d1, d0)>
#same = affine_map<(d0, d1) -> (d0, d1)>
func.func @transposed_weight(%w: tensor<96x64xf32>, %g: tensor<48x64xf32>, %c: tensor<48x96xf32>) -> tensor<48x96xf32> {
  %e = tensor.empty() : tensor<64x96xf32>
  %t = linalg.generic {indexing_maps = [#swap, #same], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<96x64xf32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<64x96xf32>
  %0 = linalg.matmul ins(%g, %t : tensor<48x64xf32>, tensor<64x96xf32>) outs(%c : tensor<48x96xf32>) -> tensor<48x96xf32>
  return %0 : tensor<48x96xf32>
}

// -----

// A product whose only use transposes it, accumulated into +0.0, computes the
// transposed result directly into a fill of the result's shape (C^T = B^T A^T: the
// rows now come from the other input), replacing the transpose.
// CHECK-LABEL: func.func @transposed_product
// CHECK-SAME: (%[[A:.*]]: tensor<64x96xf32>, %[[B:.*]]: tensor<96x80xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<80x64xf32>
// CHECK: %[[Z:.*]] = linalg.fill {xhlo.blas} ins(%{{.*}} : f32) outs(%[[E]] : tensor<80x64xf32>)
// CHECK: %[[P:.*]] = linalg.contract {{.*}} {xhlo.blas} ins(%[[B]], %[[A]] : tensor<96x80xf32>, tensor<64x96xf32>) outs(%[[Z]] : tensor<80x64xf32>)
// CHECK: return %[[P]]
func.func @transposed_product(%a: tensor<64x96xf32>, %b: tensor<96x80xf32>) -> tensor<80x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x80xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x80xf32>) -> tensor<64x80xf32>
  %p = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x80xf32>) outs(%z : tensor<64x80xf32>) -> tensor<64x80xf32>
  %et = tensor.empty() : tensor<80x64xf32>
  %t = linalg.transpose ins(%p : tensor<64x80xf32>) outs(%et : tensor<80x64xf32>) permutation = [1, 0]
  return %t : tensor<80x64xf32>
}

// -----

// A convolution of 3 input channels into whole vectors of features would make an
// im2col matrix 49 times its image: it stays a convolution, tagged for
// xhlo-lower-direct-convolutions (and xhlo.blas, which xhlo-vectorize leaves
// alone), as does its +0.0 fill.
// CHECK-LABEL: func.func @rgb_stem
// CHECK: linalg.fill {xhlo.blas}
// CHECK: linalg.conv_2d_nhwc_hwcf {{{.*}}xhlo.blas, xhlo.direct_conv}
// CHECK-NOT: linalg.contract
func.func @rgb_stem(%x: tensor<2x70x70x3xf32>, %w: tensor<7x7x3x64xf32>) -> tensor<2x32x32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x32x64xf32>
  %o = linalg.fill ins(%zero : f32) outs(%e : tensor<2x32x32x64xf32>) -> tensor<2x32x32x64xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x70x70x3xf32>, tensor<7x7x3x64xf32>) outs(%o : tensor<2x32x32x64xf32>) -> tensor<2x32x32x64xf32>
  return %0 : tensor<2x32x32x64xf32>
}

// -----

// One channel into one feature (jnp.convolve of a long row): its im2col matrix would
// be 64 times the row for a matrix-vector product; tagged for the direct loops too.
// CHECK-LABEL: func.func @single_channel_filter
// CHECK: linalg.fill {xhlo.blas}
// CHECK: linalg.conv_2d_nhwc_hwcf {{{.*}}xhlo.blas, xhlo.direct_conv}
// CHECK-NOT: linalg.contract
func.func @single_channel_filter(%x: tensor<1x1x4159x1xf32>, %w: tensor<1x64x1x1xf32>) -> tensor<1x1x4096x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x4096x1xf32>
  %o = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x4096x1xf32>) -> tensor<1x1x4096x1xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x4159x1xf32>, tensor<1x64x1x1xf32>) outs(%o : tensor<1x1x4096x1xf32>) -> tensor<1x1x4096x1xf32>
  return %0 : tensor<1x1x4096x1xf32>
}

// -----

// The +0.0 fill of an im2col product's output: a fill of the product's own shape,
// tagged (canonicalization would otherwise move the reshape before the fill and
// make an untagged one, which a vectorized loop would write before the call).
// CHECK-LABEL: func.func @im2col_zero_init
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x32xf32>
// CHECK: %[[F:.*]] = linalg.fill {xhlo.blas} ins(%{{.*}} : f32) outs(%[[E]] : tensor<64x32xf32>)
// CHECK: linalg.contract {{.*}} {xhlo.blas} ins({{.*}}) outs(%[[F]] : tensor<64x32xf32>)
func.func @im2col_zero_init(%x: tensor<1x10x10x256xf32>, %w: tensor<3x3x256x32xf32>) -> tensor<1x8x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x32xf32>
  %o = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x10x10x256xf32>, tensor<3x3x256x32xf32>) outs(%o : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  return %0 : tensor<1x8x8x32xf32>
}

// -----

// JAX's dot_product_attention: the probabilities carry a one-long loop (d3) between
// the result's rows and columns, so no matrix view fits until the loop is dropped: the
// probabilities and the accumulator are read through rank-reducing slices (fusion folds
// reshapes back into the op, not slices), the product is inserted into a tensor of the
// old shape, and the values get a transposed copy whose batch dims lead.
// CHECK-LABEL: func.func @attention_values
// CHECK: %[[P:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [1, 2, 4, 128, 128] [1, 1, 1, 1, 1] : tensor<1x2x4x128x128xf32> to tensor<2x4x128x128xf32>
// CHECK: %[[V:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x128x4x32xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK: %[[R:.*]] = linalg.contract {{.*}} {xhlo.blas} ins(%[[V]], %[[P]] : tensor<2x4x32x128xf32>, tensor<2x4x128x128xf32>) {{.*}} -> tensor<2x4x32x128xf32>
// CHECK: tensor.insert_slice %[[R]] into %{{.*}}[0, 0, 0, 0, 0] [2, 4, 32, 1, 128] [1, 1, 1, 1, 1] : tensor<2x4x32x128xf32> into tensor<2x4x32x1x128xf32>
#v = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d5, d1, d2)>
#p = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d1, d4, d5)>
#o = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
func.func @attention_values(%v: tensor<2x128x4x32xf32>, %p: tensor<1x2x4x128x128xf32>) -> tensor<2x4x32x1x128xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x32x1x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x32x1x128xf32>) -> tensor<2x4x32x1x128xf32>
  %r = linalg.generic {indexing_maps = [#v, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%v, %p : tensor<2x128x4x32xf32>, tensor<1x2x4x128x128xf32>) outs(%init : tensor<2x4x32x1x128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x32x1x128xf32>
  return %r : tensor<2x4x32x1x128xf32>
}

// -----

// Fusion pulled a product's factors into its multiply-add body (a scaled tanh of x,
// a bf16 -> f32 conversion of w): they are computed in elementwise generics of their
// own again, each over the loops it reads, in its largest input's order, and the
// product of their results is a tagged contraction.
// CHECK-LABEL: func.func @fused_factors
// CHECK-SAME: (%[[X:.*]]: tensor<64x96xf32>, %[[G:.*]]: tensor<96xf32>, %[[W:.*]]: tensor<96x80xbf16>
// CHECK: %[[XS:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[G]] : tensor<64x96xf32>, tensor<96xf32>) outs(%{{.*}} : tensor<64x96xf32>)
// CHECK: math.tanh
// CHECK: arith.mulf
// CHECK: %[[WF:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<96x80xbf16>) outs(%{{.*}} : tensor<96x80xf32>)
// CHECK: arith.extf
// CHECK: linalg.contract {{.*}} {xhlo.blas} ins(%[[XS]], %[[WF]] : tensor<64x96xf32>, tensor<96x80xf32>)
func.func @fused_factors(%x: tensor<64x96xf32>, %g: tensor<96xf32>, %w: tensor<96x80xbf16>, %c: tensor<64x80xf32>) -> tensor<64x80xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %g, %w : tensor<64x96xf32>, tensor<96xf32>, tensor<96x80xbf16>) outs(%c : tensor<64x80xf32>) {
  ^bb0(%a: f32, %s: f32, %b: bf16, %acc: f32):
    %t = math.tanh %a : f32
    %ts = arith.mulf %t, %s : f32
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %ts, %bw : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<64x80xf32>
  return %0 : tensor<64x80xf32>
}

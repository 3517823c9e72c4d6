// RUN: xhlo-opt %s --xhlo-int8-gemm-operands="avx512-vnni=true" --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-int8-gemm-operands="avx512-vnni=false" --split-input-file | FileCheck %s --check-prefix=NOVNNI

#id = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// An i8 x i8 -> i32 product as xhlo-integer-dots-in-float leaves it (f32 copies,
// a tagged f32 product from a zero fill, converted back and dequantized): an
// i8 x i8 -> i32 contraction (signed extension) of the int8 tensors from a tagged i32 zero fill,
// whose i32 sums the dequantization reads directly.
// CHECK-LABEL: func.func @dequantized
// CHECK-SAME: (%[[A:.*]]: tensor<64x128xi8>, %[[B:.*]]: tensor<128x32xi8>
// CHECK: %[[FILL:.*]] = linalg.fill {xhlo.blas} ins(%{{.*}} : i32) outs(%{{.*}} : tensor<64x32xi32>)
// CHECK: %[[P:.*]] = linalg.contract {{.*}} {xhlo.blas} ins(%[[A]], %[[B]] : tensor<64x128xi8>, tensor<128x32xi8>) outs(%[[FILL]] : tensor<64x32xi32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<64x32xi32>)
// CHECK-NEXT: ^bb0(%[[S:.*]]: i32, %{{.*}}: f32):
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[S]] : i32 to f32
// CHECK-NEXT: arith.mulf %[[F]]
// Without AVX512-VNNI nothing changes.
// NOVNNI-LABEL: func.func @dequantized
// NOVNNI: linalg.contract {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x128xf32>, tensor<128x32xf32>)
func.func @dequantized(%a: tensor<64x128xi8>, %b: tensor<128x32xi8>) -> tensor<64x32xf32> {
  %ea = tensor.empty() : tensor<64x128xf32>
  %a32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x128xi8>) outs(%ea : tensor<64x128xf32>) {
  ^bb0(%x: i8, %o: f32):
    %e = arith.sitofp %x : i8 to f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  %eb = tensor.empty() : tensor<128x32xf32>
  %b32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<128x32xi8>) outs(%eb : tensor<128x32xf32>) {
  ^bb0(%x: i8, %o: f32):
    %e = arith.sitofp %x : i8 to f32
    linalg.yield %e : f32
  } -> tensor<128x32xf32>
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<64x32xf32>
  %c = linalg.fill {xhlo.blas} ins(%zero : f32) outs(%ec : tensor<64x32xf32>) -> tensor<64x32xf32>
  %p = linalg.contract indexing_maps = [#mk, #kn, #mn] {xhlo.blas} ins(%a32, %b32 : tensor<64x128xf32>, tensor<128x32xf32>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  %scale = arith.constant 0.01 : f32
  %er = tensor.empty() : tensor<64x32xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<64x32xf32>) outs(%er : tensor<64x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = arith.fptosi %x : f32 to i32
    %f = arith.sitofp %i : i32 to f32
    %s = arith.mulf %f, %scale : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A reader of the float sums themselves (here the return) reads their float form.
// Past 1024 inner elements f32 sums of int8 products are no longer exact: such a
// product stays (xhlo-integer-dots-in-float gives it f64, which this pass takes).
// CHECK-LABEL: func.func @float_reader
// CHECK: %[[P:.*]] = linalg.contract {{.*}} outs(%{{.*}} : tensor<64x32xi32>)
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<64x32xi32>) outs(%{{.*}} : tensor<64x32xf32>)
// CHECK: arith.sitofp
// CHECK: return %[[F]]
// CHECK-LABEL: func.func @inexact_in_f32
// CHECK: linalg.contract {{.*}} ins(%{{.*}}, %{{.*}} : tensor<16x2048xf32>, tensor<2048x16xf32>)
func.func @float_reader(%a: tensor<64x128xi8>, %b: tensor<128x32xi8>) -> tensor<64x32xf32> {
  %ea = tensor.empty() : tensor<64x128xf32>
  %a32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x128xi8>) outs(%ea : tensor<64x128xf32>) {
  ^bb0(%x: i8, %o: f32):
    %e = arith.sitofp %x : i8 to f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  %eb = tensor.empty() : tensor<128x32xf32>
  %b32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<128x32xi8>) outs(%eb : tensor<128x32xf32>) {
  ^bb0(%x: i8, %o: f32):
    %e = arith.sitofp %x : i8 to f32
    linalg.yield %e : f32
  } -> tensor<128x32xf32>
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<64x32xf32>
  %c = linalg.fill {xhlo.blas} ins(%zero : f32) outs(%ec : tensor<64x32xf32>) -> tensor<64x32xf32>
  %p = linalg.contract indexing_maps = [#mk, #kn, #mn] {xhlo.blas} ins(%a32, %b32 : tensor<64x128xf32>, tensor<128x32xf32>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %p : tensor<64x32xf32>
}
func.func @inexact_in_f32(%a: tensor<16x2048xi8>, %b: tensor<2048x16xi8>) -> tensor<16x16xf32> {
  %ea = tensor.empty() : tensor<16x2048xf32>
  %a32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<16x2048xi8>) outs(%ea : tensor<16x2048xf32>) {
  ^bb0(%x: i8, %o: f32):
    %e = arith.sitofp %x : i8 to f32
    linalg.yield %e : f32
  } -> tensor<16x2048xf32>
  %eb = tensor.empty() : tensor<2048x16xf32>
  %b32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<2048x16xi8>) outs(%eb : tensor<2048x16xf32>) {
  ^bb0(%x: i8, %o: f32):
    %e = arith.sitofp %x : i8 to f32
    linalg.yield %e : f32
  } -> tensor<2048x16xf32>
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill {xhlo.blas} ins(%zero : f32) outs(%ec : tensor<16x16xf32>) -> tensor<16x16xf32>
  %p = linalg.contract indexing_maps = [#mk, #kn, #mn] {xhlo.blas} ins(%a32, %b32 : tensor<16x2048xf32>, tensor<2048x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %p : tensor<16x16xf32>
}

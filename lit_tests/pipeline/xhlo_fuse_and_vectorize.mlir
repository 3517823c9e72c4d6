// Stage 3 of xhlo.compile: matmuls worth a BLAS call become tagged
// linalg.contract ops, elementwise ops fuse, and every other linalg op is
// tiled into SIMD-wide vector code.
// RUN: xhlo-opt %s --xhlo-fuse-and-vectorize | FileCheck %s
// RUN: xhlo-opt %s -p 'builtin.module(xhlo-fuse-and-vectorize)' | FileCheck %s

// The bias add and the relu fuse into one loop of 16-lane vectors; the matmul
// stays a separate contraction, tagged for BLAS, and so does the zero fill it
// accumulates into (xhlo-gemm-to-blas makes it beta = 0).
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<64x96xf32>, %[[W:.*]]: tensor<96x128xf32>, %[[B:.*]]: tensor<128xf32>)
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILLED:.*]] = linalg.fill {xhlo.blas} ins(%[[ZERO]] : f32)
// CHECK: %[[H:.*]] = linalg.contract {{.*}} {xhlo.blas} ins(%[[X]], %[[W]] : tensor<64x96xf32>, tensor<96x128xf32>) outs(%[[FILLED]] : tensor<64x128xf32>)
// CHECK: scf.for
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: tensor.extract_slice %[[H]]
// CHECK: tensor.extract_slice %[[B]][%[[J]]] [16] [1]
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: arith.maximumf %[[SUM]], %[[ZEROS]] : vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.matmul
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<64x96xf32>, %w: tensor<96x128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %h = linalg.matmul ins(%x, %w : tensor<64x96xf32>, tensor<96x128xf32>) outs(%acc : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e1 = tensor.empty() : tensor<64x128xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%h, %b : tensor<64x128xf32>, tensor<128xf32>) outs(%e1 : tensor<64x128xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %0 = arith.addf %a, %c : f32
    linalg.yield %0 : f32
  } -> tensor<64x128xf32>
  %e2 = tensor.empty() : tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.maximumf %a, %zero : f32
    linalg.yield %0 : f32
  } -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// RUN: xhlo-opt %s --xhlo-clone-broadcasts --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-clone-broadcasts --linalg-fuse-elementwise-ops --split-input-file | FileCheck %s --check-prefix=FUSED

// A broadcast read by two elementwise ops: the second reader gets its own copy
// (with its own tensor.empty), so fusion folds one copy into each reader and
// no full-size broadcast is left.
// CHECK-LABEL: func.func @read_twice
// CHECK-SAME: %[[ROW:[a-zA-Z0-9_]+]]: tensor<8xf32>
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[B2:.*]] = linalg.generic {{.*}} ins(%[[ROW]] : tensor<8xf32>) outs(%[[E2]] : tensor<4x8xf32>)
// CHECK: %[[B1:.*]] = linalg.generic {{.*}} ins(%[[ROW]] : tensor<8xf32>) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[B2]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[B1]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: arith.addf
// FUSED-LABEL: func.func @read_twice
// FUSED-NOT: ins(%{{.*}} : tensor<8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// FUSED: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>)
// FUSED: arith.mulf
// FUSED: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>)
// FUSED: arith.addf
#row = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @read_twice(%row: tensor<8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%row : tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %r = arith.mulf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %m, %a : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not copied: an op that computes (a copy would repeat its work), a transpose
// (same rank: each copy would read transposed), and a broadcast returned as is
// (a reader that is not a linalg op).
// CHECK-LABEL: func.func @left_alone
// CHECK: tensor.empty()
// CHECK-NOT: tensor.empty()
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
#row2 = affine_map<(d0, d1) -> (d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#t2 = affine_map<(d0, d1) -> (d1, d0)>
func.func @left_alone(%row: tensor<8xf32>, %sq: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<8x8xf32>
  %neg = linalg.generic {indexing_maps = [#row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%row : tensor<8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [#t2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sq : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x8xf32>
  %b = linalg.generic {indexing_maps = [#row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%row : tensor<8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x8xf32>
  %s1 = linalg.add ins(%neg, %t : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s2 = linalg.add ins(%neg, %t : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s3 = linalg.add ins(%b, %sq : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %s1, %s2, %s3, %b, %t : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

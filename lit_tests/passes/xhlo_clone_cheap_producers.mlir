// RUN: xhlo-opt %s --xhlo-clone-cheap-producers --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-clone-cheap-producers --linalg-fuse-elementwise-ops --split-input-file | FileCheck %s --check-prefix=FUSED

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

// -----

// A cheap elementwise op (x - mean) read by a reduction and by an elementwise op,
// each iterating once per element: each reader gets its own copy.
// CHECK-LABEL: func.func @centred_read_twice
// CHECK-COUNT-2: arith.subf
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
func.func @centred_read_twice(%x: tensor<4x8xf32>, %mean: tensor<4xf32>, %acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %out: f32):
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %ss = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %out, %sq : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %d = arith.mulf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %ss, %y : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// Not copied: a cheap op read by a product that reads each element 16 times (a copy
// would repeat its work per read), and one that reads an i1 tensor (its readers would
// no longer vectorize).
// CHECK-LABEL: func.func @not_worth_copying
// CHECK-COUNT-1: arith.negf
// CHECK-NOT: arith.negf
// CHECK-COUNT-1: arith.select
// CHECK-NOT: arith.select
#a3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#b3 = affine_map<(d0, d1, d2) -> (d2, d1)>
#c3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_worth_copying(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>, %acc: tensor<16x16xf32>, %mask: tensor<16x16xi1>)
    -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %e = tensor.empty() : tensor<16x16xf32>
  %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<16x16xf32>
  %p = linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%n, %w : tensor<16x16xf32>, tensor<16x16xf32>) outs(%acc : tensor<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %out, %m : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  %e1 = tensor.empty() : tensor<16x16xf32>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%n : tensor<16x16xf32>) outs(%e1 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mask, %x : tensor<16x16xi1>, tensor<16x16xf32>) outs(%e2 : tensor<16x16xf32>) {
  ^bb0(%m: i1, %a: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %v = arith.select %m, %a, %z : f32
    linalg.yield %v : f32
  } -> tensor<16x16xf32>
  %e3 = tensor.empty() : tensor<16x16xf32>
  %t1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e3 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %d = arith.mulf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<16x16xf32>
  %e4 = tensor.empty() : tensor<16x16xf32>
  %t2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e4 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<16x16xf32>
  return %p, %q, %t1, %t2 : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// Readers through a reshape read by them alone, and a reader that reads the
// producer twice (x * x): one copy per reader, the reshape reading its own.
// CHECK-LABEL: func.func @through_reshape_and_twice
// CHECK-COUNT-3: arith.subf
// CHECK: linalg.generic {{.*}} ins(%[[SQ:.*]], %[[SQ]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NOT: tensor.expand_shape %[[SQ]]
// CHECK: %[[R1:.*]] = tensor.expand_shape %[[C1:[^ ]*]]
// CHECK-NOT: tensor.expand_shape %[[C1]]
// CHECK: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @through_reshape_and_twice(%x: tensor<4x8xf32>, %mean: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4x1x8xf32>, tensor<4x1x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %out: f32):
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %c : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4x8xf32>
  %r1 = tensor.expand_shape %c [[0, 1], [2]] output_shape [4, 1, 8] : tensor<4x8xf32> into tensor<4x1x8xf32>
  %e2 = tensor.empty() : tensor<4x1x8xf32>
  %n1 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r1 : tensor<4x1x8xf32>) outs(%e2 : tensor<4x1x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x1x8xf32>
  %r2 = tensor.expand_shape %c [[0, 1], [2]] output_shape [4, 1, 8] : tensor<4x8xf32> into tensor<4x1x8xf32>
  %e3 = tensor.empty() : tensor<4x1x8xf32>
  %n2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r2 : tensor<4x1x8xf32>) outs(%e3 : tensor<4x1x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<4x1x8xf32>
  return %sq, %n1, %n2 : tensor<4x8xf32>, tensor<4x1x8xf32>, tensor<4x1x8xf32>
}

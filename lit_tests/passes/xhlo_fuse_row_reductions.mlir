// RUN: xhlo-opt %s --xhlo-fuse-row-reductions --split-input-file | FileCheck %s

// A softmax over rows of 256: the max, the exponentials, the sum and the division
// become one loop over the 8 rows; each row's temporaries are row-sized.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<8x256xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OUT:.*]] = %{{.*}})
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [1, 256] [1, 1]
// CHECK: %[[MAXINIT:.*]] = linalg.fill {{.*}} -> tensor<1xf32>
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[ROW]] : tensor<1x256xf32>) outs(%[[MAXINIT]] : tensor<1xf32>)
// CHECK: arith.maximumf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[ROW]], %[[MAX]] : tensor<1x256xf32>, tensor<1xf32>)
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<1x256xf32>)
// CHECK: arith.addf
// CHECK: %[[DIV:.*]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<1x256xf32>, tensor<1xf32>)
// CHECK: arith.divf
// CHECK: tensor.insert_slice %[[DIV]] into %[[OUT]][%[[I]], 0] [1, 256] [1, 1]
// CHECK: } {xhlo.parallel_loop}
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @softmax(%x: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x256xf32>) outs(%m0 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8x256xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<8x256xf32>, tensor<8xf32>) outs(%e1 : tensor<8x256xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<8x256xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<8x256xf32>) outs(%s0 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e3 = tensor.empty() : tensor<8x256xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %s : tensor<8x256xf32>, tensor<8xf32>) outs(%e3 : tensor<8x256xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %r = arith.divf %in, %sum : f32
    linalg.yield %r : f32
  } -> tensor<8x256xf32>
  return %y : tensor<8x256xf32>
}

// -----

// The row maxima are also a result: the max is not fused (a copy in the loop would
// compute it twice), and without a fusable reduction nothing changes.
// CHECK-LABEL: func.func @reduction_read_outside
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @reduction_read_outside(%x: tensor<8x256xf32>) -> (tensor<8x256xf32>, tensor<8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x256xf32>) outs(%m0 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8x256xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<8x256xf32>, tensor<8xf32>) outs(%e1 : tensor<8x256xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %r = arith.subf %in, %mx : f32
    linalg.yield %r : f32
  } -> tensor<8x256xf32>
  return %y, %m : tensor<8x256xf32>, tensor<8xf32>
}

// -----

// A column sum read along rows: a row of the consumer needs every row of the input,
// so nothing is fused.
// CHECK-LABEL: func.func @column_reduction
// CHECK-NOT: scf.for
// CHECK: iterator_types = ["reduction", "parallel"]
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @column_reduction(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<256xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<256xf32>) -> tensor<256xf32>
  %s = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<256x256xf32>) outs(%s0 : tensor<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %e1 = tensor.empty() : tensor<256x256xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<256x256xf32>, tensor<256xf32>) outs(%e1 : tensor<256x256xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %r = arith.divf %in, %sum : f32
    linalg.yield %r : f32
  } -> tensor<256x256xf32>
  return %y : tensor<256x256xf32>
}

// -----

// Rows of 16 elements vectorize better across rows: left alone.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT: scf.for
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @short_rows(%x: tensor<512x16xf32>) -> tensor<512x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<512xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<512xf32>) -> tensor<512xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<512x16xf32>) outs(%s0 : tensor<512xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<512xf32>
  %e1 = tensor.empty() : tensor<512x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<512x16xf32>, tensor<512xf32>) outs(%e1 : tensor<512x16xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %r = arith.divf %in, %sum : f32
    linalg.yield %r : f32
  } -> tensor<512x16xf32>
  return %y : tensor<512x16xf32>
}

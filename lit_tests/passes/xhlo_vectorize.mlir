// RUN: xhlo-opt %s --xhlo-vectorize --split-input-file | FileCheck %s

// An elementwise op with identity maps is flattened to one loop of 16-lane tiles.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[A:.*]]: tensor<8x64xf32>, %[[B:.*]]: tensor<8x64xf32>)
// CHECK: %[[FA:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1]] : tensor<8x64xf32> into tensor<512xf32>
// CHECK: %[[LOOP:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[C16:.*]] iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<512xf32>)
// CHECK: %[[SA:.*]] = tensor.extract_slice %[[FA]][%[[I]]] [16] [1]
// CHECK: %[[X:.*]] = vector.transfer_read %[[SA]]{{.*}} : tensor<16xf32>, vector<16xf32>
// CHECK: %[[Y:.*]] = vector.transfer_read {{.*}} : tensor<16xf32>, vector<16xf32>
// CHECK: %[[S:.*]] = arith.addf %[[X]], %[[Y]] : vector<16xf32>
// CHECK: %[[E:.*]] = math.exp %[[S]] : vector<16xf32>
// CHECK: vector.transfer_write %[[E]]
// CHECK: tensor.insert_slice {{.*}} into %[[OUT]][%[[I]]] [16] [1]
// CHECK: tensor.expand_shape %[[LOOP]]
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%a: tensor<8x64xf32>, %b: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = math.exp %s : f32
    linalg.yield %t : f32
  } -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// A reduction along the contiguous loop keeps 4 x 16 partial sums in a vector
// carried by the loop (reassociated), folded into the output at the end.
// CHECK-LABEL: func.func @row_sum
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<64xf32>
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<8xf32>)
// CHECK: %[[PARTIAL:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (vector<64xf32>)
// CHECK: %[[X:.*]] = vector.transfer_read {{.*}} : tensor<1x64xf32>, vector<64xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[X]], %[[ACC]] : vector<64xf32>
// CHECK: scf.yield %[[SUM]] : vector<64xf32>
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [1] : vector<1x64xf32> to vector<1xf32>
// CHECK-NOT: linalg.generic
func.func @row_sum(%a: tensor<8x1024xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<8x1024xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A reduction subtracting from its accumulator (a negation fused into a sum) is a sum
// of negated values: vectorized like any sum (partial differences from zero, added to
// the output at the end), not left a scalar loop.
// CHECK-LABEL: func.func @row_difference
// CHECK: %[[PARTIAL:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<64xf32>)
// CHECK: %[[X:.*]] = vector.transfer_read {{.*}} : tensor<1x64xf32>, vector<64xf32>
// CHECK: %[[DIFF:.*]] = arith.subf %[[ACC]], %[[X]] : vector<64xf32>
// CHECK: scf.yield %[[DIFF]] : vector<64xf32>
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [1] : vector<1x64xf32> to vector<1xf32>
// CHECK-NOT: linalg.generic
func.func @row_difference(%a: tensor<8x1024xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<8x1024xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %d = arith.subf %acc, %x : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A reduction across rows vectorizes the parallel (contiguous) loop instead: the
// whole row of 48 is one vector accumulated in registers over the 100 rows.
// CHECK-LABEL: func.func @column_sum
// CHECK-SAME: (%[[A:.*]]: tensor<100x48xf32>, %[[INIT:.*]]: tensor<48xf32>)
// CHECK: %[[START:.*]] = vector.transfer_read %[[INIT]]{{.*}} : tensor<48xf32>, vector<48xf32>
// CHECK: %[[SUMS:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[START]]) -> (vector<48xf32>)
// CHECK: %[[ROW:.*]] = vector.transfer_read {{.*}} : tensor<1x48xf32>, vector<48xf32>
// CHECK: arith.addf %[[ACC]], %[[ROW]] : vector<48xf32>
// CHECK: vector.transfer_write %[[SUMS]], %[[INIT]]
func.func @column_sum(%a: tensor<100x48xf32>, %init: tensor<48xf32>) -> tensor<48xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<100x48xf32>) outs(%init : tensor<48xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<48xf32>
  return %0 : tensor<48xf32>
}

// -----

// (a[:, None] + b[None]).max(1): b is read one element per step, broadcast over the
// tile, so the vector loop takes 4 vectors (64 rows) at a time: four independent
// maximum chains per step, not one bound by its latency.
// CHECK-LABEL: func.func @max_of_broadcast_sum
// CHECK: scf.for %{{.*}} = %c0 to %c4096 step %c64
// CHECK: scf.for {{.*}} -> (vector<64xf32>)
// CHECK: vector.broadcast %{{.*}} : vector<1xf32> to vector<64xf32>
// CHECK: arith.maximumf %{{.*}} : vector<64xf32>
func.func @max_of_broadcast_sum(%a: tensor<4096xf32>, %b: tensor<4096xf32>, %init: tensor<4096xf32>) -> tensor<4096xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a, %b : tensor<4096xf32>, tensor<4096xf32>) outs(%init : tensor<4096xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %acc, %s : f32
    linalg.yield %m : f32
  } -> tensor<4096xf32>
  return %0 : tensor<4096xf32>
}

// -----

// 1001 is no multiple of 16 (or 8): the last tile of each row is masked.
// CHECK-LABEL: func.func @masked_remainder
// CHECK: scf.for
// CHECK: scf.for %{{.*}} step %[[C16:.*]] iter_args
// CHECK: %[[N:.*]] = affine.min
// CHECK: %[[MASK:.*]] = vector.create_mask %[[N]] : vector<16xi1>
// CHECK: vector.transfer_read %{{.*}}, %{{.*}}, %[[MASK]] {in_bounds = [true]} : tensor<1x?xf32>, vector<16xf32>
// CHECK: arith.subf {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<1x?xf32>
func.func @masked_remainder(%a: tensor<3x1001xf32>, %b: tensor<1001xf32>) -> tensor<3x1001xf32> {
  %e = tensor.empty() : tensor<3x1001xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<3x1001xf32>, tensor<1001xf32>) outs(%e : tensor<3x1001xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<3x1001xf32>
  return %0 : tensor<3x1001xf32>
}

// -----

// Tiling slices a reversed access wrongly: such ops keep their scalar lowering.
// CHECK-LABEL: func.func @reverse_stays_scalar
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @reverse_stays_scalar(%a: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (-d0 + 63)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// Vectors of i1 are bit-packed in memory, i1 tensors are not: left alone.
// CHECK-LABEL: func.func @bool_result_stays_scalar
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @bool_result_stays_scalar(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xi1> {
  %e = tensor.empty() : tensor<64xi1>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xi1>) {
  ^bb0(%x: f32, %y: f32, %o: i1):
    %c = arith.cmpf olt, %x, %y : f32
    linalg.yield %c : i1
  } -> tensor<64xi1>
  return %0 : tensor<64xi1>
}

// -----

// A gather from an i1 tensor (tensor.extract in the body) is left scalar too.
// CHECK-LABEL: func.func @bool_gather_stays_scalar
// CHECK: linalg.generic
// CHECK-NOT: vector.transfer_read
// CHECK: return
func.func @bool_gather_stays_scalar(%m: tensor<3x8xi1>, %row: index) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<8xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 0 : index
    %b = tensor.extract %m[%row, %j] : tensor<3x8xi1>
    %f = arith.uitofp %b : i1 to f32
    linalg.yield %f : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Matmuls tagged for BLAS are neither generalized nor tiled.
// CHECK-LABEL: func.func @blas_matmul_untouched
// CHECK-NEXT: linalg.matmul {xhlo.blas}
// CHECK-NOT: vector.
func.func @blas_matmul_untouched(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = linalg.matmul {xhlo.blas} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// A window access (d0 + d1), as convolutions and pooling lower to: the window
// loop is tiled by one and folded away, leaving a 32-wide slice of x per tap.
// CHECK-LABEL: func.func @window
// CHECK-SAME: (%[[X:.*]]: tensor<34xf32>
// CHECK: %[[ACC:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<32xf32>)
// CHECK: %[[TAP:.*]] = tensor.extract_slice %[[X]][%[[K]]] [32] [1] : tensor<34xf32> to tensor<32xf32>
// CHECK: vector.transfer_read %[[TAP]]{{.*}} : tensor<32xf32>, vector<32xf32>
// CHECK: arith.mulf {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.generic
func.func @window(%x: tensor<34xf32>, %w: tensor<3xf32>, %init: tensor<32xf32>) -> tensor<32xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %w : tensor<34xf32>, tensor<3xf32>) outs(%init : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// A transpose reads its input in square blocks of one vector a side: the block loops
// run on the thread pool, the vector loop within a block is serial, and each input
// cache line a block touches is read whole.
// CHECK-LABEL: func.func @transpose
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[C16:.*]] iter_args
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[C16]] iter_args
// CHECK: tensor.extract_slice %{{.*}}[%[[J]], %[[I]]] [16, 16] [1, 1] : tensor<64x128xf32> to tensor<16x16xf32>
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<16x1xf32>, vector<16xf32>
// CHECK: scf.yield %{{.*}} : tensor<16x16xf32>
// CHECK-NEXT: }{{$}}
// CHECK: } {xhlo.parallel_loop}
// CHECK: } {xhlo.parallel_loop}
func.func @transpose(%a: tensor<64x128xf32>, %out: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x128xf32>) outs(%out : tensor<128x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<128x64xf32>
  return %0 : tensor<128x64xf32>
}

// -----

// One of two outputs taking the vector loop along another dimension than its innermost
// one (a fused contraction's zero-filled output, transposed): a transposed transfer
// that the cleanup patterns, in one greedy set, rewrote back and forth until memory
// ran out. With the permutation patterns applied after the others it vectorizes.
// CHECK-LABEL: func.func @transposed_second_output
// CHECK-NOT: linalg.generic
// CHECK: vector.transfer_write {{.*}} : vector<64x1xf32>, tensor<1x64x1xf32>
// CHECK-NEXT: vector.transfer_write {{.*}} : vector<64xf32>, tensor<1x1x64xf32>
// CHECK-NOT: linalg.generic
#in = affine_map<(d0, d1, d2) -> (d0, d2)>
#transposed = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#identity = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @transposed_second_output(%a: tensor<8x64xf32>) -> tensor<8x64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x64x64xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x64x64xf32>) -> tensor<8x64x64xf32>
  %e1 = tensor.empty() : tensor<8x64x64xf32>
  %0:2 = linalg.generic {indexing_maps = [#in, #transposed, #identity], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<8x64xf32>) outs(%filled, %e1 : tensor<8x64x64xf32>, tensor<8x64x64xf32>) {
  ^bb0(%x: f32, %acc: f32, %unused: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s, %s : f32, f32
  } -> (tensor<8x64x64xf32>, tensor<8x64x64xf32>)
  return %0#1 : tensor<8x64x64xf32>
}

// -----

// A producer's math fused into a broadcasting consumer: the tile loop along the
// broadcast dimension would repeat it; it is hoisted into the enclosing tile loop.
// CHECK-LABEL: func.func @broadcast_consumer
// CHECK: scf.for
// CHECK: math.tanh
// CHECK: scf.for
// CHECK-NOT: math.tanh
// CHECK: arith.mulf
#row = affine_map<(d0, d1, d2) -> (d0, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @broadcast_consumer(%g: tensor<8x64xf32>, %x: tensor<8x64xf32>) -> tensor<8x64x64xf32> {
  %e = tensor.empty() : tensor<8x64x64xf32>
  %0 = linalg.generic {indexing_maps = [#row, #col, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%g, %x : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %unused: f32):
    %t = math.tanh %a : f32
    %p = arith.mulf %t, %b : f32
    linalg.yield %p : f32
  } -> tensor<8x64x64xf32>
  return %0 : tensor<8x64x64xf32>
}

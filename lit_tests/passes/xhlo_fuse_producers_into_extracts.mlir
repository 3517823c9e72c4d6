// RUN: xhlo-opt %s --xhlo-fuse-producers-into-extracts --split-input-file | FileCheck %s

// A gather of one element per row from x - row_max (a broadcast input): the
// gather body reads x and the row's max where it reads the difference, and the
// 4x8 difference is no longer computed.
// CHECK-LABEL: func.func @gather_of_difference
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[M:.*]]: tensor<4xf32>, %[[IDX:.*]]: tensor<4xindex>)
// CHECK-NOT: arith.subf
// CHECK: linalg.generic
// CHECK: %[[ROW:.*]] = linalg.index 0 : index
// CHECK: %[[XV:.*]] = tensor.extract %[[X]][%[[ROW]], %{{.*}}] : tensor<4x8xf32>
// CHECK: %[[MV:.*]] = tensor.extract %[[M]][%[[ROW]]] : tensor<4xf32>
// CHECK: %[[D:.*]] = arith.subf %[[XV]], %[[MV]] : f32
// CHECK: linalg.yield %[[D]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id1 = affine_map<(d0) -> (d0)>
func.func @gather_of_difference(%x: tensor<4x8xf32>, %m: tensor<4xf32>, %idx: tensor<4xindex>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %g = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%idx : tensor<4xindex>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%i: index, %out: f32):
    %r = linalg.index 0 : index
    %v = tensor.extract %d[%r, %i] : tensor<4x8xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// 64 reads of an 8-element exp table: fusing would compute exp 64 times instead
// of 8, so the table stays.
// CHECK-LABEL: func.func @gather_larger_than_its_operand
// CHECK: %[[T:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK: tensor.extract %[[T]]
// CHECK-NOT: math.exp
#id1 = affine_map<(d0) -> (d0)>
func.func @gather_larger_than_its_operand(%x: tensor<8xf32>, %idx: tensor<64xindex>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<64xf32>
  %g = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%idx : tensor<64xindex>) outs(%e1 : tensor<64xf32>) {
  ^bb0(%i: index, %out: f32):
    %v = tensor.extract %t[%i] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %g : tensor<64xf32>
}

// -----

// A reduction is no elementwise producer: its extract stays.
// CHECK-LABEL: func.func @gather_of_a_reduction
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: tensor.extract %[[S]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id1 = affine_map<(d0) -> (d0)>
func.func @gather_of_a_reduction(%x: tensor<4x8xf32>, %init: tensor<4xf32>, %idx: tensor<2xindex>) -> tensor<2xf32> {
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<2xf32>
  %g = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%idx : tensor<2xindex>) outs(%e1 : tensor<2xf32>) {
  ^bb0(%i: index, %out: f32):
    %v = tensor.extract %s[%i] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<2xf32>
  return %g : tensor<2xf32>
}

// -----

// A producer whose body has regions (a concatenate's scf.if) stays: ops nested in
// a copy would still read the producer's block.
// CHECK-LABEL: func.func @producer_with_regions
// CHECK: %[[C:.*]] = linalg.generic
// CHECK: scf.if
// CHECK: linalg.generic
// CHECK: tensor.extract %[[C]]
#id1 = affine_map<(d0) -> (d0)>
func.func @producer_with_regions(%a: tensor<8xf32>, %b: tensor<8xf32>, %idx: tensor<4xindex>) -> tensor<4xf32> {
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e : tensor<8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %lt = arith.cmpi ult, %i, %c4 : index
    %v = scf.if %lt -> (f32) {
      %x = tensor.extract %a[%i] : tensor<8xf32>
      scf.yield %x : f32
    } else {
      %x = tensor.extract %b[%i] : tensor<8xf32>
      scf.yield %x : f32
    }
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %g = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%idx : tensor<4xindex>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%i: index, %out: f32):
    %v = tensor.extract %c[%i] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// A producer read elsewhere too stays whole, and the gather reads it: a copy in the
// gather would repeat its work (chains of index updates in a binary search would
// copy each other over and over).
// CHECK-LABEL: func.func @producer_read_twice
// CHECK: %[[T:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK: tensor.extract %[[T]]
// CHECK-NOT: math.exp
// CHECK: return
#id1 = affine_map<(d0) -> (d0)>
func.func @producer_read_twice(%x: tensor<64xf32>, %idx: tensor<8xindex>) -> (tensor<8xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %t = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %g = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%idx : tensor<8xindex>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%i: index, %out: f32):
    %v = tensor.extract %t[%i] : tensor<64xf32>
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %g, %t : tensor<8xf32>, tensor<64xf32>
}

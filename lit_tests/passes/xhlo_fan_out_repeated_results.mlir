// RUN: xhlo-opt %s --xhlo-fan-out-repeated-results --split-input-file | FileCheck %s

// An all_reduce fold kernel's block, returned once per member: one generic with an
// output per place, each yielding the same value (one loop stores every copy).
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @fold
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-DAG: %[[E0:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-DAG: %[[E1:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<8xf32>, tensor<8xf32>) outs(%[[E0]], %[[E1]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: %[[S:.*]] = arith.addf
// CHECK: linalg.yield %[[S]], %[[S]] : f32, f32
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @fold(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r, %r : tensor<8xf32>, tensor<8xf32>
}

// -----

// Three places among others: the first keeps result 0, the repeats take the new ones;
// other uses of the value read result 0.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @three_places
// CHECK: %[[R:.*]]:3 = linalg.generic
// CHECK: linalg.yield %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32
// CHECK: %[[N:.*]] = arith.negf
// CHECK: %[[U:.*]] = tensor.insert %{{.*}} into %[[R]]#0
// CHECK: return %[[R]]#0, %[[U]], %[[R]]#1, %[[R]]#2
func.func @three_places(%a: tensor<4xf32>, %f: f32) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %n = arith.negf %f : f32
  %u = tensor.insert %n into %r[%c0] : tensor<4xf32>
  return %r, %u, %r, %r : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Left alone: a reduction (its loops are not all parallel) and a value no generic makes.
#map = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
// CHECK-NOT: linalg.generic
// CHECK: return %{{.*}}, %{{.*}}, %[[A:.*]], %[[A]]
func.func @left_alone(%a: tensor<4xf32>, %init: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>) {
  %r = linalg.generic {indexing_maps = [#map, #sum], iterator_types = ["reduction"]}
      ins(%a : tensor<4xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r, %r, %a, %a : tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

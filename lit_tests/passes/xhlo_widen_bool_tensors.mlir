// RUN: xhlo-opt %s --xhlo-widen-bool-tensors --split-input-file | FileCheck %s

// A mask read by two selects is stored as i8: extended before the yield, truncated
// at the top of each reader.
// CHECK-LABEL: func.func @mask_for_two_selects
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<64xi8>
// CHECK: %[[MASK:.*]] = linalg.generic {{.*}} outs(%[[EMPTY]] : tensor<64xi8>)
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: i8):
// CHECK: %[[BIT:.*]] = arith.cmpf olt
// CHECK: %[[BYTE:.*]] = arith.extui %[[BIT]] : i1 to i8
// CHECK: linalg.yield %[[BYTE]] : i8
// CHECK: } -> tensor<64xi8>
// CHECK: linalg.generic {{.*}} ins(%[[MASK]], %{{.*}}, %{{.*}} : tensor<64xi8>, tensor<64xf32>, tensor<64xf32>)
// CHECK: ^bb0(%[[M1:.*]]: i8,
// CHECK-NEXT: %[[B1:.*]] = arith.trunci %[[M1]] : i8 to i1
// CHECK-NEXT: arith.select %[[B1]]
// CHECK: linalg.generic {{.*}} ins(%[[MASK]], %{{.*}}, %{{.*}} : tensor<64xi8>, tensor<64xf32>, tensor<64xf32>)
// CHECK: ^bb0(%[[M2:.*]]: i8,
// CHECK-NEXT: %[[B2:.*]] = arith.trunci %[[M2]] : i8 to i1
#id = affine_map<(d0) -> (d0)>
func.func @mask_for_two_selects(%a: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e1 = tensor.empty() : tensor<64xi1>
  %mask = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%e1 : tensor<64xi1>) {
  ^bb0(%x: f32, %y: f32, %o: i1):
    %lt = arith.cmpf olt, %x, %y : f32
    linalg.yield %lt : i1
  } -> tensor<64xi1>
  %e2 = tensor.empty() : tensor<64xf32>
  %min = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%mask, %a, %b : tensor<64xi1>, tensor<64xf32>, tensor<64xf32>) outs(%e2 : tensor<64xf32>) {
  ^bb0(%m: i1, %x: f32, %y: f32, %o: f32):
    %s = arith.select %m, %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %max = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%mask, %b, %a : tensor<64xi1>, tensor<64xf32>, tensor<64xf32>) outs(%e2 : tensor<64xf32>) {
  ^bb0(%m: i1, %x: f32, %y: f32, %o: f32):
    %s = arith.select %m, %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %min, %max : tensor<64xf32>, tensor<64xf32>
}

// -----

// A mask the function returns keeps its i1 type.
// CHECK-LABEL: func.func @returned_mask
// CHECK: -> tensor<8xi1>
// CHECK-NOT: arith.extui
#id = affine_map<(d0) -> (d0)>
func.func @returned_mask(%a: tensor<8xf32>) -> tensor<8xi1> {
  %e = tensor.empty() : tensor<8xi1>
  %mask = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xi1>) {
  ^bb0(%x: f32, %o: i1):
    %zero = arith.constant 0.0 : f32
    %lt = arith.cmpf olt, %x, %zero : f32
    linalg.yield %lt : i1
  } -> tensor<8xi1>
  return %mask : tensor<8xi1>
}

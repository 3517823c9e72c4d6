// RUN: xhlo-opt %s --xhlo-lower-sort --split-input-file --verify-diagnostics | FileCheck %s

// One operand: rows are [1, 5]; the first pass merges the input into buffer A,
// the later passes go A -> B -> A; an elementwise comparator becomes a 0-d map
// on views of the two elements, written into a one-element tensor of its own
// (a scalar once xhlo-scalarize-rank0-tensors has run; the loop over the rows
// is marked for the thread pool).

// CHECK-LABEL: func.func @one_operand
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<5xf32>
// CHECK: %[[ROWS:.*]] = stablehlo.reshape %[[X]] : (tensor<5xf32>) -> tensor<1x5xf32>
// CHECK: %[[A0:.*]] = tensor.empty() : tensor<1x5xf32>
// CHECK: %[[B0:.*]] = tensor.empty() : tensor<1x5xf32>
// CHECK: %[[SORTED:.*]]:2 = scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[A0]], %[[B:.*]] = %[[B0]])
// CHECK: %[[FIRST:.*]] = scf.for %[[LO:.*]] = %{{.*}} iter_args(%[[OUT:.*]] = %[[A]]) -> (tensor<1x5xf32>)
// CHECK: scf.for %[[K:.*]] = %[[LO]] to %{{.*}} iter_args(%[[I:.*]] = %[[LO]], %[[J:.*]] = %{{.*}}, %[[DST:.*]] = %[[OUT]])
// CHECK: %[[BOTH:.*]] = arith.andi
// CHECK: %[[PICK:.*]] = scf.if %[[BOTH]] -> (i1)
// CHECK: %[[RIGHT:.*]] = tensor.extract_slice %[[ROWS]][%[[ROW]], %[[J]]] [1, 1] [1, 1] : tensor<1x5xf32> to tensor<f32>
// CHECK: %[[LEFT:.*]] = tensor.extract_slice %[[ROWS]][%[[ROW]], %[[I]]] [1, 1] [1, 1] : tensor<1x5xf32> to tensor<f32>
// CHECK: %[[MAP:.*]] = "stablehlo.map"(%[[RIGHT]], %[[LEFT]]) <{dimensions = array<i64>}>
// CHECK: stablehlo.compare LT, %{{.*}}, %{{.*}}, TOTALORDER
// CHECK: %[[F:.*]] = tensor.empty() : tensor<1xi1>
// CHECK: %[[SET:.*]] = tensor.insert_slice %[[MAP]] into %[[F]][0] [1] [1] : tensor<i1> into tensor<1xi1>
// CHECK: %[[TAKE:.*]] = tensor.extract %[[SET]][%{{.*}}] : tensor<1xi1>
// CHECK: scf.yield %[[TAKE]] : i1
// CHECK: } else {
// CHECK: scf.yield %{{.*}} : i1
// CHECK: %[[POS:.*]] = arith.select %[[PICK]], %[[J]], %[[I]] : index
// CHECK: %[[V:.*]] = tensor.extract %[[ROWS]][%[[ROW]], %[[POS]]] : tensor<1x5xf32>
// CHECK: tensor.insert %[[V]] into %[[DST]][%[[ROW]], %[[K]]] : tensor<1x5xf32>
// CHECK: %[[PAIRS:.*]]:2 = scf.for %[[Q:.*]] = {{.*}} iter_args(%{{.*}} = %[[FIRST]], %{{.*}} = %[[B]])
// CHECK: arith.shli
// CHECK: "stablehlo.map"
// CHECK: "stablehlo.map"
// CHECK: scf.yield %[[PAIRS]]#0, %[[PAIRS]]#1
// CHECK: } {xhlo.parallel_loop}
// CHECK: %[[RESULT:.*]] = stablehlo.reshape %[[SORTED]]#0 : (tensor<1x5xf32>) -> tensor<5xf32>
// CHECK: return %[[RESULT]]
// CHECK-NOT: stablehlo.sort
func.func @one_operand(%x: tensor<5xf32>) -> tensor<5xf32> {
  %r = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<5xf32>) -> tensor<5xf32>
  return %r : tensor<5xf32>
}

// -----

// Sorting dimension 0 of 4x3: the operands are transposed to 3 rows of 4; the
// map receives (keys at j, keys at i, payload at j, payload at i) and both
// operands move by the same position.

// CHECK-LABEL: func.func @columns_with_payload
// CHECK-SAME: %[[K:[a-zA-Z0-9_]+]]: tensor<4x3xi32>, %[[V:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[KT:.*]] = stablehlo.transpose %[[K]], dims = [1, 0] : (tensor<4x3xi32>) -> tensor<3x4xi32>
// CHECK: %[[VT:.*]] = stablehlo.transpose %[[V]], dims = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
// CHECK: %[[SORTED:.*]]:4 = scf.for
// CHECK: %[[K1:.*]] = tensor.extract_slice %[[KT]]
// CHECK: %[[K2:.*]] = tensor.extract_slice %[[KT]]
// CHECK: %[[V1:.*]] = tensor.extract_slice %[[VT]]
// CHECK: %[[V2:.*]] = tensor.extract_slice %[[VT]]
// CHECK: "stablehlo.map"(%[[K1]], %[[K2]], %[[V1]], %[[V2]])
// CHECK: ^bb0(%{{.*}}: tensor<i32>, %{{.*}}: tensor<i32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>):
// CHECK: stablehlo.compare GT, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[POS:.*]] = arith.select
// CHECK: tensor.extract %[[KT]][%{{.*}}, %[[POS]]] : tensor<3x4xi32>
// CHECK: tensor.extract %[[VT]][%{{.*}}, %[[POS]]] : tensor<3x4xf32>
// CHECK: %[[KS:.*]] = stablehlo.transpose %[[SORTED]]#0, dims = [1, 0] : (tensor<3x4xi32>) -> tensor<4x3xi32>
// CHECK: %[[VS:.*]] = stablehlo.transpose %[[SORTED]]#1, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
// CHECK: return %[[KS]], %[[VS]]
func.func @columns_with_payload(%k: tensor<4x3xi32>, %v: tensor<4x3xf32>) -> (tensor<4x3xi32>, tensor<4x3xf32>) {
  %r:2 = "stablehlo.sort"(%k, %v) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<f32>):
    %p = stablehlo.compare GT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<4x3xi32>, tensor<4x3xf32>) -> (tensor<4x3xi32>, tensor<4x3xf32>)
  return %r#0, %r#1 : tensor<4x3xi32>, tensor<4x3xf32>
}

// -----

// A comparator with shape ops cannot become a scalar map: it is inlined on the
// 0-d views instead.

// CHECK-LABEL: func.func @shape_op_comparator
// CHECK-NOT: stablehlo.map
// CHECK: scf.if
// CHECK: %[[RIGHT:.*]] = tensor.extract_slice
// CHECK: %[[LEFT:.*]] = tensor.extract_slice
// CHECK: %[[R1:.*]] = stablehlo.reshape %[[RIGHT]] : (tensor<f32>) -> tensor<1xf32>
// CHECK: %[[L1:.*]] = stablehlo.reshape %[[LEFT]] : (tensor<f32>) -> tensor<1xf32>
// CHECK: %[[LT:.*]] = stablehlo.compare LT, %[[R1]], %[[L1]], FLOAT
// CHECK: %[[LT0:.*]] = stablehlo.reshape %[[LT]] : (tensor<1xi1>) -> tensor<i1>
// CHECK: %[[TAKE:.*]] = tensor.extract %[[LT0]][] : tensor<i1>
// CHECK: scf.yield %[[TAKE]]
// CHECK-NOT: stablehlo.map
func.func @shape_op_comparator(%x: tensor<6xf32>) -> tensor<6xf32> {
  %r = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %a1 = stablehlo.reshape %a : (tensor<f32>) -> tensor<1xf32>
    %b1 = stablehlo.reshape %b : (tensor<f32>) -> tensor<1xf32>
    %p1 = stablehlo.compare LT, %a1, %b1, FLOAT : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    %p = stablehlo.reshape %p1 : (tensor<1xi1>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<6xf32>) -> tensor<6xf32>
  return %r : tensor<6xf32>
}

// -----

// Nothing to sort along a length-1 or zero-size dimension: the operands are the results.

// CHECK-LABEL: func.func @length_one
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<3x1xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<0x4xi32>
// CHECK-NEXT: return %[[X]], %[[Y]] : tensor<3x1xf32>, tensor<0x4xi32>
func.func @length_one(%x: tensor<3x1xf32>, %y: tensor<0x4xi32>) -> (tensor<3x1xf32>, tensor<0x4xi32>) {
  %r = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 1 : i64} : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %s = "stablehlo.sort"(%y) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %p = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 1 : i64} : (tensor<0x4xi32>) -> tensor<0x4xi32>
  return %r, %s : tensor<3x1xf32>, tensor<0x4xi32>
}

// -----

func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{stablehlo.sort with dynamic shapes is not supported}}
  %r = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// Only the first k of a row are read (chlo.top_k's slices) and the row is at least 8x
// longer: a partial sort keeps k elements per row, inserting each element that must
// precede the k-th kept (an scf.while shifts the kept ones up), and the slices go.
// CHECK-LABEL: func.func @top_four_of_sixty_four
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.while
// CHECK: scf.condition
// CHECK-NOT: stablehlo.slice
// CHECK-NOT: stablehlo.sort
// CHECK: return %{{.*}} : tensor<3x4xf32>
func.func @top_four_of_sixty_four(%x: tensor<3x64xf32>) -> tensor<3x4xf32> {
  %s = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<3x64xf32>) -> tensor<3x64xf32>
  %top = stablehlo.slice %s [0:3, 0:4] : (tensor<3x64xf32>) -> tensor<3x4xf32>
  return %top : tensor<3x4xf32>
}

// -----

// From k = 128 on, the kept elements are a heap instead: row positions kept beside
// them (ties go by position), the first k copied, then one loop over the three
// phases (64 heapify steps, 896 scanned elements, 127 drain steps: 1087), each step
// under an scf.if a sift-down (a loop over the heap's 7 levels) after the root is
// replaced (scan) or swapped out (drain). No scf.while (the insertion's shifts). The
// rows run on the thread pool.
// CHECK-LABEL: func.func @top_128_of_1024
// CHECK: tensor.empty() : tensor<2x128xindex>
// CHECK: scf.for %{{.*}} = %{{.*}} to %c128 step
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1087 step
// CHECK: scf.if
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %{{.*}} to %c7 step
// CHECK-NOT: scf.while
// CHECK: } {xhlo.parallel_loop}
// CHECK-NOT: stablehlo.sort
// CHECK: return %{{.*}} : tensor<2x128xf32>
func.func @top_128_of_1024(%x: tensor<2x1024xf32>) -> tensor<2x128xf32> {
  %s = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<2x1024xf32>) -> tensor<2x1024xf32>
  %top = stablehlo.slice %s [0:2, 0:128] : (tensor<2x1024xf32>) -> tensor<2x128xf32>
  return %top : tensor<2x128xf32>
}

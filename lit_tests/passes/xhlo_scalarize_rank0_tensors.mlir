// RUN: xhlo-opt %s --xhlo-scalarize-rank0-tensors --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-scalarize-rank0-tensors --canonicalize --split-input-file | FileCheck %s --check-prefix=FOLD

// A counted loop's rank-0 state is carried as its element; the rank-0 add is scalar.
// CHECK-LABEL: func.func @counter
// CHECK-SAME: (%[[INIT:.*]]: tensor<i64>, %[[X:.*]]: tensor<4xf32>)
// CHECK: %[[START:.*]] = tensor.extract %[[INIT]][] : tensor<i64>
// CHECK: %[[LOOP:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[I:.*]] = %[[START]], %[[ACC:.*]] = %[[X]]) -> (i64, tensor<4xf32>) {
// CHECK: %[[I_T:.*]] = tensor.from_elements %[[I]] : tensor<i64>
// CHECK: %[[IN:.*]] = tensor.extract %[[I_T]][] : tensor<i64>
// CHECK: %[[NEXT:.*]] = arith.addi %[[IN]], %{{.*}} : i64
// CHECK: %[[NEXT_T:.*]] = tensor.from_elements %[[NEXT]] : tensor<i64>
// CHECK: %[[OUT:.*]] = tensor.extract %[[NEXT_T]][] : tensor<i64>
// CHECK: scf.yield %[[OUT]], %[[ACC]] : i64, tensor<4xf32>
// CHECK: %[[RESULT:.*]] = tensor.from_elements %[[LOOP]]#0 : tensor<i64>
// CHECK: return %[[RESULT]], %[[LOOP]]#1
// CHECK-NOT: linalg.generic
// FOLD-LABEL: func.func @counter
// FOLD: scf.for {{.*}} iter_args(%[[I:.*]] = %{{.*}}) -> (i64) {
// FOLD-NEXT: %[[NEXT:.*]] = arith.addi %[[I]], %{{.*}} : i64
// FOLD-NEXT: scf.yield %[[NEXT]] : i64
#scalar = affine_map<() -> ()>
func.func @counter(%init: tensor<i64>, %x: tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1 : i64
  %0:2 = scf.for %iv = %c0 to %c8 step %c1 iter_args(%i = %init, %acc = %x) -> (tensor<i64>, tensor<4xf32>) {
    %empty = tensor.empty() : tensor<i64>
    %next = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
        ins(%i : tensor<i64>) outs(%empty : tensor<i64>) {
    ^bb0(%in: i64, %out: i64):
      %sum = arith.addi %in, %one : i64
      linalg.yield %sum : i64
    } -> tensor<i64>
    scf.yield %next, %acc : tensor<i64>, tensor<4xf32>
  }
  return %0#0, %0#1 : tensor<i64>, tensor<4xf32>
}

// -----

// scf.while: the carried and the forwarded rank-0 values are scalars on both sides.
// CHECK-LABEL: func.func @while_loop
// CHECK: %[[R:.*]]:2 = scf.while (%[[A:.*]] = %{{.*}}, %[[B:.*]] = %{{.*}}) : (i32, tensor<2xf32>) -> (i32, tensor<2xf32>) {
// CHECK: scf.condition(%{{.*}}) %{{.*}}, %[[B]] : i32, tensor<2xf32>
// CHECK: } do {
// CHECK: ^bb0(%[[C:.*]]: i32, %[[D:.*]]: tensor<2xf32>):
// CHECK: scf.yield %{{.*}}, %[[D]] : i32, tensor<2xf32>
// CHECK: tensor.from_elements %[[R]]#0 : tensor<i32>
func.func @while_loop(%n: tensor<i32>, %x: tensor<2xf32>) -> (tensor<i32>, tensor<2xf32>) {
  %limit = arith.constant 10 : i32
  %0:2 = scf.while (%a = %n, %b = %x) : (tensor<i32>, tensor<2xf32>) -> (tensor<i32>, tensor<2xf32>) {
    %v = tensor.extract %a[] : tensor<i32>
    %go = arith.cmpi slt, %v, %limit : i32
    scf.condition(%go) %a, %b : tensor<i32>, tensor<2xf32>
  } do {
  ^bb0(%c: tensor<i32>, %d: tensor<2xf32>):
    %v = tensor.extract %c[] : tensor<i32>
    %w = arith.muli %v, %v : i32
    %e = tensor.from_elements %w : tensor<i32>
    scf.yield %e, %d : tensor<i32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<i32>, tensor<2xf32>
}

// -----

// A branch's rank-0 result comes out as a scalar.
// CHECK-LABEL: func.func @branch
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: scf.yield %{{.*}} : f32
// CHECK: } else {
// CHECK: scf.yield %{{.*}} : f32
// CHECK: tensor.from_elements %[[R]] : tensor<f32>
func.func @branch(%p: i1, %x: tensor<f32>, %y: tensor<f32>) -> tensor<f32> {
  %0 = scf.if %p -> (tensor<f32>) {
    scf.yield %x : tensor<f32>
  } else {
    scf.yield %y : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

// A one-element window written back (a scatter's combine) is a tensor.insert.
// CHECK-LABEL: func.func @window
// CHECK-SAME: (%[[DEST:.*]]: tensor<10xf32>, %[[V:.*]]: f32, %[[AT:.*]]: index)
// CHECK: %[[R:.*]] = tensor.insert %[[V]] into %[[DEST]][%[[AT]]] : tensor<10xf32>
// CHECK: return %[[R]]
// CHECK-NOT: tensor.insert_slice
func.func @window(%dest: tensor<10xf32>, %v: f32, %at: index) -> tensor<10xf32> {
  %t = tensor.from_elements %v : tensor<f32>
  %w = tensor.expand_shape %t [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %r = tensor.insert_slice %w into %dest[%at] [1] [1] : tensor<1xf32> into tensor<10xf32>
  return %r : tensor<10xf32>
}

// -----

// Larger tensors and multi-element windows stay as they are.
// CHECK-LABEL: func.func @untouched
// CHECK: linalg.generic
// CHECK: tensor.insert_slice
func.func @untouched(%x: tensor<4xf32>, %dest: tensor<10xf32>) -> tensor<10xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %r = tensor.insert_slice %y into %dest[2] [4] [1] : tensor<4xf32> into tensor<10xf32>
  return %r : tensor<10xf32>
}

// -----

// One element of any rank counts as a scalar (JAX on one element carries tensor<1xT>):
// the loop carries f32, the generics are their bodies run once (linalg.index is 0, the
// reduction combines its one element with the init), read and written at index 0.
// CHECK-LABEL: func.func @one_element
// CHECK: %[[START:.*]] = tensor.extract %arg0[%{{.*}}] : tensor<1xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[START]]) -> (f32) {
// CHECK-NOT: linalg.generic
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK: arith.addf
// CHECK: tensor.from_elements %{{.*}} : tensor<1x1xf32>
// CHECK: scf.yield %{{.*}} : f32
// CHECK: tensor.from_elements %{{.*}} : tensor<1xf32>
// FOLD-LABEL: func.func @one_element
// FOLD: scf.for {{.*}} -> (f32) {
// FOLD-NOT: tensor.
// FOLD: scf.yield %{{.*}} : f32
#id1 = affine_map<(d0) -> (d0)>
#to2 = affine_map<(d0, d1) -> (d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> ()>
func.func @one_element(%x: tensor<1xf32>) -> tensor<1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %iv = %c0 to %c4 step %c1 iter_args(%a = %x) -> (tensor<1xf32>) {
    %e1 = tensor.empty() : tensor<1xf32>
    %iota = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e1 : tensor<1xf32>) {
    ^bb0(%out: f32):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i64
      %f = arith.sitofp %ii : i64 to f32
      linalg.yield %f : f32
    } -> tensor<1xf32>
    %e2 = tensor.empty() : tensor<1x1xf32>
    %wide = linalg.generic {indexing_maps = [#to2, #to2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%a, %iota : tensor<1xf32>, tensor<1xf32>) outs(%e2 : tensor<1x1xf32>) {
    ^bb0(%p: f32, %q: f32, %out: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    } -> tensor<1x1xf32>
    %zero = arith.constant 0.0 : f32
    %init = tensor.from_elements %zero : tensor<f32>
    %sum = linalg.generic {indexing_maps = [#id2, #red], iterator_types = ["reduction", "reduction"]}
        ins(%wide : tensor<1x1xf32>) outs(%init : tensor<f32>) {
    ^bb0(%in: f32, %acc: f32):
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    %next = tensor.expand_shape %sum [] output_shape [1] : tensor<f32> into tensor<1xf32>
    scf.yield %next : tensor<1xf32>
  }
  return %r : tensor<1xf32>
}

// RUN: xhlo-opt %s --xhlo-legalize-control-flow --split-input-file | FileCheck %s

// stablehlo.while -> scf.while: the condition's tensor<i1> is extracted for
// scf.condition, the body's stablehlo.return becomes scf.yield.
// CHECK-LABEL: func.func @count_up
// CHECK-SAME: (%[[START:.*]]: tensor<i32>, %[[LIMIT:.*]]: tensor<i32>)
// CHECK: %[[LOOP:.*]] = scf.while (%[[I:.*]] = %[[START]]) : (tensor<i32>) -> tensor<i32> {
// CHECK-NEXT: %[[LESS:.*]] = stablehlo.compare LT, %[[I]], %[[LIMIT]]
// CHECK-NEXT: %[[FLAG:.*]] = tensor.extract %[[LESS]][] : tensor<i1>
// CHECK-NEXT: scf.condition(%[[FLAG]]) %[[I]] : tensor<i32>
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[J:.*]]: tensor<i32>):
// CHECK-NEXT: %[[NEXT:.*]] = stablehlo.add %[[J]], %[[J]]
// CHECK-NEXT: scf.yield %[[NEXT]] : tensor<i32>
// CHECK: return %[[LOOP]] : tensor<i32>
// CHECK-NOT: stablehlo.while
func.func @count_up(%start: tensor<i32>, %limit: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.while(%i = %start) : tensor<i32>
   cond {
    %1 = stablehlo.compare LT, %i, %limit : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %2 = stablehlo.add %i, %i : tensor<i32>
    stablehlo.return %2 : tensor<i32>
  }
  return %0 : tensor<i32>
}

// -----

// stablehlo.if -> scf.if on the extracted predicate, branches kept on tensors.
// CHECK-LABEL: func.func @choose
// CHECK-SAME: (%[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<3xf32>)
// CHECK: %[[FLAG:.*]] = tensor.extract %[[P]][] : tensor<i1>
// CHECK-NEXT: %[[R:.*]]:2 = scf.if %[[FLAG]] -> (tensor<3xf32>, tensor<3xf32>) {
// CHECK-NEXT: %[[ABS:.*]] = stablehlo.abs %[[X]]
// CHECK-NEXT: scf.yield %[[ABS]], %[[X]] : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[NEG:.*]] = stablehlo.negate %[[X]]
// CHECK-NEXT: scf.yield %[[NEG]], %[[X]] : tensor<3xf32>, tensor<3xf32>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @choose(%p: tensor<i1>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = "stablehlo.if"(%p) ({
    %1 = stablehlo.abs %x : tensor<3xf32>
    stablehlo.return %1, %x : tensor<3xf32>, tensor<3xf32>
  }, {
    %2 = stablehlo.negate %x : tensor<3xf32>
    stablehlo.return %2, %x : tensor<3xf32>, tensor<3xf32>
  }) : (tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// stablehlo.case -> scf.index_switch: branches 0..N-2 are cases, the last
// branch is the default (so out-of-range indices run it, as the spec says).
// CHECK-LABEL: func.func @three_way
// CHECK-SAME: (%[[INDEX:.*]]: tensor<i32>, %[[X:.*]]: tensor<f32>)
// CHECK: %[[I:.*]] = tensor.extract %[[INDEX]][] : tensor<i32>
// CHECK-NEXT: %[[IDX:.*]] = arith.index_cast %[[I]] : i32 to index
// CHECK-NEXT: %[[R:.*]] = scf.index_switch %[[IDX]] -> tensor<f32>
// CHECK-NEXT: case 0 {
// CHECK-NEXT: %[[A:.*]] = stablehlo.abs %[[X]]
// CHECK-NEXT: scf.yield %[[A]]
// CHECK: case 1 {
// CHECK-NEXT: %[[N:.*]] = stablehlo.negate %[[X]]
// CHECK-NEXT: scf.yield %[[N]]
// CHECK: default {
// CHECK-NEXT: %[[E:.*]] = stablehlo.exponential %[[X]]
// CHECK-NEXT: scf.yield %[[E]]
// CHECK: return %[[R]]
func.func @three_way(%index: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.case"(%index) ({
    %1 = stablehlo.abs %x : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }, {
    %2 = stablehlo.negate %x : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }, {
    %3 = stablehlo.exponential %x : tensor<f32>
    stablehlo.return %3 : tensor<f32>
  }) : (tensor<i32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Nested control flow: the inner if is lowered too, inside the scf.while body.
// CHECK-LABEL: func.func @nested
// CHECK: scf.while
// CHECK: } do {
// CHECK: scf.if
// CHECK: scf.yield
// CHECK-NOT: stablehlo.if
// CHECK-NOT: stablehlo.while
func.func @nested(%n: tensor<i32>, %p: tensor<i1>) -> tensor<i32> {
  %0 = stablehlo.while(%i = %n) : tensor<i32>
   cond {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare GT, %i, %c0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %2 = "stablehlo.if"(%p) ({
      %c1 = stablehlo.constant dense<1> : tensor<i32>
      %3 = stablehlo.subtract %i, %c1 : tensor<i32>
      stablehlo.return %3 : tensor<i32>
    }, {
      %c2 = stablehlo.constant dense<2> : tensor<i32>
      %4 = stablehlo.subtract %i, %c2 : tensor<i32>
      stablehlo.return %4 : tensor<i32>
    }) : (tensor<i1>) -> tensor<i32>
    stablehlo.return %2 : tensor<i32>
  }
  return %0 : tensor<i32>
}

// -----

// A counted loop (constant start, `counter < bound` with a constant bound, the
// body adding 1) becomes scf.for with the static trip count, 7 - 2 = 5; the
// counter stays carried because the body may read it.
// CHECK-LABEL: func.func @fori_loop
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-DAG: %[[START:.*]] = stablehlo.constant dense<2> : tensor<i32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[TRIPS:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[LOOP:.*]]:2 = scf.for %{{.*}} = %[[ZERO]] to %[[TRIPS]] step %[[ONE]] iter_args(%[[I:.*]] = %[[START]], %[[V:.*]] = %[[X]]) -> (tensor<i32>, tensor<8xf32>) {
// CHECK: %[[NEXT:.*]] = stablehlo.add %[[I]], %{{.*}} : tensor<i32>
// CHECK: %[[SIN:.*]] = stablehlo.sine %[[V]]
// CHECK: scf.yield %[[NEXT]], %[[SIN]] : tensor<i32>, tensor<8xf32>
// CHECK: return %[[LOOP]]#1
// CHECK-NOT: scf.while
func.func @fori_loop(%x: tensor<8xf32>) -> tensor<8xf32> {
  %start = stablehlo.constant dense<2> : tensor<i32>
  %limit = stablehlo.constant dense<7> : tensor<i32>
  %0:2 = stablehlo.while(%i = %start, %v = %x) : tensor<i32>, tensor<8xf32>
   cond {
    %1 = stablehlo.compare LT, %i, %limit, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.add %i, %one : tensor<i32>
    %3 = stablehlo.sine %v : tensor<8xf32>
    stablehlo.return %2, %3 : tensor<i32>, tensor<8xf32>
  }
  return %0#1 : tensor<8xf32>
}

// -----

// The bound may be a carried value the body passes on unchanged (fori_loop with
// the bounds in the carry); a start above the bound runs no iteration.
// CHECK-LABEL: func.func @carried_bound
// CHECK: %[[TRIPS:.*]] = arith.constant 0 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[TRIPS]]
func.func @carried_bound(%x: tensor<8xf32>) -> tensor<8xf32> {
  %start = stablehlo.constant dense<9> : tensor<i64>
  %limit = stablehlo.constant dense<4> : tensor<i64>
  %0:3 = stablehlo.while(%i = %start, %n = %limit, %v = %x) : tensor<i64>, tensor<i64>, tensor<8xf32>
   cond {
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i64>
    %2 = stablehlo.add %one, %i : tensor<i64>
    stablehlo.return %2, %n, %v : tensor<i64>, tensor<i64>, tensor<8xf32>
  }
  return %0#2 : tensor<8xf32>
}

// -----

// Not counted: the body changes the bound, so the loop stays an scf.while.
// CHECK-LABEL: func.func @moving_bound
// CHECK: scf.while
// CHECK-NOT: scf.for
func.func @moving_bound(%x: tensor<8xf32>) -> tensor<8xf32> {
  %start = stablehlo.constant dense<0> : tensor<i32>
  %limit = stablehlo.constant dense<4> : tensor<i32>
  %0:3 = stablehlo.while(%i = %start, %n = %limit, %v = %x) : tensor<i32>, tensor<i32>, tensor<8xf32>
   cond {
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.add %i, %one : tensor<i32>
    %3 = stablehlo.subtract %n, %one : tensor<i32>
    stablehlo.return %2, %3, %v : tensor<i32>, tensor<i32>, tensor<8xf32>
  }
  return %0#2 : tensor<8xf32>
}

// RUN: xhlo-opt %s --xhlo-unroll-short-loops --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-unroll-short-loops="min-elements=1" --split-input-file | FileCheck %s --check-prefix=SMALL

// Three steps of x = x * 2 + i over a 65536-element array: the body three
// times, each step reading the previous one's values; no loop is left.

// CHECK-LABEL: func.func @three_steps
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<65536xf32>
// CHECK-NOT: stablehlo.while
// CHECK: %[[A:.*]] = stablehlo.multiply %[[X]], %{{.*}} : tensor<65536xf32>
// CHECK: %[[B:.*]] = stablehlo.add %[[A]], %{{.*}} : tensor<65536xf32>
// CHECK: %[[C:.*]] = stablehlo.multiply %[[B]], %{{.*}} : tensor<65536xf32>
// CHECK: %[[D:.*]] = stablehlo.add %[[C]], %{{.*}} : tensor<65536xf32>
// CHECK: %[[E:.*]] = stablehlo.multiply %[[D]], %{{.*}} : tensor<65536xf32>
// CHECK: %[[F:.*]] = stablehlo.add %[[E]], %{{.*}} : tensor<65536xf32>
// CHECK-NOT: stablehlo.while
// CHECK: return %[[F]]
func.func @three_steps(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %two = stablehlo.constant dense<2.0> : tensor<65536xf32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<65536xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %m = stablehlo.multiply %v, %two : tensor<65536xf32>
    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %fb = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<65536xf32>
    %s = stablehlo.add %m, %fb : tensor<65536xf32>
    %n = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %n, %s : tensor<i32>, tensor<65536xf32>
  }
  return %r#1 : tensor<65536xf32>
}

// -----

// Small state (a 16-element array) stays a loop; with min-elements=1 it is unrolled.

// CHECK-LABEL: func.func @small_state
// CHECK: stablehlo.while
// SMALL-LABEL: func.func @small_state
// SMALL-NOT: stablehlo.while
// SMALL: return
func.func @small_state(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<16xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %s = stablehlo.add %v, %v : tensor<16xf32>
    %n = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %n, %s : tensor<i32>, tensor<16xf32>
  }
  return %r#1 : tensor<16xf32>
}

// -----

// Too many steps (100 > max-trips), and a loop whose bound is not a constant
// (not counted), stay loops.

// CHECK-LABEL: func.func @long_and_uncounted
// CHECK: stablehlo.while
// CHECK: stablehlo.while
func.func @long_and_uncounted(%x: tensor<65536xf32>, %n: tensor<i32>) -> (tensor<65536xf32>, tensor<65536xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c100 = stablehlo.constant dense<100> : tensor<i32>
  %a:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<65536xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %c100, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %s = stablehlo.add %v, %v : tensor<65536xf32>
    %m = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %m, %s : tensor<i32>, tensor<65536xf32>
  }
  %b:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<65536xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %s = stablehlo.add %v, %v : tensor<65536xf32>
    %m = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %m, %s : tensor<i32>, tensor<65536xf32>
  }
  return %a#1, %b#1 : tensor<65536xf32>, tensor<65536xf32>
}

// -----

// A loop holding a call (collectives become runtime calls) stays a loop: each
// unrolled copy would be a call site of its own.

// CHECK-LABEL: func.func @with_a_call
// CHECK: stablehlo.while
func.func @with_a_call(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c2 = stablehlo.constant dense<2> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<65536xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %c2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %s = stablehlo.custom_call @exchange(%v) : (tensor<65536xf32>) -> tensor<65536xf32>
    %n = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %n, %s : tensor<i32>, tensor<65536xf32>
  }
  return %r#1 : tensor<65536xf32>
}

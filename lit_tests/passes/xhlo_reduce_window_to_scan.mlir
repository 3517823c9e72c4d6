// RUN: xhlo-opt %s --xhlo-reduce-window-to-scan --split-input-file | FileCheck %s

// JAX's cumsum along axis 1: window 8 = the axis, 7 padding elements before it.
// A loop over the rows encloses the scan, which carries the running sum as a scalar.
// CHECK-LABEL: func.func @cumsum
// CHECK-SAME: (%[[X:.*]]: tensor<5x8xf32>)
// CHECK: %[[START:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<5x8xf32>
// CHECK: %[[R:.*]] = scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OUT:.*]] = %[[EMPTY]])
// CHECK: %[[SCAN:.*]]:2 = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[T:.*]] = %[[OUT]], %[[ACC:.*]] = %[[START]]) -> (tensor<5x8xf32>, f32)
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[ROW]], %[[J]]] : tensor<5x8xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK: %[[NEXT:.*]] = tensor.insert %[[SUM]] into %[[T]][%[[ROW]], %[[J]]] : tensor<5x8xf32>
// CHECK: scf.yield %[[NEXT]], %[[SUM]]
// CHECK: scf.yield %[[SCAN]]#0
// CHECK: return %[[R]]
// CHECK-NOT: stablehlo.reduce_window
func.func @cumsum(%x: tensor<5x8xf32>) -> tensor<5x8xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[0, 0], [7, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 8>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<5x8xf32>, tensor<f32>) -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

// Padding after the axis: a suffix scan, from the last element down. Unsigned
// integers are scanned as signless ones (maxui) through unrealized casts.
// CHECK-LABEL: func.func @reverse_cummax_unsigned
// CHECK: %[[START:.*]] = builtin.unrealized_conversion_cast %{{.*}} : ui8 to i8
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[T:.*]] = %{{.*}}, %[[ACC:.*]] = %[[START]]) -> (tensor<6xui8>, i8)
// CHECK: %[[POS:.*]] = arith.subi %{{.*}}, %[[J]] : index
// CHECK: %[[V:.*]] = tensor.extract %{{.*}}[%[[POS]]] : tensor<6xui8>
// CHECK: %[[S:.*]] = builtin.unrealized_conversion_cast %[[V]] : ui8 to i8
// CHECK: %[[M:.*]] = arith.maxui %[[ACC]], %[[S]] : i8
// CHECK: %[[U:.*]] = builtin.unrealized_conversion_cast %[[M]] : i8 to ui8
// CHECK: tensor.insert %[[U]] into %[[T]][%[[POS]]]
func.func @reverse_cummax_unsigned(%x: tensor<6xui8>) -> tensor<6xui8> {
  %init = stablehlo.constant dense<0> : tensor<ui8>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[0, 5]]> : tensor<1x2xi64>, window_dimensions = array<i64: 6>}> ({
  ^bb0(%a: tensor<ui8>, %b: tensor<ui8>):
    %r = stablehlo.maximum %a, %b : tensor<ui8>
    stablehlo.return %r : tensor<ui8>
  }) : (tensor<6xui8>, tensor<ui8>) -> tensor<6xui8>
  return %0 : tensor<6xui8>
}

// -----

// A window shorter than the axis is no prefix: kept.
// CHECK-LABEL: func.func @sliding_window_untouched
// CHECK: stablehlo.reduce_window
func.func @sliding_window_untouched(%x: tensor<8xf32>) -> tensor<8xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[2, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Init 1.0 is not the identity of add: the padding elements would add to the result.
// CHECK-LABEL: func.func @non_identity_init_untouched
// CHECK: stablehlo.reduce_window
func.func @non_identity_init_untouched(%x: tensor<8xf32>) -> tensor<8xf32> {
  %init = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[7, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 8>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Along a dimension with 8 or more elements after it (JAX's cumsum over axis 0 of a
// matrix): one loop over the axis carrying the running row, combined with each row
// by the body's op on tensors, so the rows are read in order and the add vectorizes.
// CHECK-LABEL: func.func @cumsum_rows
// CHECK-SAME: (%[[X:.*]]: tensor<6x16xf32>)
// CHECK: %[[ROW0:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<16xf32>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<6x16xf32>
// CHECK: %[[R:.*]]:2 = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[T:.*]] = %[[EMPTY]], %[[ACC:.*]] = %[[ROW0]]) -> (tensor<6x16xf32>, tensor<16xf32>)
// CHECK: %[[SLAB:.*]] = stablehlo.dynamic_slice %[[X]]
// CHECK: %[[ROW:.*]] = stablehlo.reshape %[[SLAB]] : (tensor<1x16xf32>) -> tensor<16xf32>
// CHECK: %[[SUM:.*]] = stablehlo.add %[[ACC]], %[[ROW]] : tensor<16xf32>
// CHECK: %[[BACK:.*]] = stablehlo.reshape %[[SUM]] : (tensor<16xf32>) -> tensor<1x16xf32>
// CHECK: %[[NEXT:.*]] = stablehlo.dynamic_update_slice %[[T]], %[[BACK]]
// CHECK: scf.yield %[[NEXT]], %[[SUM]]
// CHECK: return %[[R]]#0
func.func @cumsum_rows(%x: tensor<6x16xf32>) -> tensor<6x16xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[5, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 6, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<6x16xf32>, tensor<f32>) -> tensor<6x16xf32>
  return %0 : tensor<6x16xf32>
}

// -----

// A body of several ops (JAX's cumlogsumexp) scans when body(init, init) folds to
// init (-inf): the body is inlined on 0-d tensors of the running value and the element.
// CHECK-LABEL: func.func @cumlogsumexp
// CHECK: scf.for
// CHECK: %[[V:.*]] = tensor.extract %{{.*}} : tensor<5xf32>
// CHECK: %[[E:.*]] = tensor.from_elements %[[V]] : tensor<f32>
// CHECK: stablehlo.exponential
// CHECK: stablehlo.log_plus_one
// CHECK: %[[R:.*]] = stablehlo.select
// CHECK: tensor.extract %[[R]][] : tensor<f32>
// CHECK-NOT: stablehlo.reduce_window
func.func @cumlogsumexp(%x: tensor<5xf32>) -> tensor<5xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[4, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 5>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    %d = stablehlo.subtract %a, %b : tensor<f32>
    %isnan = stablehlo.compare NE, %d, %d, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %sum = stablehlo.add %a, %b : tensor<f32>
    %abs = stablehlo.abs %d : tensor<f32>
    %neg = stablehlo.negate %abs : tensor<f32>
    %e = stablehlo.exponential %neg : tensor<f32>
    %l = stablehlo.log_plus_one %e : tensor<f32>
    %r0 = stablehlo.add %m, %l : tensor<f32>
    %r = stablehlo.select %isnan, %sum, %r0 : tensor<i1>, tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// From 0.0, log-add-exp of two padding elements is log 2: the padding changes every
// window, so the window lowering stays.
// CHECK-LABEL: func.func @padding_counts
// CHECK: stablehlo.reduce_window
func.func @padding_counts(%x: tensor<5xf32>) -> tensor<5xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[4, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 5>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    %d = stablehlo.subtract %a, %b : tensor<f32>
    %abs = stablehlo.abs %d : tensor<f32>
    %neg = stablehlo.negate %abs : tensor<f32>
    %e = stablehlo.exponential %neg : tensor<f32>
    %l = stablehlo.log_plus_one %e : tensor<f32>
    %r = stablehlo.add %m, %l : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// A short suffix window of float sums keeps the window lowering: window i folds
// x[i], x[i + 1], ... in that order, which a reverse scan would not. Longer ones scan.
// CHECK-LABEL: func.func @short_reverse_cumsum
// CHECK: stablehlo.reduce_window
// CHECK-LABEL: func.func @long_reverse_cumsum
// CHECK-NOT: stablehlo.reduce_window
// CHECK: scf.for
func.func @short_reverse_cumsum(%x: tensor<16xf32>) -> tensor<16xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[0, 15]]> : tensor<1x2xi64>, window_dimensions = array<i64: 16>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @long_reverse_cumsum(%x: tensor<17xf32>) -> tensor<17xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[0, 16]]> : tensor<1x2xi64>, window_dimensions = array<i64: 17>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<17xf32>, tensor<f32>) -> tensor<17xf32>
  return %0 : tensor<17xf32>
}

// -----

// A bf16 cumsum scans too, its running value in f32, each result rounded to bf16.
// CHECK-LABEL: func.func @bf16_cumsum
// CHECK-NOT: reduce_window
// CHECK: %[[X:.*]] = stablehlo.convert %{{.*}} : (tensor<1024xbf16>) -> tensor<1024xf32>
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<1024xf32>, f32)
// CHECK: arith.addf %[[ACC]], %{{.*}} : f32
// CHECK: stablehlo.convert %[[R]]#0 : (tensor<1024xf32>) -> tensor<1024xbf16>
func.func @bf16_cumsum(%x: tensor<1024xbf16>) -> tensor<1024xbf16> {
  %init = stablehlo.constant dense<0.0> : tensor<bf16>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[1023, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 1024>}> ({
  ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
    %r = stablehlo.add %a, %b : tensor<bf16>
    stablehlo.return %r : tensor<bf16>
  }) : (tensor<1024xbf16>, tensor<bf16>) -> tensor<1024xbf16>
  return %0 : tensor<1024xbf16>
}

// RUN: xhlo-opt %s --xhlo-lower-select-and-scatter --split-input-file --verify-diagnostics | FileCheck %s

// No padding: window element k of every window is one strided slice; the fold
// keeps the current selection where select(current, candidate) is true. Then
// the output starts at init and offsets are visited last to first: the sources
// of the windows that chose k are spread onto the operand grid by a pad.

// CHECK-LABEL: func.func @non_overlapping
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x4xf32>, %[[SRC:[a-zA-Z0-9_]+]]: tensor<2x2xf32>, %[[INIT:[a-zA-Z0-9_]+]]: tensor<f32>
// CHECK: %[[C0:.*]] = stablehlo.slice %[[X]] [0:3:2, 0:3:2] : (tensor<4x4xf32>) -> tensor<2x2xf32>
// CHECK: %[[K0:.*]] = stablehlo.constant dense<0> : tensor<2x2xi32>
// CHECK: %[[C1:.*]] = stablehlo.slice %[[X]] [0:3:2, 1:4:2] : (tensor<4x4xf32>) -> tensor<2x2xf32>
// CHECK: %[[KEEP:.*]] = "stablehlo.map"(%[[C0]], %[[C1]]) <{dimensions = array<i64: 0, 1>}>
// CHECK: ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>):
// CHECK: stablehlo.compare GE, %[[A]], %[[B]]
// CHECK: stablehlo.select %[[KEEP]], %[[C0]], %[[C1]]
// CHECK: %[[K1:.*]] = stablehlo.constant dense<1> : tensor<2x2xi32>
// CHECK: %[[SEL:.*]] = stablehlo.select %[[KEEP]], %[[K0]], %[[K1]] : tensor<2x2xi1>, tensor<2x2xi32>
// CHECK: %[[OUT0:.*]] = stablehlo.broadcast_in_dim %[[INIT]], dims = [] : (tensor<f32>) -> tensor<4x4xf32>
// CHECK: %[[HIT1:.*]] = stablehlo.compare EQ, %[[SEL]], %{{.*}} : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi1>
// CHECK: %[[HIT1P:.*]] = stablehlo.pad %[[HIT1]], %{{.*}}, low = [0, 1], high = [1, 0], interior = [1, 1]
// CHECK: %[[SRC1:.*]] = stablehlo.pad %[[SRC]], %[[INIT]], low = [0, 1], high = [1, 0], interior = [1, 1]
// CHECK: %[[SUM1:.*]] = "stablehlo.map"(%[[OUT0]], %[[SRC1]])
// CHECK: stablehlo.add
// CHECK: %[[OUT1:.*]] = stablehlo.select %[[HIT1P]], %[[SUM1]], %[[OUT0]]
// CHECK: %[[HIT0:.*]] = stablehlo.compare EQ, %[[SEL]], %{{.*}}
// CHECK: %[[HIT0P:.*]] = stablehlo.pad %[[HIT0]], %{{.*}}, low = [0, 0], high = [1, 1], interior = [1, 1]
// CHECK: %[[SRC0:.*]] = stablehlo.pad %[[SRC]], %[[INIT]], low = [0, 0], high = [1, 1], interior = [1, 1]
// CHECK: %[[SUM0:.*]] = "stablehlo.map"(%[[OUT1]], %[[SRC0]])
// CHECK: %[[OUT:.*]] = stablehlo.select %[[HIT0P]], %[[SUM0]], %[[OUT1]]
// CHECK: return %[[OUT]]
// CHECK-NOT: stablehlo.select_and_scatter
func.func @non_overlapping(%x: tensor<4x4xf32>, %s: tensor<2x2xf32>, %i: tensor<f32>) -> tensor<4x4xf32> {
  %r = "stablehlo.select_and_scatter"(%x, %s, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %c : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 2, 2>} : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// The spec example: padding elements are tracked by valid/invalid masks (no
// sentinel value), an invalid candidate never wins, windows that are all
// padding get index -1. Placement pads may be negative (they crop the padding).

// CHECK-LABEL: func.func @spec_example
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x2xi64>, %[[SRC:[a-zA-Z0-9_]+]]: tensor<2x2xi64>, %[[INIT:[a-zA-Z0-9_]+]]: tensor<i64>
// CHECK: %[[PX:.*]] = stablehlo.pad %[[X]], %[[INIT]], low = [0, 0], high = [1, 0], interior = [0, 0] : (tensor<4x2xi64>, tensor<i64>) -> tensor<5x2xi64>
// CHECK: %[[VALID:.*]] = stablehlo.pad %{{.*}}, low = [0, 0], high = [1, 0], interior = [0, 0] : (tensor<4x2xi1>, tensor<i1>) -> tensor<5x2xi1>
// CHECK: %[[INVALID:.*]] = stablehlo.pad %{{.*}}, low = [0, 0], high = [1, 0], interior = [0, 0] : (tensor<4x2xi1>, tensor<i1>) -> tensor<5x2xi1>
// CHECK: %[[V0:.*]] = stablehlo.slice %[[VALID]] [0:3:2, 0:2]
// CHECK: %[[C0:.*]] = stablehlo.slice %[[PX]] [0:3:2, 0:2]
// CHECK: %[[C1:.*]] = stablehlo.slice %[[PX]] [1:4:2, 0:2]
// CHECK: %[[KEEP:.*]] = "stablehlo.map"(%[[C0]], %[[C1]])
// CHECK: %[[I1:.*]] = stablehlo.slice %[[INVALID]] [1:4:2, 0:2]
// CHECK: %[[KEEPV:.*]] = stablehlo.and %[[KEEP]], %[[V0]]
// CHECK: %[[KEEP1:.*]] = stablehlo.or %[[I1]], %[[KEEPV]]
// CHECK: %[[V1:.*]] = stablehlo.slice %[[VALID]] [1:4:2, 0:2]
// CHECK: stablehlo.or %[[V0]], %[[V1]]
// CHECK: stablehlo.select %[[KEEP1]]
// CHECK: %[[C2:.*]] = stablehlo.slice %[[PX]] [2:5:2, 0:2]
// CHECK: %[[MINUS1:.*]] = stablehlo.constant dense<-1> : tensor<2x2xi32>
// CHECK: %[[SEL:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[MINUS1]]
// CHECK: %[[HIT2:.*]] = stablehlo.compare EQ, %[[SEL]]
// CHECK: stablehlo.pad %[[HIT2]], %{{.*}}, low = [2, 0], high = [-1, 0], interior = [1, 0] : (tensor<2x2xi1>, tensor<i1>) -> tensor<4x2xi1>
// CHECK: stablehlo.pad %[[SRC]], %[[INIT]], low = [2, 0], high = [-1, 0], interior = [1, 0] : (tensor<2x2xi64>, tensor<i64>) -> tensor<4x2xi64>
// CHECK-COUNT-2: stablehlo.compare EQ, %[[SEL]]
// CHECK-NOT: stablehlo.select_and_scatter
func.func @spec_example(%x: tensor<4x2xi64>, %s: tensor<2x2xi64>, %i: tensor<i64>) -> tensor<4x2xi64> {
  %r = "stablehlo.select_and_scatter"(%x, %s, %i) ({
  ^bb0(%a: tensor<i64>, %b: tensor<i64>):
    %c = stablehlo.compare GE, %a, %b : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<i64>, %b: tensor<i64>):
    %c = stablehlo.add %a, %b : tensor<i64>
    stablehlo.return %c : tensor<i64>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>, padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>} : (tensor<4x2xi64>, tensor<2x2xi64>, tensor<i64>) -> tensor<4x2xi64>
  return %r : tensor<4x2xi64>
}

// -----

// More than 16 window elements: both folds become while loops over k; offsets
// come from k by division/remainder, slices and placements are dynamic, and
// the spread source is computed once, outside the loop.

// CHECK-LABEL: func.func @large_window
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<20xf32>, %[[SRC:[a-zA-Z0-9_]+]]: tensor<2xf32>, %[[INIT:[a-zA-Z0-9_]+]]: tensor<f32>
// CHECK: %[[FIRST:.*]] = stablehlo.slice %[[X]] [0:4:3]
// CHECK: %[[SELECT:.*]]:3 = stablehlo.while(%[[K:.*]] = %{{.*}}, %[[BEST:.*]] = %[[FIRST]], %[[IDX:.*]] = %{{.*}})
// CHECK: stablehlo.compare LT, %[[K]]
// CHECK: %[[OFF:.*]] = stablehlo.remainder %[[K]]
// CHECK: %[[SPAN:.*]] = stablehlo.dynamic_slice %[[X]], %[[OFF]], sizes = [4]
// CHECK: %[[CAND:.*]] = stablehlo.slice %[[SPAN]] [0:4:3]
// CHECK: %[[KEEP:.*]] = "stablehlo.map"(%[[BEST]], %[[CAND]])
// CHECK: %[[NEWBEST:.*]] = stablehlo.select %[[KEEP]], %[[BEST]], %[[CAND]]
// CHECK: %[[KSPLAT:.*]] = stablehlo.broadcast_in_dim %[[K]]
// CHECK: %[[NEWIDX:.*]] = stablehlo.select %[[KEEP]], %[[IDX]], %[[KSPLAT]]
// CHECK: stablehlo.return %{{.*}}, %[[NEWBEST]], %[[NEWIDX]]
// CHECK: %[[OUT0:.*]] = stablehlo.broadcast_in_dim %[[INIT]]
// CHECK: %[[SPREAD:.*]] = stablehlo.pad %[[SRC]], %[[INIT]], low = [0], high = [0], interior = [2]
// CHECK: %[[SCATTER:.*]]:2 = stablehlo.while(%[[J:.*]] = %{{.*}}, %[[OUT:.*]] = %[[OUT0]])
// CHECK: stablehlo.compare GE, %[[J]]
// CHECK: %[[JOFF:.*]] = stablehlo.remainder %[[J]]
// CHECK: stablehlo.compare EQ, %[[SELECT]]#2
// CHECK: stablehlo.dynamic_update_slice %{{.*}}, %[[SPREAD]], %[[JOFF]]
// CHECK: "stablehlo.map"(%[[OUT]],
// CHECK: return %[[SCATTER]]#1
func.func @large_window(%x: tensor<20xf32>, %s: tensor<2xf32>, %i: tensor<f32>) -> tensor<20xf32> {
  %r = "stablehlo.select_and_scatter"(%x, %s, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %c : tensor<f32>
  }) {window_dimensions = array<i64: 17>, window_strides = array<i64: 3>} : (tensor<20xf32>, tensor<2xf32>, tensor<f32>) -> tensor<20xf32>
  return %r : tensor<20xf32>
}

// -----

// No window position: the result is init everywhere.

// CHECK-LABEL: func.func @empty_source
// CHECK-SAME: %{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<0x1xf32>, %[[INIT:[a-zA-Z0-9_]+]]: tensor<f32>
// CHECK-NEXT: %[[OUT:.*]] = stablehlo.broadcast_in_dim %[[INIT]], dims = [] : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[OUT]]
func.func @empty_source(%x: tensor<2x3xf32>, %s: tensor<0x1xf32>, %i: tensor<f32>) -> tensor<2x3xf32> {
  %r = "stablehlo.select_and_scatter"(%x, %s, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %c : tensor<f32>
  }) {window_dimensions = array<i64: 3, 3>, window_strides = array<i64: 1, 1>} : (tensor<2x3xf32>, tensor<0x1xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Window positions are laid out statically: dynamic shapes are rejected.

func.func @dynamic(%x: tensor<?xf32>, %s: tensor<?xf32>, %i: tensor<f32>) -> tensor<?xf32> {
  // expected-error@+1 {{xhlo-lower-select-and-scatter: 'stablehlo.select_and_scatter' needs static shapes, got tensor<?xf32>}}
  %r = "stablehlo.select_and_scatter"(%x, %s, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %c : tensor<f32>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 1>} : (tensor<?xf32>, tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// RUN: xhlo-opt %s --xhlo-lower-scatter --split-input-file --verify-diagnostics | FileCheck %s

// Row windows: a while loop reads, maps and writes one window per step. Each
// step converts its own index to i64 and tests that the window fits (no i64
// copy or mask of all the indices is made before the loop).

// CHECK-LABEL: func.func @rows_add
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<5x3xf32>, %[[IDX:[a-zA-Z0-9_]+]]: tensor<4x1xi32>, %[[UPD:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[START:.*]] = stablehlo.reshape %[[IDX]] : (tensor<4x1xi32>) -> tensor<4xi32>
// CHECK-NOT: stablehlo.convert
// CHECK: %[[LOOP:.*]]:2 = stablehlo.while(%[[K:.*]] = %{{.*}}, %[[OUT:.*]] = %[[X]])
// CHECK: cond
// CHECK: stablehlo.compare LT, %[[K]]
// CHECK: do
// CHECK: %[[NEXT:.*]] = stablehlo.add %[[K]]
// CHECK: %[[ROW:.*]] = stablehlo.dynamic_slice %[[START]], %[[K]], sizes = [1]
// CHECK: %[[ROW0:.*]] = stablehlo.reshape %[[ROW]] : (tensor<1xi32>) -> tensor<i32>
// CHECK: %[[WIDE:.*]] = stablehlo.convert %[[ROW0]] : (tensor<i32>) -> tensor<i64>
// CHECK: %[[HIGH:.*]] = stablehlo.compare LE, %[[WIDE]], %{{.*}}, SIGNED
// CHECK: %[[FIT:.*]] = stablehlo.and
// CHECK: %[[NEW:.*]] = "stablehlo.if"(%[[FIT]])
// CHECK: %[[U:.*]] = stablehlo.dynamic_slice %[[UPD]], %[[K]], %{{.*}}, sizes = [1, 3]
// CHECK: %[[CUR:.*]] = stablehlo.dynamic_slice %[[OUT]], %[[WIDE]], %{{.*}}, sizes = [1, 3]
// CHECK: %[[SUM:.*]] = "stablehlo.map"(%[[CUR]], %[[U]]) <{dimensions = array<i64: 0, 1>}>
// CHECK: ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>):
// CHECK: stablehlo.add %[[A]], %[[B]] : tensor<f32>
// CHECK: %[[WRITTEN:.*]] = stablehlo.dynamic_update_slice %[[OUT]], %[[SUM]], %[[WIDE]]
// CHECK: stablehlo.return %[[WRITTEN]]
// CHECK: stablehlo.return %[[OUT]]
// CHECK: stablehlo.return %[[NEXT]], %[[NEW]]
// CHECK: return %[[LOOP]]#1
// CHECK-NOT: stablehlo.scatter
func.func @rows_add(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

// One index vector, one element: no loop, the region is inlined on 0-d tensors
// with the current value first. Unsigned indices are zero-extended to i64.

// CHECK-LABEL: func.func @single_element_subtract
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4xi32>, %[[IDX:[a-zA-Z0-9_]+]]: tensor<1xui32>, %[[UPD:[a-zA-Z0-9_]+]]: tensor<i32>
// CHECK: %[[IDX2:.*]] = stablehlo.reshape %[[IDX]] : (tensor<1xui32>) -> tensor<1x1xui32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<ui32>) -> tensor<i64>
// CHECK-NOT: stablehlo.while
// CHECK: "stablehlo.if"
// CHECK: %[[CUR:.*]] = stablehlo.dynamic_slice %[[X]]
// CHECK: %[[CUR0:.*]] = stablehlo.reshape %[[CUR]] : (tensor<1xi32>) -> tensor<i32>
// CHECK: %[[U0:.*]] = stablehlo.reshape %{{.*}} : (tensor<1xi32>) -> tensor<i32>
// CHECK: %[[DIFF:.*]] = stablehlo.subtract %[[CUR0]], %[[U0]] : tensor<i32>
// CHECK: %[[DIFF1:.*]] = stablehlo.reshape %[[DIFF]] : (tensor<i32>) -> tensor<1xi32>
// CHECK: stablehlo.dynamic_update_slice %[[X]], %[[DIFF1]]
// CHECK: stablehlo.return %[[X]]
func.func @single_element_subtract(%x: tensor<4xi32>, %i: tensor<1xui32>, %u: tensor<i32>) -> tensor<4xi32> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.subtract %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) : (tensor<4xi32>, tensor<1xui32>, tensor<i32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// Batching dims: the batch coordinate of each index vector is an iota over the
// scatter dims; the operand window is 1 at the batching and inserted dims.

// CHECK-LABEL: func.func @batching
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<2x3x4x2xi64>, %[[IDX:[a-zA-Z0-9_]+]]: tensor<2x2x3x2xi64>, %[[UPD:[a-zA-Z0-9_]+]]: tensor<2x2x3x2x2xi64>
// CHECK: %[[ROWS:.*]] = stablehlo.reshape %[[IDX]] : (tensor<2x2x3x2xi64>) -> tensor<12x2xi64>
// CHECK: %[[BATCH:.*]] = stablehlo.iota dim = 1 : tensor<2x2x3xi64>
// CHECK: %[[BATCH1:.*]] = stablehlo.reshape %[[BATCH]] : (tensor<2x2x3xi64>) -> tensor<12xi64>
// CHECK: %[[WINDOWS:.*]] = stablehlo.reshape %[[UPD]] : (tensor<2x2x3x2x2xi64>) -> tensor<12x2x2xi64>
// CHECK: stablehlo.while
// CHECK: stablehlo.dynamic_slice %[[BATCH1]]
// CHECK: %[[U:.*]] = stablehlo.dynamic_slice %[[WINDOWS]], {{.*}} sizes = [1, 2, 2]
// CHECK: stablehlo.reshape %[[U]] : (tensor<1x2x2xi64>) -> tensor<1x1x2x2xi64>
// CHECK: stablehlo.dynamic_slice {{.*}} sizes = [1, 1, 2, 2]
// CHECK: "stablehlo.map"
// CHECK: stablehlo.dynamic_update_slice
func.func @batching(%x: tensor<2x3x4x2xi64>, %i: tensor<2x2x3x2xi64>, %u: tensor<2x2x3x2x2xi64>) -> tensor<2x3x4x2xi64> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [1], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3>}> ({
  ^bb0(%a: tensor<i64>, %b: tensor<i64>):
    %s = stablehlo.add %a, %b : tensor<i64>
    stablehlo.return %s : tensor<i64>
  }) : (tensor<2x3x4x2xi64>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xi64>) -> tensor<2x3x4x2xi64>
  return %r : tensor<2x3x4x2xi64>
}

// -----

// Updates that broadcast one scalar (a histogram's ones): the scalar is
// broadcast to one window before the loop, which every step combines in; no
// update tensor is read in the loop.

// CHECK-LABEL: func.func @splat_updates
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<8xi32>, %[[IDX:[a-zA-Z0-9_]+]]: tensor<100x1xi32>, %[[ONE:[a-zA-Z0-9_]+]]: tensor<i32>
// CHECK: %[[U:.*]] = stablehlo.broadcast_in_dim %[[ONE]], dims = [] : (tensor<i32>) -> tensor<1xi32>
// CHECK: stablehlo.while
// CHECK: "stablehlo.if"
// CHECK-NOT: tensor<100xi32>
// CHECK: stablehlo.add %{{.*}}, %{{.*}} : tensor<i32>
// CHECK: stablehlo.dynamic_update_slice
func.func @splat_updates(%x: tensor<8xi32>, %i: tensor<100x1xi32>, %one: tensor<i32>) -> tensor<8xi32> {
  %u = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<i32>) -> tensor<100xi32>
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) : (tensor<8xi32>, tensor<100x1xi32>, tensor<100xi32>) -> tensor<8xi32>
  return %r : tensor<8xi32>
}

// -----

// An operand without elements (every window out of bounds) or updates without elements:
// the result is the operand.
// CHECK-LABEL: func.func @nothing_to_scatter
// CHECK-SAME: (%[[X:.*]]: tensor<0xf32>, %{{.*}}: tensor<2x1xi32>, %{{.*}}: tensor<2xf32>, %[[Y:.*]]: tensor<4xf32>, %{{.*}}: tensor<0x1xi32>, %{{.*}}: tensor<0xf32>)
// CHECK-NOT: stablehlo.scatter
// CHECK-NOT: stablehlo.while
// CHECK: return %[[X]], %[[Y]]
func.func @nothing_to_scatter(%x: tensor<0xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>,
                              %y: tensor<4xf32>, %j: tensor<0x1xi32>, %v: tensor<0xf32>) -> (tensor<0xf32>, tensor<4xf32>) {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<0xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<0xf32>
  %q = "stablehlo.scatter"(%y, %j, %v) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<4xf32>, tensor<0x1xi32>, tensor<0xf32>) -> tensor<4xf32>
  return %r, %q : tensor<0xf32>, tensor<4xf32>
}

// -----

func.func @dynamic_operand(%x: tensor<?x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<?x3xf32> {
  // expected-error@+1 {{only statically shaped scatter is supported}}
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<?x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

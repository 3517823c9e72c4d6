// RUN: xhlo-opt %s --xhlo-lower-collectives --split-input-file --verify-diagnostics | FileCheck %s
// RUN: xhlo-opt %s --xhlo-lower-collectives="split-reduction-bytes=16 in-place-reduction-bytes=0" \
// RUN:   --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=SPLIT
// RUN: xhlo-opt %s --xhlo-lower-collectives="split-reduction-bytes=16 in-place-reduction-bytes=16" \
// RUN:   --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=INPLACE

// SPLIT-LABEL: func.func @all_reduce
// SPLIT-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4xf32>
// SPLIT: %[[B:.*]] = stablehlo.reshape %[[X]] : (tensor<4xf32>) -> tensor<2x2xf32>
// SPLIT: %[[E:.*]] = stablehlo.custom_call @xhlo.runtime.all_to_all(%[[B]])
// SPLIT-SAME: (tensor<2x2xf32>) -> tensor<2x2xf32>
// SPLIT: %[[F:.*]] = "stablehlo.map"
// SPLIT: %[[G:.*]] = stablehlo.custom_call @xhlo.runtime.all_gather(%[[F]])
// SPLIT-SAME: (tensor<2xf32>) -> tensor<2x2xf32>
// SPLIT: %[[R:.*]] = stablehlo.reshape %[[G]] : (tensor<2x2xf32>) -> tensor<4xf32>
// SPLIT: return %[[R]]

// INPLACE-LABEL: func.func @all_reduce
// INPLACE-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4xf32>
// INPLACE: %[[E:.*]] = stablehlo.custom_call @xhlo.runtime.all_reduce(%[[X]])
// INPLACE-SAME: fold = "xhlo_all_reduce_fold_0"
// INPLACE-SAME: (tensor<4xf32>) -> tensor<4xf32>
// INPLACE: return %[[E]]
// The fold kernel returns its block once per member: it writes every member's result.
// INPLACE-LABEL: func.func @xhlo_all_reduce_fold_0
// INPLACE-SAME: (%[[A0:.*]]: tensor<2xf32>, %[[A1:.*]]: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// INPLACE: %[[F:.*]] = "stablehlo.map"(%[[A0]], %[[A1]])
// INPLACE: stablehlo.maximum
// INPLACE: return %[[F]], %[[F]]

// all_reduce: the runtime gathers the operands in group order, the region folds them.

// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4xf32>
// CHECK: %[[G:.*]] = stablehlo.custom_call @xhlo.runtime.all_gather(%[[X]])
// CHECK-SAME: groups = dense<{{\[\[}}1, 0]]> : tensor<1x2xi64>
// CHECK-SAME: op = "stablehlo.all_reduce"
// CHECK-SAME: has_side_effect = true
// CHECK-SAME: (tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: %[[S0:.*]] = stablehlo.slice %[[G]] [0:1, 0:4]
// CHECK: %[[P0:.*]] = stablehlo.reshape %[[S0]] : (tensor<1x4xf32>) -> tensor<4xf32>
// CHECK: %[[S1:.*]] = stablehlo.slice %[[G]] [1:2, 0:4]
// CHECK: %[[P1:.*]] = stablehlo.reshape %[[S1]] : (tensor<1x4xf32>) -> tensor<4xf32>
// CHECK: %[[R:.*]] = "stablehlo.map"(%[[P0]], %[[P1]])
// CHECK: stablehlo.maximum
// CHECK: return %[[R]]
module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @all_reduce(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }) {replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// all_gather along dimension 1: the gathered [G, ...] moves G next to that dimension.

// CHECK-LABEL: func.func @all_gather
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<2x3xi32>
// CHECK: %[[G:.*]] = stablehlo.custom_call @xhlo.runtime.all_gather(%[[X]])
// CHECK-SAME: (tensor<2x3xi32>) -> tensor<2x2x3xi32>
// CHECK: %[[T:.*]] = stablehlo.transpose %[[G]], dims = [1, 0, 2]
// CHECK: %[[R:.*]] = stablehlo.reshape %[[T]] : (tensor<2x2x3xi32>) -> tensor<2x6xi32>
// CHECK: return %[[R]]
module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @all_gather(%x: tensor<2x3xi32>) -> tensor<2x6xi32> {
    %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
        : (tensor<2x3xi32>) -> tensor<2x6xi32>
    return %0 : tensor<2x6xi32>
  }
}

// -----

// all_to_all: blocks of the split dimension are stacked in front, exchanged,
// and the received [G, block] is concatenated along the concat dimension.

// CHECK-LABEL: func.func @all_to_all
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<2x4xi64>
// CHECK: %[[B:.*]] = stablehlo.reshape %[[X]] : (tensor<2x4xi64>) -> tensor<2x2x2xi64>
// CHECK: %[[T:.*]] = stablehlo.transpose %[[B]], dims = [1, 0, 2]
// CHECK: %[[E:.*]] = stablehlo.custom_call @xhlo.runtime.all_to_all(%[[T]])
// CHECK-SAME: (tensor<2x2x2xi64>) -> tensor<2x2x2xi64>
// CHECK: %[[R:.*]] = stablehlo.reshape %[[E]] : (tensor<2x2x2xi64>) -> tensor<4x2xi64>
// CHECK: return %[[R]]
module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @all_to_all(%x: tensor<2x4xi64>) -> tensor<4x2xi64> {
    %0 = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xi64>) -> tensor<4x2xi64>
    return %0 : tensor<4x2xi64>
  }
}

// -----

// reduce_scatter: each member receives everybody's block for it, then folds.

// CHECK-LABEL: func.func @reduce_scatter
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[B:.*]] = stablehlo.reshape %[[X]] : (tensor<4x3xf32>) -> tensor<2x2x3xf32>
// CHECK: %[[E:.*]] = stablehlo.custom_call @xhlo.runtime.all_to_all(%[[B]])
// CHECK-SAME: op = "stablehlo.reduce_scatter"
// CHECK: "stablehlo.map"
// CHECK: stablehlo.add
// CHECK-NOT: stablehlo.custom_call
module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @reduce_scatter(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
    %0 = "stablehlo.reduce_scatter"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {scatter_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}

// -----

// collective_permute: the runtime says whether data arrived; non-targets get zeros.
// With a channel the pairs name partitions: global ids are replica * 2 + partition.

// CHECK-LABEL: func.func @collective_permute
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK: %[[Y:.*]]:2 = stablehlo.custom_call @xhlo.runtime.collective_permute(%[[X]])
// CHECK-SAME: groups = dense<{{\[\[}}0, 1], [2, 3]]> : tensor<2x2xi64>
// CHECK-SAME: pairs = dense<{{\[\[}}1, 0], [3, 2]]> : tensor<2x2xi64>
// CHECK-SAME: (tensor<3xf32>) -> (tensor<3xf32>, tensor<i1>)
// CHECK: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: %[[R:.*]] = stablehlo.select %[[Y]]#1, %[[Y]]#0, %[[Z]] : tensor<i1>, tensor<3xf32>
// CHECK: return %[[R]]
module attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 2 : i32} {
  func.func @collective_permute(%x: tensor<3xf32>) -> tensor<3xf32> {
    %0 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}

// -----

// A ring: every device receives, so there are no zeros to select.

// CHECK-LABEL: func.func @collective_permute_ring
// CHECK: %[[Y:.*]]:2 = stablehlo.custom_call @xhlo.runtime.collective_permute
// CHECK-SAME: pairs = dense<{{\[\[}}0, 1], [1, 2], [2, 0]]> : tensor<3x2xi64>
// CHECK-NOT: stablehlo.select
// CHECK: return %[[Y]]#0
module attributes {mhlo.num_replicas = 3 : i32} {
  func.func @collective_permute_ring(%x: tensor<3xf32>) -> tensor<3xf32> {
    %0 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 2], [2, 0]]> : tensor<3x2xi64>}
        : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}

// -----

// collective_broadcast: groups need not cover every device (the others get zeros).

// CHECK-LABEL: func.func @collective_broadcast
// CHECK: %[[Y:.*]]:2 = stablehlo.custom_call @xhlo.runtime.collective_broadcast
// CHECK-SAME: groups = dense<{{\[\[}}2, 1]]> : tensor<1x2xi64>
// CHECK: stablehlo.select %[[Y]]#1, %[[Y]]#0
module attributes {mhlo.num_replicas = 4 : i32} {
  func.func @collective_broadcast(%x: tensor<1x2xi64>) -> tensor<1x2xi64> {
    %0 = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[2, 1]]> : tensor<1x2xi64>}
        : (tensor<1x2xi64>) -> tensor<1x2xi64>
    return %0 : tensor<1x2xi64>
  }
}

// -----

// collective_reduce: gathered and folded like a small all_reduce; each group's first
// member (global ids 2 and 0) keeps the result, selected by the device's global id.

// CHECK-LABEL: func.func @collective_reduce
// CHECK: %[[G:.*]] = stablehlo.custom_call @xhlo.runtime.all_gather
// CHECK-SAME: groups = dense<{{\[\[}}2, 1], [0, 3]]> : tensor<2x2xi64>
// CHECK: %[[SUM:.*]] = "stablehlo.map"
// CHECK: %[[ROOTS:.*]] = stablehlo.constant dense<[true, false, true, false]> : tensor<4xi1>
// CHECK: stablehlo.custom_call @xhlo.runtime.device_id()
// CHECK: %[[ROOT:.*]] = stablehlo.dynamic_slice %[[ROOTS]]
// CHECK: %[[IS_ROOT:.*]] = stablehlo.reshape %[[ROOT]] : (tensor<1xi1>) -> tensor<i1>
// CHECK: stablehlo.select %[[IS_ROOT]], %[[SUM]], %{{.*}} : tensor<i1>, tensor<2xf32>
module attributes {mhlo.num_replicas = 4 : i32} {
  func.func @collective_reduce(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "stablehlo.collective_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[2, 1], [0, 3]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----

// all_reduce over groups of different sizes: every device gathers all operands, folds
// each group, and picks its own group's fold by its global id (group of device d: [0, 0, 0, 1]).

// CHECK-LABEL: func.func @uneven_all_reduce
// CHECK: %[[G:.*]] = stablehlo.custom_call @xhlo.runtime.all_gather
// CHECK-SAME: groups = dense<{{\[\[}}0, 1, 2, 3]]> : tensor<1x4xi64>
// CHECK: stablehlo.constant dense<[0, 0, 0, 1]> : tensor<4xi32>
// CHECK: "stablehlo.map"
// CHECK: %[[TABLE:.*]] = stablehlo.concatenate
// CHECK: stablehlo.dynamic_slice %[[TABLE]]
module attributes {mhlo.num_replicas = 4 : i32} {
  func.func @uneven_all_reduce(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2], [3, -1, -1]]> : tensor<2x3xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----

// replica_id and partition_id read [replica, partition] from the runtime.

// CHECK-LABEL: func.func @ids
// CHECK: %[[I:.*]] = stablehlo.custom_call @xhlo.runtime.device_id()
// CHECK-SAME: () -> tensor<2xi64>
// CHECK: %[[R0:.*]] = stablehlo.slice %[[I]] [0:1]
// CHECK: %[[R1:.*]] = stablehlo.reshape %[[R0]] : (tensor<1xi64>) -> tensor<i64>
// CHECK: %[[R:.*]] = stablehlo.convert %[[R1]] : (tensor<i64>) -> tensor<ui32>
// CHECK: %[[J:.*]] = stablehlo.custom_call @xhlo.runtime.device_id()
// CHECK: stablehlo.slice %[[J]] [1:2]
module attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 2 : i32} {
  func.func @ids() -> (tensor<ui32>, tensor<ui32>) {
    %r = stablehlo.replica_id : tensor<ui32>
    %p = stablehlo.partition_id : tensor<ui32>
    return %r, %p : tensor<ui32>, tensor<ui32>
  }
}

// -----

// all_reduce over flattened global ids (use_global_device_ids).

// CHECK-LABEL: func.func @flattened_ids
// CHECK: stablehlo.custom_call @xhlo.runtime.all_gather
// CHECK-SAME: groups = dense<{{\[\[}}0, 3], [2, 1]]> : tensor<2x2xi64>
module attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 2 : i32} {
  func.func @flattened_ids(%x: tensor<2xi32>) -> tensor<2xi32> {
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %s = stablehlo.add %a, %b : tensor<i32>
      stablehlo.return %s : tensor<i32>
    }) {replica_groups = dense<[[0, 3], [2, 1]]> : tensor<2x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2xi32>) -> tensor<2xi32>
    return %0 : tensor<2xi32>
  }
}

// -----

// ragged_all_to_all in the form JAX emits; the runtime places the rows.

// CHECK-LABEL: func.func @ragged
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<3x2xf32>, %[[O:[a-zA-Z0-9_]+]]: tensor<4x2xf32>
// CHECK: %[[R:.*]] = stablehlo.custom_call @xhlo.runtime.ragged_all_to_all(%[[X]], %[[O]],
// CHECK-SAME: groups = dense<{{\[\[}}0, 1]]> : tensor<1x2xi64>
// CHECK-SAME: input_rows = 3 : i64
// CHECK-SAME: num_updates = 1 : i64
// CHECK-SAME: op = "stablehlo.custom_call @ragged_all_to_all"
// CHECK-SAME: output_rows = 4 : i64
// CHECK: return %[[R]]
module attributes {mhlo.num_replicas = 1 : i32, mhlo.num_partitions = 2 : i32} {
  func.func @ragged(%x: tensor<3x2xf32>, %out: tensor<4x2xf32>, %io: tensor<2xi32>, %ss: tensor<2xi32>,
                    %oo: tensor<2xi32>, %rs: tensor<2xi32>) -> tensor<4x2xf32> {
    %0 = stablehlo.custom_call @ragged_all_to_all(%x, %out, %io, %ss, %oo, %rs) {api_version = 4 : i32,
        backend_config = {channel_id = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}}
        : (tensor<3x2xf32>, tensor<4x2xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

// send/recv: tokens pass through unchanged; a device that is no target receives zeros.

// CHECK-LABEL: func.func @send_recv
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<2xi32>, %[[T:[a-zA-Z0-9_]+]]: !stablehlo.token
// CHECK: stablehlo.custom_call @xhlo.runtime.send(%[[X]])
// CHECK-SAME: channel = 7 : i64
// CHECK-SAME: pairs = dense<{{\[\[}}0, 1]]> : tensor<1x2xi64>
// CHECK: %[[R:.*]]:2 = stablehlo.custom_call @xhlo.runtime.recv()
// CHECK-SAME: () -> (tensor<2xi32>, tensor<i1>)
// CHECK: %[[V:.*]] = stablehlo.select %[[R]]#1, %[[R]]#0
// CHECK: return %[[V]], %[[T]]
module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @send_recv(%x: tensor<2xi32>, %t: !stablehlo.token) -> (tensor<2xi32>, !stablehlo.token) {
    %t1 = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>,
        is_host_transfer = false, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}
        : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
    %r:2 = "stablehlo.recv"(%t1) {channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>,
        is_host_transfer = false, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}
        : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
    return %r#0, %r#1 : tensor<2xi32>, !stablehlo.token
  }
}

// -----

module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @broadcast_out_of_range(%x: tensor<2xf32>) -> tensor<2xf32> {
    // expected-error@+1 {{xhlo-lower-collectives: replica id 3 is out of range: the program has 2 replicas (cross_replica)}}
    %0 = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[1, 3]]> : tensor<1x2xi64>}
        : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----

module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @host_send(%x: tensor<2xi32>, %t: !stablehlo.token) -> !stablehlo.token {
    // expected-error@+1 {{xhlo-lower-collectives: 'stablehlo.send' to or from the host is not supported}}
    %t1 = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 7, type = 2>,
        is_host_transfer = true} : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
    return %t1 : !stablehlo.token
  }
}

// -----

module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @ragged_without_config(%x: tensor<3xf32>, %out: tensor<4xf32>, %m: tensor<2xi32>) -> tensor<4xf32> {
    // expected-error@+1 {{xhlo-lower-collectives: ragged_all_to_all needs a backend_config dictionary with replica_groups}}
    %0 = stablehlo.custom_call @ragged_all_to_all(%x, %out, %m, %m, %m, %m) {api_version = 2 : i32, backend_config = ""}
        : (tensor<3xf32>, tensor<4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// An in-place all_reduce's fold kernel also applies the elementwise ops that follow it
// with splat operands (pmean: psum * 1/n), so no pass over the whole result is left.
// A result with two users, or a non-constant operand, keeps the ops outside.

// The reduce-scatter lowering applies them to the folded slice, before the all-gather.
// SPLIT-LABEL: func.func @all_reduce_mean
// SPLIT: stablehlo.custom_call @xhlo.runtime.all_to_all
// SPLIT: "stablehlo.map"
// SPLIT: stablehlo.add
// SPLIT: stablehlo.multiply {{.*}} : tensor<f32>
// SPLIT: stablehlo.subtract {{.*}} : tensor<f32>
// SPLIT: stablehlo.exponential {{.*}} : tensor<f32>
// SPLIT: %[[G:.*]] = stablehlo.custom_call @xhlo.runtime.all_gather
// SPLIT: %[[R:.*]] = stablehlo.reshape %[[G]]
// SPLIT-NOT: stablehlo.multiply
// SPLIT: return %[[R]]

// INPLACE-LABEL: func.func @all_reduce_mean
// INPLACE: %[[E:.*]] = stablehlo.custom_call @xhlo.runtime.all_reduce
// INPLACE-SAME: fold = "[[MEAN:xhlo_all_reduce_fold_[0-9]+]]"
// INPLACE-NOT: stablehlo.multiply
// INPLACE-NOT: stablehlo.exponential
// INPLACE: return %[[E]]
// INPLACE-LABEL: func.func @all_reduce_shared
// INPLACE-SAME: %[[Y:[a-zA-Z0-9_]+]]: tensor<4xf32>)
// INPLACE: %[[E:.*]] = stablehlo.custom_call @xhlo.runtime.all_reduce
// INPLACE-SAME: fold = "[[SHARED:xhlo_all_reduce_fold_[0-9]+]]"
// INPLACE: stablehlo.multiply %[[E]], %[[Y]]
// INPLACE: stablehlo.multiply %[[E]], %[[E]]
// INPLACE-LABEL: func.func @all_reduce_times_argument
// INPLACE-SAME: %[[Y:[a-zA-Z0-9_]+]]: tensor<4xf32>)
// INPLACE: %[[E:.*]] = stablehlo.custom_call @xhlo.runtime.all_reduce
// INPLACE: stablehlo.multiply %[[E]], %[[Y]]
// INPLACE: func.func @[[MEAN]](
// INPLACE: "stablehlo.map"
// INPLACE: %[[S:.*]] = stablehlo.add
// INPLACE: %[[H:.*]] = stablehlo.constant dense<5.000000e-01> : tensor<f32>
// INPLACE: %[[M:.*]] = stablehlo.multiply %[[S]], %[[H]] : tensor<f32>
// INPLACE: %[[ONE:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<f32>
// INPLACE: %[[D:.*]] = stablehlo.subtract %[[ONE]], %[[M]] : tensor<f32>
// INPLACE: %[[X:.*]] = stablehlo.exponential %[[D]] : tensor<f32>
// INPLACE: stablehlo.return %[[X]]
// INPLACE: func.func @[[SHARED]](
// INPLACE: stablehlo.add
// INPLACE-NEXT: stablehlo.return
module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @all_reduce_mean(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %one = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    %h = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %1 = stablehlo.multiply %0, %h : tensor<4xf32>
    %2 = stablehlo.subtract %one, %1 : tensor<4xf32>
    %3 = stablehlo.exponential %2 : tensor<4xf32>
    return %3 : tensor<4xf32>
  }
  func.func @all_reduce_shared(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.multiply %0, %y : tensor<4xf32>
    %2 = stablehlo.multiply %0, %0 : tensor<4xf32>
    return %1, %2 : tensor<4xf32>, tensor<4xf32>
  }
  func.func @all_reduce_times_argument(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.multiply %0, %y : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

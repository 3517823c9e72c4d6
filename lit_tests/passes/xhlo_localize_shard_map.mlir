// RUN: xhlo-opt %s --allow-unregistered-dialect --xhlo-localize-shard-map --split-input-file --verify-diagnostics | FileCheck %s

// Shardy: the manual computation's region becomes @main, on local shards;
// xhlo.shard_map records the block of every device per dimension.

// CHECK-LABEL: module attributes
// CHECK-SAME: xhlo.shard_map = {arguments = [{blocks = dense<{{\[\[}}0], [1]]> : tensor<2x1xi64>, counts = array<i64: 2>}, {blocks = dense<0> : tensor<2x1xi64>, counts = array<i64: 1>}]
// CHECK-SAME: function = "shardy"
// CHECK-LABEL: func.func public @shardy
// CHECK-SAME: (%[[A:[a-zA-Z0-9_]+]]: tensor<2xf32> {{.*}}, %[[B:[a-zA-Z0-9_]+]]: tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>)
// CHECK-NEXT: %[[S:.*]] = stablehlo.add %[[A]], %[[A]] : tensor<2xf32>
// CHECK-NEXT: return %[[S]], %[[B]] : tensor<2xf32>, tensor<3xf32>
// CHECK-NOT: sdy.manual_computation
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
  func.func public @shardy(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg1: tensor<3xf32>) -> (tensor<4xf32>, tensor<3xf32>) {
    %0:2 = "sdy.manual_computation"(%arg0, %arg1) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{}]>]>}> ({
    ^bb0(%a: tensor<2xf32>, %b: tensor<3xf32>):
      %1 = stablehlo.add %a, %a : tensor<2xf32>
      "sdy.return"(%1, %b) : (tensor<2xf32>, tensor<3xf32>) -> ()
    }) : (tensor<4xf32>, tensor<3xf32>) -> (tensor<4xf32>, tensor<3xf32>)
    return %0#0, %0#1 : tensor<4xf32>, tensor<3xf32>
  }
}

// -----

// Two mesh axes: a dimension split over ("x", "y") has 4 blocks, x major.

// CHECK-LABEL: module attributes
// CHECK-SAME: xhlo.shard_map = {arguments = [{blocks = dense<{{\[\[}}0, 0], [1, 0], [2, 0], [3, 0]]> : tensor<4x2xi64>, counts = array<i64: 4, 1>}]
// CHECK-LABEL: func.func public @two_axes
// CHECK-SAME: tensor<1x3xf32>
module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=2]>, sym_name = "mesh"}> : () -> ()
  func.func public @two_axes(%arg0: tensor<4x3xf32>) -> tensor<4x3xf32> {
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {}]>]>, manual_axes = #sdy<manual_axes{"x", "y"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {}]>]>}> ({
    ^bb0(%a: tensor<1x3xf32>):
      "sdy.return"(%a) : (tensor<1x3xf32>) -> ()
    }) : (tensor<4x3xf32>) -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
}

// -----

// GSPMD: the Sharding / SPMDFullToShardShape / SPMDShardToFullShape boundary goes.
// The result is split over dimension 0 and replicated over the transposed device pairs.

// CHECK-LABEL: module attributes
// CHECK-SAME: xhlo.shard_map = {arguments = [{blocks = dense<{{\[\[}}0, 0], [0, 1], [1, 0], [1, 1]]> : tensor<4x2xi64>, counts = array<i64: 2, 2>}]
// CHECK-SAME: results = [{blocks = dense<{{\[\[}}0, 0], [1, 0], [0, 0], [1, 0]]> : tensor<4x2xi64>, counts = array<i64: 2, 1>}]
// CHECK-LABEL: func.func public @gspmd
// CHECK-SAME: (%[[A:[a-zA-Z0-9_]+]]: tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[A]], %[[A]] : tensor<2x4xf32>
// CHECK-NEXT: return %[[M]] : tensor<2x4xf32>
module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @gspmd(%arg0: tensor<4x8xf32>) -> tensor<4x4xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,2]<=[4]}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<4x8xf32>) -> tensor<2x4xf32>
    %2 = stablehlo.multiply %1, %1 : tensor<2x4xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}"} : (tensor<2x4xf32>) -> tensor<4x4xf32>
    return %4 : tensor<4x4xf32>
  }
}

// -----

// A shard_map in a private function (JAX keeps an inner jit as one): the call takes the
// callee's body first, then @main becomes the per-device program.
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>) -> tensor<2xf32>
// CHECK-NOT: call
// CHECK: %[[S:.*]] = stablehlo.add %[[X]], %[[X]] : tensor<2xf32>
// CHECK: return %[[S]] : tensor<2xf32>
// CHECK-NOT: func.func private @inner
module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @inner(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @inner(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<2xf32>
    %2 = stablehlo.add %1, %1 : tensor<2xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<2xf32>) -> tensor<2xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<2xf32>) -> tensor<8xf32>
    return %4 : tensor<8xf32>
  }
}

// -----

// An argument entering the shard_map twice (g(x, x)) through identical chains: one chain.
// CHECK-LABEL: func.func public @twice
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>) -> tensor<2xf32>
// CHECK: %[[P:.*]] = stablehlo.multiply %[[X]], %[[X]] : tensor<2xf32>
// CHECK: return %[[P]] : tensor<2xf32>
module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @twice(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<2xf32>
    %2 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<8xf32>) -> tensor<8xf32>
    %3 = stablehlo.custom_call @SPMDFullToShardShape(%2) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<2xf32>
    %4 = stablehlo.multiply %1, %3 : tensor<2xf32>
    %5 = stablehlo.custom_call @Sharding(%4) {mhlo.sharding = "{manual}"} : (tensor<2xf32>) -> tensor<2xf32>
    %6 = stablehlo.custom_call @SPMDShardToFullShape(%5) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<2xf32>) -> tensor<8xf32>
    return %6 : tensor<8xf32>
  }
}

// -----

// A sharding string whose device list does not fit its tile shape: the string is named.
module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  // expected-error@+1 {{mhlo.sharding '{devices=[4]0,1,2}' has a device list that does not fit [4]: cannot reshape array of size 3}}
  func.func public @bad_devices(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4]0,1,2}"} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<2xf32>
    %2 = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = "{manual}"} : (tensor<2xf32>) -> tensor<2xf32>
    %3 = stablehlo.custom_call @SPMDShardToFullShape(%2) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<2xf32>) -> tensor<8xf32>
    return %3 : tensor<8xf32>
  }
}

// -----

// Computation on global arrays around the shard_map: left alone.

// CHECK-LABEL: func.func public @global_work
// CHECK: sdy.manual_computation
// CHECK-NOT: xhlo.shard_map
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
  func.func public @global_work(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %g = stablehlo.add %arg0, %arg0 : tensor<4xf32>
    %0 = "sdy.manual_computation"(%g) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
    ^bb0(%a: tensor<2xf32>):
      "sdy.return"(%a) : (tensor<2xf32>) -> ()
    }) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  // expected-error@+1 {{xhlo-localize-shard-map: unsupported mhlo.sharding '{maximal device=1}'}}
  func.func public @maximal(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{maximal device=1}"} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<4xf32>) -> tensor<4xf32>
    %2 = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = "{manual}"} : (tensor<4xf32>) -> tensor<4xf32>
    %3 = stablehlo.custom_call @SPMDShardToFullShape(%2) {mhlo.sharding = "{replicated}"} : (tensor<4xf32>) -> tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}

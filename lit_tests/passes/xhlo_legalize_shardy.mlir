// RUN: xhlo-opt %s --allow-unregistered-dialect --xhlo-legalize-shardy --split-input-file --verify-diagnostics | FileCheck %s

// Sharding constraints forward their operand; a manual computation over
// size-1 axes is inlined; the mesh and every sdy.* attribute go.
// CHECK-LABEL: module
// CHECK-NOT: sdy
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"})
// CHECK-NEXT: %[[TWO:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[PRODUCT:.*]] = stablehlo.multiply %[[X]], %[[TWO]] : tensor<4xf32>
// CHECK-NEXT: %[[SUM:.*]] = stablehlo.add %[[PRODUCT]], %[[X]] : tensor<4xf32>
// CHECK-NEXT: return %[[SUM]] : tensor<4xf32>
// CHECK-NOT: sdy
module {
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> : () -> ()
  func.func public @main(%x: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %0 = "sdy.sharding_constraint"(%x) <{sharding = #sdy.sharding<@mesh, [{"x"}]>}> : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "sdy.manual_computation"(%0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
    ^bb0(%shard: tensor<4xf32>):
      %two = stablehlo.constant dense<2.000000e+00> : tensor<4xf32>
      %product = stablehlo.multiply %shard, %two : tensor<4xf32>
      "sdy.return"(%product) : (tensor<4xf32>) -> ()
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = stablehlo.add %1, %x {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}

// -----

// A named computation is only a name: its body is inlined.
// CHECK-LABEL: func.func @named
// CHECK-SAME: (%[[X:.*]]: tensor<2xi32>)
// CHECK-NEXT: %[[NEG:.*]] = stablehlo.negate %[[X]] : tensor<2xi32>
// CHECK-NEXT: return %[[NEG]] : tensor<2xi32>
func.func @named(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "sdy.named_computation"(%x) <{name = "negate"}> ({
  ^bb0(%arg: tensor<2xi32>):
    %1 = stablehlo.negate %arg : tensor<2xi32>
    "sdy.return"(%1) : (tensor<2xi32>) -> ()
  }) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// A manual computation over real shards needs partitioning: an error.
func.func @sharded(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'sdy.manual_computation' splits tensor<4xf32> into shards of tensor<2xf32>}}
  %0 = "sdy.manual_computation"(%x) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
  ^bb0(%shard: tensor<2xf32>):
    "sdy.return"(%shard) : (tensor<2xf32>) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unknown_sdy_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{unsupported Shardy op 'sdy.all_gather'}}
  %0 = "sdy.all_gather"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

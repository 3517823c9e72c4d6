// RUN: xhlo-opt %s --xhlo-legalize-custom-calls --split-input-file --verify-diagnostics | FileCheck %s

// Single-device sharding markers and optimization barriers forward their operands.
// CHECK-LABEL: func.func @identity_targets
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<2xi32>)
// CHECK-NEXT: %[[SUM:.*]] = stablehlo.add %[[X]], %[[X]] : tensor<4xf32>
// CHECK-NEXT: return %[[SUM]], %[[Y]] : tensor<4xf32>, tensor<2xi32>
// CHECK-NOT: custom_call
// CHECK-NOT: optimization_barrier
func.func @identity_targets(%x: tensor<4xf32>, %y: tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>) {
  %0 = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{replicated}"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.custom_call @SPMDShardToFullShape(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3:2 = stablehlo.optimization_barrier %2, %y : tensor<4xf32>, tensor<2xi32>
  %4 = stablehlo.add %3#0, %3#0 : tensor<4xf32>
  return %4, %3#1 : tensor<4xf32>, tensor<2xi32>
}

// -----

// Other custom calls cannot be compiled: the error names the target.
func.func @unknown_target(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{xhlo-legalize-custom-calls: unsupported custom call target 'my_kernel'}}
  %0 = stablehlo.custom_call @my_kernel(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks are evaluated only in the entry function (xhlo-expose-checks removes
// those); one left anywhere else is an error.
func.func private @helper(%x: tensor<2xi32>) -> tensor<2xi32> {
  // expected-error@+1 {{'check.expect_eq' outside the entry function cannot be evaluated}}
  stablehlo.custom_call @check.expect_eq(%x, %x) {has_side_effect = true} : (tensor<2xi32>, tensor<2xi32>) -> ()
  return %x : tensor<2xi32>
}

// -----

// A sharding marker that changes the number of values is not an identity.
func.func @not_identity(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error@+1 {{unsupported custom call target 'Sharding'}}
  %0:2 = stablehlo.custom_call @Sharding(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

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

// -----

// A shape marker that changes the shape belongs to a partitioned program.
func.func @partitioned(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'SPMDFullToShardShape' changes tensor<4xf32> into tensor<2xf32>}}
  %0 = stablehlo.custom_call @SPMDFullToShardShape(%x) {mhlo.sharding = "{manual}"} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A shape assertion that holds (after shape refinement) is dropped.
// CHECK-LABEL: func.func @assertion_holds
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>)
// CHECK-NOT: shape_assertion
// CHECK: return %[[X]]
func.func @assertion_holds(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %true = stablehlo.constant dense<true> : tensor<i1>
  %b = stablehlo.constant dense<3> : tensor<i32>
  stablehlo.custom_call @shape_assertion(%true, %b) {api_version = 2 : i32, error_message = "b = {0} must be >= 1", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  return %x : tensor<3x4xf32>
}

// -----

// One that fails is a compile error with JAX's message, dimensions filled in.
func.func @assertion_fails(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %false = stablehlo.constant dense<false> : tensor<i1>
  %b = stablehlo.constant dense<0> : tensor<i32>
  // expected-error@+1 {{shape assertion failed: b = 0 must be >= 1}}
  stablehlo.custom_call @shape_assertion(%false, %b) {api_version = 2 : i32, error_message = "b = {0} must be >= 1", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  return %x : tensor<0x4xf32>
}

// -----

// One on a value unknown at compile time: the module was not refined.
func.func @assertion_unknown(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %b = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %ok = stablehlo.compare GE, %b, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  // expected-error@+1 {{shape_assertion on a value unknown at compile time}}
  stablehlo.custom_call @shape_assertion(%ok, %b) {api_version = 2 : i32, error_message = "b >= 1", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  return %x : tensor<?x4xf32>
}

// -----

// ApproxTopK (XLA's CPU fallback is exact): a stable sort with the comparator
// (made private, so the inliner drops it), sliced to k along the dimension.
// CHECK-LABEL: func.func private @greater
// CHECK-LABEL: func.func @approx_max_k
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[IOTA:.*]] = stablehlo.iota dim = 1 : tensor<4x8xi32>
// CHECK: %[[SORTED:.*]]:2 = "stablehlo.sort"(%[[X]], %[[IOTA]]) <{dimension = 1 : i64, is_stable = true}>
// CHECK: ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>, %[[I:.*]]: tensor<i32>, %[[J:.*]]: tensor<i32>):
// CHECK: %[[LESS:.*]] = func.call @greater(%[[A]], %[[B]], %[[I]], %[[J]])
// CHECK: stablehlo.return %[[LESS]]
// CHECK: %[[VALUES:.*]] = stablehlo.slice %[[SORTED]]#0 [0:4, 0:2]
// CHECK: %[[INDICES:.*]] = stablehlo.slice %[[SORTED]]#1 [0:4, 0:2]
// CHECK: return %[[VALUES]], %[[INDICES]]
func.func @greater(%a: tensor<f32>, %b: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @approx_max_k(%x: tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>) {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %none = stablehlo.constant dense<-1> : tensor<i32>
  %iota = stablehlo.iota dim = 1 : tensor<4x8xi32>
  %0:2 = stablehlo.custom_call @ApproxTopK(%x, %iota, %init, %none) {called_computations = [@greater], mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 2 : i64}} : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
  return %0#0, %0#1 : tensor<4x2xf32>, tensor<4x2xi32>
}

// -----

// JAX's dynamic ops still dynamic after refinement (xhlo-legalize-dynamic-custom-calls
// made static what it could): named, with what to do.
func.func @dynamic_top_k(%x: tensor<?x8xf32>, %k: tensor<i32>) -> tensor<?x?xf32> {
  // expected-error@+1 {{'stablehlo.dynamic_top_k' whose shape operands are not constants: compile for concrete input shapes}}
  %0:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<?x8xf32>, tensor<i32>) -> (tensor<?x?xf32>, tensor<?x?xi32>)
  return %0#0 : tensor<?x?xf32>
}

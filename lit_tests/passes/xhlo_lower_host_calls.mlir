// RUN: xhlo-opt %s --xhlo-lower-host-calls --split-input-file --verify-diagnostics | FileCheck %s

// Infeed and outfeed become side-effecting runtime calls on their data; tokens are forwarded.
// CHECK-LABEL: func.func @infeed_then_outfeed
// CHECK-SAME: (%[[T:.*]]: !stablehlo.token)
// CHECK: %[[IN:.*]]:2 = stablehlo.custom_call @xhlo.runtime.infeed()
// CHECK-SAME: op = "stablehlo.infeed"
// CHECK-SAME: signature = "stablehlo.infeed(!stablehlo.token) -> (tensor<2x3xf32>, tensor<i32>, !stablehlo.token)
// CHECK-SAME: has_side_effect = true
// CHECK-SAME: () -> (tensor<2x3xf32>, tensor<i32>)
// CHECK: stablehlo.custom_call @xhlo.runtime.outfeed(%[[IN]]#0)
// CHECK-SAME: op = "stablehlo.outfeed"
// CHECK-SAME: (tensor<2x3xf32>) -> ()
// CHECK: return %[[IN]]#0, %[[IN]]#1, %[[T]]
// CHECK-NOT: stablehlo.infeed"
func.func @infeed_then_outfeed(%t: !stablehlo.token) -> (tensor<2x3xf32>, tensor<i32>, !stablehlo.token) {
  %r:3 = "stablehlo.infeed"(%t) {infeed_config = ""} : (!stablehlo.token) -> (tensor<2x3xf32>, tensor<i32>, !stablehlo.token)
  %t2 = "stablehlo.outfeed"(%r#0, %r#2) {outfeed_config = ""} : (tensor<2x3xf32>, !stablehlo.token) -> !stablehlo.token
  return %r#0, %r#1, %t2 : tensor<2x3xf32>, tensor<i32>, !stablehlo.token
}

// -----

// A custom call whose target has no registered Python function is left for
// xhlo-legalize-custom-calls to report.
// CHECK-LABEL: func.func @unregistered_target_is_left
// CHECK: stablehlo.custom_call @my_kernel
func.func @unregistered_target_is_left(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @my_kernel(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The host exchanges whole buffers: their shapes must be static.
func.func @dynamic_outfeed(%x: tensor<?xf32>, %t: !stablehlo.token) -> !stablehlo.token {
  // expected-error@+1 {{xhlo-lower-host-calls: 'stablehlo.outfeed' needs statically shaped tensors, got tensor<?xf32>}}
  %t2 = "stablehlo.outfeed"(%x, %t) {outfeed_config = ""} : (tensor<?xf32>, !stablehlo.token) -> !stablehlo.token
  return %t2 : !stablehlo.token
}

// Stage 1 of xhlo.compile: StableHLO -> StableHLO the linalg lowering accepts.
// RUN: xhlo-opt %s --xhlo-stablehlo-prepare --split-input-file --verify-diagnostics | FileCheck %s
// RUN: xhlo-opt %s -p 'builtin.module(xhlo-stablehlo-prepare)' --split-input-file --verify-diagnostics \
// RUN:   | FileCheck %s

// Calls are inlined (and the callee dropped), CHLO is expanded into StableHLO,
// single-device sharding markers disappear.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xui8>) -> (tensor<3xf32>, tensor<3xui8>)
// CHECK-NEXT: %[[SQUARE:.*]] = stablehlo.multiply %[[A]], %[[A]] : tensor<3xf32>
// CHECK-NEXT: %[[TAN:.*]] = stablehlo.tan %[[SQUARE]] : tensor<3xf32>
// CHECK-NEXT: %[[SUM:.*]] = stablehlo.add %[[B]], %[[B]] : tensor<3xui8>
// CHECK-NEXT: return %[[TAN]], %[[SUM]]
// CHECK-NOT: @square
// CHECK-NOT: chlo.
// CHECK-NOT: custom_call
func.func private @square(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @main(%a: tensor<3xf32>, %b: tensor<3xui8>) -> (tensor<3xf32>, tensor<3xui8>) {
  %0 = call @square(%a) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = chlo.tan %0 : tensor<3xf32> -> tensor<3xf32>
  %2 = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = "{replicated}"} : (tensor<3xf32>) -> tensor<3xf32>
  %3 = stablehlo.add %b, %b : tensor<3xui8>
  return %2, %3 : tensor<3xf32>, tensor<3xui8>
}

// -----

// Composites become calls to their decomposition, which is then inlined.
// CHECK-LABEL: func.func @composite
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>)
// CHECK-NEXT: %[[DOUBLE:.*]] = stablehlo.add %[[X]], %[[X]] : tensor<2xf32>
// CHECK-NEXT: return %[[DOUBLE]]
func.func @composite(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.composite "my.double" %x {decomposition = @double_impl} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @double_impl(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A custom call xhlo does not know fails this stage, naming the target.
func.func @unknown_custom_call(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{unsupported custom call target 'my_kernel'}}
  %0 = stablehlo.custom_call @my_kernel(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A subexpression the program repeats (JAX leaves that to XLA's CSE) is computed once.
// CHECK-LABEL: func.func @repeated
// CHECK: %[[SUM:.*]] = stablehlo.reduce
// CHECK-NOT: stablehlo.reduce
// CHECK: return %[[SUM]], %[[SUM]]
func.func @repeated(%x: tensor<64xf32>) -> (tensor<f32>, tensor<f32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<64xf32>, tensor<f32>) -> tensor<f32>
  %1 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<64xf32>, tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}

// RUN: xhlo-opt %s --xhlo-readonly-arguments --split-input-file | FileCheck %s

// Public functions' arguments become read-only for bufferization; existing
// argument attributes are kept.
// CHECK-LABEL: func.func @public_fn
// CHECK-SAME: %{{.*}}: tensor<4xf32> {bufferization.writable = false, jax.arg_info = "x"}
// CHECK-SAME: %{{.*}}: tensor<i32> {bufferization.writable = false}
func.func @public_fn(%a: tensor<4xf32> {jax.arg_info = "x"}, %i: tensor<i32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// Private functions are left alone (bufferization analyses their callers).
// CHECK-LABEL: func.func private @private_fn
// CHECK-NOT: bufferization.writable
func.func private @private_fn(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

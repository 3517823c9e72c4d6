// RUN: xhlo-opt %s --xhlo-lower-runtime-calls --split-input-file --verify-diagnostics | FileCheck %s

// A runtime call becomes a call of an external function on memrefs; the
// module's xhlo.runtime_calls table describes it (sizes in bytes).

// CHECK-LABEL: module attributes
// CHECK-SAME: xhlo.runtime_calls = [{groups = dense<{{\[\[}}0, 1]]> : tensor<1x2xi64>, index = 0 : i64
// CHECK-SAME: op = "stablehlo.all_reduce", operand_bytes = array<i64: 16>, operand_itemsize = array<i64: 4>
// CHECK-SAME: operand_types = "4xf32", primitive = "all_gather", result_bytes = array<i64: 32>, result_itemsize = array<i64: 4>
// CHECK-SAME: result_types = "2x4xf32"
// CHECK: func.func private @xhlo_rt_op0(memref<4xf32> {bufferization.access = "read"}, memref<2x4xf32> {bufferization.access = "write"}) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @gather
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4xf32>
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<4xf32> to memref<4xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4xf32>
// CHECK: call @xhlo_rt_op0(%[[IN]], %[[OUT]]) : (memref<4xf32>, memref<2x4xf32>) -> ()
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<2x4xf32> to tensor<2x4xf32>
// CHECK: return %[[R]]
module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @gather(%x: tensor<4xf32>) -> tensor<2x4xf32> {
    %0 = stablehlo.custom_call @xhlo.runtime.all_gather(%x) {api_version = 4 : i32, backend_config = {
        groups = dense<[[0, 1]]> : tensor<1x2xi64>, op = "stablehlo.all_reduce", signature = "s"}, has_side_effect = true}
        : (tensor<4xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}

// -----

// Unsigned tensors cross the call as signless integers; an i1 result is a
// one-byte buffer. Each call site gets its own function.

// CHECK-LABEL: module attributes
// CHECK-SAME: operand_types = "3xui32"
// CHECK-SAME: result_bytes = array<i64: 12, 1>
// CHECK-SAME: result_types = "3xui32;i1"
// CHECK-DAG: func.func private @xhlo_rt_op0(memref<3xi32> {bufferization.access = "read"}, memref<3xi32> {bufferization.access = "write"}, memref<i1> {bufferization.access = "write"}) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @xhlo_rt_op1(memref<2xi64> {bufferization.access = "write"}) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @permute
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<3xui32>
// CHECK: %[[S:.*]] = stablehlo.bitcast_convert %[[X]] : (tensor<3xui32>) -> tensor<3xi32>
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[S]] read_only
// CHECK: %[[Y:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3xi32>
// CHECK: %[[F:.*]] = memref.alloc() {alignment = 64 : i64} : memref<i1>
// CHECK: call @xhlo_rt_op0(%[[IN]], %[[Y]], %[[F]])
// CHECK: %[[YT:.*]] = bufferization.to_tensor %[[Y]] restrict writable
// CHECK: %[[U:.*]] = stablehlo.bitcast_convert %[[YT]] : (tensor<3xi32>) -> tensor<3xui32>
// CHECK: %[[FT:.*]] = bufferization.to_tensor %[[F]] restrict writable : memref<i1> to tensor<i1>
// CHECK: call @xhlo_rt_op1
// CHECK: stablehlo.select %[[FT]], %[[U]]
module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @permute(%x: tensor<3xui32>) -> (tensor<3xui32>, tensor<2xi64>) {
    %0:2 = stablehlo.custom_call @xhlo.runtime.collective_permute(%x) {api_version = 4 : i32, backend_config = {
        groups = dense<[[0, 1]]> : tensor<1x2xi64>, op = "stablehlo.collective_permute",
        pairs = dense<[[0, 1]]> : tensor<1x2xi64>, signature = "s"}, has_side_effect = true}
        : (tensor<3xui32>) -> (tensor<3xui32>, tensor<i1>)
    %ids = stablehlo.custom_call @xhlo.runtime.device_id() {api_version = 4 : i32, backend_config = {
        groups = dense<> : tensor<0x0xi64>, op = "stablehlo.replica_id", signature = "s"}, has_side_effect = true}
        : () -> tensor<2xi64>
    %z = stablehlo.constant dense<0> : tensor<3xui32>
    %r = stablehlo.select %0#1, %0#0, %z : tensor<i1>, tensor<3xui32>
    return %r, %ids : tensor<3xui32>, tensor<2xi64>
  }
}

// -----

// Other custom calls are left alone.

// CHECK-LABEL: func.func @other
// CHECK: stablehlo.custom_call @foo
// CHECK-NOT: xhlo_rt_op
module {
  func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @foo(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module {
  func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
    // expected-error@+1 {{xhlo-lower-runtime-calls: runtime call operands must be statically shaped tensors, got tensor<?xf32>}}
    %0 = stablehlo.custom_call @xhlo.runtime.all_gather(%x) {api_version = 4 : i32, backend_config = {
        groups = dense<[[0]]> : tensor<1x1xi64>, op = "stablehlo.all_gather", signature = "s"}, has_side_effect = true}
        : (tensor<?xf32>) -> tensor<?xf32>
    return %0 : tensor<?xf32>
  }
}

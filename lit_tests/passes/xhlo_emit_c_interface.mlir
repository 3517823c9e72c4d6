// RUN: xhlo-opt %s --xhlo-emit-c-interface | FileCheck %s

// Public functions with a body get llvm.emit_c_interface (the ExecutionEngine
// calls their _mlir_ciface_ wrappers); private functions and declarations don't.
// CHECK-LABEL: func.func @implicitly_public
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @implicitly_public(%a: memref<2xf32>) {
  return
}

// CHECK-LABEL: func.func public @explicitly_public
// CHECK-SAME: attributes {llvm.emit_c_interface, other = 1 : i32}
func.func public @explicitly_public() attributes {other = 1 : i32} {
  return
}

// CHECK-LABEL: func.func private @helper() {
// CHECK-NEXT: return
func.func private @helper() {
  return
}

// CHECK-LABEL: func.func private @external(memref<2xf32>){{$}}
func.func private @external(memref<2xf32>)

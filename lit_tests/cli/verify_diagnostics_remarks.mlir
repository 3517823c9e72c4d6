// Remarks: transform.debug.emit_remark_at reports at the payload op's line.
// RUN: xhlo-opt %s --transform-interpreter --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @payload
module attributes {transform.with_named_sequence} {
  func.func @payload(%a: i32) -> i32 {
    // expected-remark@below {{found an addition}}
    // expected-remark@below {{found an arith op}}
    %0 = arith.addi %a, %a : i32
    return %0 : i32 // expected-remark {{found a return}}
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op) {
    %add = transform.structured.match ops{["arith.addi"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %add, "found an addition" : !transform.any_op
    transform.debug.emit_remark_at %add, "found an arith op" : !transform.any_op
    %ret = transform.structured.match ops{["func.return"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %ret, "found a return" : !transform.any_op
    transform.yield
  }
}

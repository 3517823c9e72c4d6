// Warnings and their notes. transform-dialect-check-uses warns when a consumed
// transform handle is used again, with notes where it was allocated and freed.
// RUN: xhlo-opt %s --transform-dialect-check-uses --verify-diagnostics --split-input-file

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op) {
    // expected-note@below {{allocated here}}
    %0 = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %1 = transform.structured.generalize %0 : (!transform.any_op) -> !transform.any_op
    // expected-note@above {{freed here}}
    // expected-warning@+1 {{operand #0 may be used after free}}
    %2 = transform.structured.generalize %0 : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

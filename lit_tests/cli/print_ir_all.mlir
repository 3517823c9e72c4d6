// --mlir-print-ir-before-all / -after-all dump the IR around every pass to
// stderr, xhlo passes included (under their own names).
// RUN: xhlo-opt %s --cse --xhlo-legalize-control-flow --mlir-print-ir-after-all -o %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=AFTER
// RUN: xhlo-opt %s --cse --xhlo-legalize-control-flow --mlir-print-ir-before-all -o %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BEFORE
// After-change skips passes that left the IR alone (symbol-dce here).
// RUN: xhlo-opt %s --symbol-dce --xhlo-legalize-control-flow --mlir-print-ir-after-all \
// RUN:   --mlir-print-ir-after-change -o %t 2>&1 | FileCheck %s --check-prefix=CHANGE
// Module scope prints the whole module for a pass nested on functions.
// RUN: xhlo-opt %s -p 'builtin.module(func.func(cse))' --mlir-print-ir-after-all \
// RUN:   --mlir-print-ir-module-scope -o %t 2>&1 | FileCheck %s --check-prefix=SCOPE

// AFTER: // -----// IR Dump After CSEPass: cse //----- //
// AFTER-NEXT: module {
// AFTER: stablehlo.if
// AFTER: // -----// IR Dump After xhlo-legalize-control-flow: xhlo-legalize-control-flow //----- //
// AFTER-NEXT: module {
// AFTER: scf.if

// BEFORE: // -----// IR Dump Before CSEPass: cse //----- //
// BEFORE: stablehlo.if
// BEFORE: // -----// IR Dump Before xhlo-legalize-control-flow: xhlo-legalize-control-flow //----- //
// BEFORE: stablehlo.if
// BEFORE-NOT: IR Dump

// CHANGE-NOT: IR Dump After {{.*}}symbol-dce
// CHANGE: // -----// IR Dump After xhlo-legalize-control-flow
// CHANGE-NOT: IR Dump

// SCOPE: // -----// IR Dump After CSEPass: cse ('func.func' operation: @select_branch) //----- //
// SCOPE-NEXT: module {
// SCOPE-NEXT: func.func @select_branch
func.func @select_branch(%p: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.if"(%p) ({
    %1 = stablehlo.abs %x : tensor<2xf32>
    stablehlo.return %1 : tensor<2xf32>
  }, {
    %2 = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %2 : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

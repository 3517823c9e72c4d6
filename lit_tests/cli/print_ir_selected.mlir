// --mlir-print-ir-before=PASS / --mlir-print-ir-after=PASS dump only around the
// passes named (upstream or xhlo; repeat the flag or separate names by commas).
// RUN: xhlo-opt %s --cse --xhlo-legalize-control-flow --canonicalize \
// RUN:   --mlir-print-ir-after=xhlo-legalize-control-flow -o %t 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: xhlo-opt %s --cse --xhlo-legalize-control-flow --canonicalize \
// RUN:   --mlir-print-ir-before=cse,canonicalize -o %t 2>&1 | FileCheck %s --check-prefix=BEFORE
// RUN: xhlo-opt %s -p 'builtin.module(func.func(cse),xhlo-legalize-control-flow)' \
// RUN:   --mlir-print-ir-before=xhlo-legalize-control-flow --mlir-print-ir-after cse -o %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BOTH
// A failing pass is dumped with --mlir-print-ir-after-failure.
// RUN: not xhlo-opt %s --cse --xhlo-check-lowered --mlir-print-ir-after-failure 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FAILURE
// RUN: not xhlo-opt %s --mlir-print-ir-after=no-such-pass 2>&1 | FileCheck %s --check-prefix=BAD

// AFTER-NOT: CSEPass
// AFTER: // -----// IR Dump After xhlo-legalize-control-flow: xhlo-legalize-control-flow //----- //
// AFTER-NEXT: module {
// AFTER-NEXT: func.func @select_branch
// AFTER: scf.if
// AFTER-NOT: IR Dump

// BEFORE: // -----// IR Dump Before CSEPass: cse //----- //
// BEFORE: stablehlo.if
// BEFORE-NOT: IR Dump Before xhlo-legalize-control-flow
// BEFORE: // -----// IR Dump Before Canonicalizer{{.*}}: canonicalize{{.*}} //----- //
// BEFORE: scf.if
// BEFORE-NOT: IR Dump

// BOTH: // -----// IR Dump After CSEPass: cse //----- //
// BOTH-NEXT: func.func @select_branch
// BOTH: // -----// IR Dump Before xhlo-legalize-control-flow: xhlo-legalize-control-flow //----- //
// BOTH-NOT: IR Dump

// FAILURE-NOT: IR Dump After CSEPass
// FAILURE: // -----// IR Dump After xhlo-check-lowered Failed: xhlo-check-lowered //----- //
// FAILURE: stablehlo.if
// FAILURE: print_ir_selected.mlir:[[# @LINE + 4]]:8: error: xhlo-check-lowered: xhlo cannot lower 'stablehlo.if'

// BAD: xhlo-opt: error: --mlir-print-ir-before/after: 'no-such-pass' is not a pass name
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

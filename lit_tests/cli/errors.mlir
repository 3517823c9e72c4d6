// Every error exits with status 1 and an mlir-opt style message on stderr,
// file:line:col for errors in the input; never a Python traceback.
// RUN: not xhlo-opt %s --split-input-file --xhlo-check-lowered 2>&1 | FileCheck %s
// RUN: not xhlo-opt %s --no-such-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not xhlo-opt %s --canonicalize="no-such-option=1" 2>&1 | FileCheck %s --check-prefix=UPSTREAM-OPTION
// RUN: not xhlo-opt %s --xhlo-check-lowered="no-such-option=1" 2>&1 | FileCheck %s --check-prefix=XHLO-OPTION
// RUN: not xhlo-opt %s -p 'builtin.module(func.func(cse)' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not xhlo-opt %s -p 'builtin.module(func.func(xhlo-check-lowered))' 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not xhlo-opt %s --xhlo-bufferize=foo=1 2>&1 | FileCheck %s --check-prefix=STAGE-OPTION
// RUN: not xhlo-opt %s.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not xhlo-opt %s %s 2>&1 | FileCheck %s --check-prefix=TWO-INPUTS
// RUN: not xhlo-opt %s -o 2>&1 | FileCheck %s --check-prefix=NO-VALUE
// RUN: not xhlo-opt %s --verify-diagnostics=sometimes 2>&1 | FileCheck %s --check-prefix=LEVEL
// RUN: not xhlo-opt %s --mlir-elide-elementsattrs-if-larger=many 2>&1 | FileCheck %s --check-prefix=INTEGER

// CHECK-NOT: Traceback
// FLAG: xhlo-opt: error: unknown command line argument '--no-such-flag'
// UPSTREAM-OPTION: xhlo-opt: error: invalid pass pipeline element 'canonicalize{no-such-option=1}'
// UPSTREAM-OPTION: no such option no-such-option
// XHLO-OPTION: xhlo-opt: error: pass 'xhlo-check-lowered' has no option 'no-such-option' (options: dialects)
// PIPELINE: xhlo-opt: error: invalid pass pipeline element
// PIPELINE: unbalanced parentheses
// NESTED: xhlo-opt: error: 'xhlo-check-lowered' is an xhlo module pass: put it at the top level
// STAGE-OPTION: xhlo-opt: error: named pipeline 'xhlo-bufferize' takes no options
// MISSING: xhlo-opt: error: could not open input file '{{.*}}errors.mlir.missing'
// TWO-INPUTS: xhlo-opt: error: expected one input file, got 2
// NO-VALUE: xhlo-opt: error: -o needs a value
// LEVEL: xhlo-opt: error: --verify-diagnostics takes 'all' or 'only-expected'
// INTEGER: xhlo-opt: error: --mlir-elide-elementsattrs-if-larger takes an integer

// A parse error.
// CHECK: errors.mlir:[[# @LINE + 2]]:18: error: expected SSA operand
func.func @parse_error(%a: i32) -> i32 {
  %0 = arith.addi , %a : i32
  return %0 : i32
}

// -----

// A verifier error.
// CHECK: errors.mlir:[[# @LINE + 2]]:3: error: 'func.return' op has 0 operands, but enclosing function (@verifier_error) returns 1
func.func @verifier_error(%a: i32) -> i32 {
  return
}

// -----

// A pass failure, with the source line and a caret under the op.
// CHECK: errors.mlir:[[# @LINE + 4]]:8: error: xhlo-check-lowered: xhlo cannot lower 'stablehlo.abs' yet
// CHECK-NEXT: {{^}}  %0 = stablehlo.abs %a : tensor<2xf32>
// CHECK-NEXT: {{^}}       ^
func.func @pass_failure(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.abs %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// One flag per pass, mlir-opt style: --<pass> or --<pass>="opt=val ...", for
// xhlo passes and for any pass the provider registers, run in command-line order.
// RUN: xhlo-opt %s --split-input-file --inline | FileCheck %s --check-prefix=INLINE
// RUN: xhlo-opt %s --split-input-file --symbol-privatize --symbol-dce | FileCheck %s --check-prefix=PRIVATIZE-DCE
// RUN: xhlo-opt %s --split-input-file --symbol-dce --symbol-privatize | FileCheck %s --check-prefix=DCE-PRIVATIZE
// RUN: xhlo-opt %s --split-input-file --cse | FileCheck %s --check-prefix=CSE
// RUN: xhlo-opt %s --split-input-file -canonicalize | FileCheck %s --check-prefix=CANON
// RUN: xhlo-opt %s --split-input-file --stablehlo-legalize-to-linalg="enable-primitive-ops=true" \
// RUN:   | FileCheck %s --check-prefix=PRIMITIVE
// RUN: xhlo-opt %s --split-input-file --stablehlo-legalize-to-linalg=enable-primitive-ops=true \
// RUN:   --linalg-generalize-named-ops | FileCheck %s --check-prefix=GENERIC
// RUN: not xhlo-opt %s --split-input-file --xhlo-check-lowered="dialects=arith,math" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPTION

// INLINE-LABEL: func.func @caller
// INLINE-NEXT: arith.muli
// INLINE-NOT: @callee
// Privatizing first lets symbol-dce drop the unused @helper; the other order keeps it.
// PRIVATIZE-DCE-NOT: @helper
// DCE-PRIVATIZE: func.func private @helper
// OPTION: pass_flags.mlir:[[# @LINE + 2]]:8: error: xhlo-check-lowered: xhlo cannot lower 'arith.muli'
func.func private @callee(%a: i32) -> i32 {
  %0 = arith.muli %a, %a : i32
  return %0 : i32
}
func.func @caller(%a: i32) -> i32 {
  %0 = call @callee(%a) : (i32) -> i32
  return %0 : i32
}
func.func @helper() {
  return
}

// -----

// CSE-LABEL: func.func @twice
// CSE: %[[SUM:.*]] = arith.addi
// CSE-NEXT: %[[PRODUCT:.*]] = arith.muli %[[SUM]], %[[SUM]]
func.func @twice(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  return %2 : i32
}

// -----

// A single dash works too, as in mlir-opt.
// CANON-LABEL: func.func @times_one
// CANON-SAME: (%[[A:.*]]: i32)
// CANON-NEXT: return %[[A]] : i32
func.func @times_one(%a: i32) -> i32 {
  %one = arith.constant 1 : i32
  %0 = arith.muli %a, %one : i32
  return %0 : i32
}

// -----

// PRIMITIVE-LABEL: func.func @add
// PRIMITIVE: linalg.map { arith.addf }
// GENERIC-LABEL: func.func @add
// GENERIC: linalg.generic
// GENERIC: arith.addf
func.func @add(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// --mlir-timing prints MLIR's execution time report (xhlo passes by name) to
// stderr; --mlir-pass-statistics prints pass statistics.
// RUN: xhlo-opt %s -p 'builtin.module(func.func(cse),xhlo-legalize-control-flow)' --mlir-timing \
// RUN:   -o %t 2>&1 | FileCheck %s
// RUN: xhlo-opt %s --cse --mlir-pass-statistics -o %t 2>&1 | FileCheck %s --check-prefix=STATS
// Threading and verify-each switches are accepted and change nothing here.
// RUN: xhlo-opt %s --mlir-disable-threading --verify-each=false --cse | FileCheck %s --check-prefix=CSE

// CHECK: Execution time report
// CHECK: Total Execution Time:
// CHECK: 'func.func' Pipeline
// CHECK-NEXT: CSEPass
// CHECK: xhlo-legalize-control-flow
// CHECK: Total

// STATS: Pass statistics report

// CSE-LABEL: func.func @f
// CSE-NEXT: %[[SUM:.*]] = arith.addi
// CSE-NEXT: arith.muli %[[SUM]], %[[SUM]]
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  return %2 : i32
}

// -o writes the result to a file (stdout stays empty); "-o -" is stdout.
// RUN: xhlo-opt %s --canonicalize -o %t.mlir | FileCheck %s --check-prefix=EMPTY --allow-empty
// RUN: FileCheck %s --input-file %t.mlir
// RUN: xhlo-opt %s --canonicalize -o - | FileCheck %s
// RUN: xhlo-opt %s --canonicalize -o=%t.eq.mlir
// RUN: FileCheck %s --input-file %t.eq.mlir

// EMPTY-NOT: {{.}}

// CHECK-LABEL: func.func @folded
// CHECK-NEXT: %[[C:.*]] = arith.constant 5 : i32
// CHECK-NEXT: return %[[C]] : i32
func.func @folded() -> i32 {
  %a = arith.constant 2 : i32
  %b = arith.constant 3 : i32
  %0 = arith.addi %a, %b : i32
  return %0 : i32
}

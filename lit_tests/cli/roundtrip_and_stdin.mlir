// Without passes xhlo-opt parses, verifies and prints; the input may come
// from a file, from "-" or (no input argument) from stdin.
// RUN: xhlo-opt %s | FileCheck %s
// RUN: xhlo-opt - < %s | FileCheck %s
// RUN: xhlo-opt < %s | FileCheck %s
// RUN: xhlo-opt %s | xhlo-opt | FileCheck %s

// CHECK: module {
// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[A:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: %[[SUM:.*]] = stablehlo.add %[[A]], %[[B]] : tensor<2xf32>
// CHECK-NEXT: return %[[SUM]] : tensor<2xf32>
func.func @add(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func private @decl
func.func private @decl(tensor<2xf32>) -> tensor<2xf32>

// RUN: xhlo-opt %s --xhlo-legalize-bool-add --split-input-file | FileCheck %s

// Boolean addition is a logical OR in StableHLO.
// CHECK-LABEL: func.func @bool_add
// CHECK-SAME: (%[[A:.*]]: tensor<4xi1>, %[[B:.*]]: tensor<4xi1>)
// CHECK-NEXT: %[[R:.*]] = stablehlo.or %[[A]], %[[B]] : tensor<4xi1>
// CHECK-NEXT: return %[[R]]
func.func @bool_add(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %0 = stablehlo.add %a, %b : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Other element types keep their add.
// CHECK-LABEL: func.func @int_add
// CHECK-NEXT: stablehlo.add
// CHECK-NOT: stablehlo.or
func.func @int_add(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi8> {
  %0 = stablehlo.add %a, %b : tensor<4xi8>
  return %0 : tensor<4xi8>
}

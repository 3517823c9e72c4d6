// RUN: xhlo-opt %s --xhlo-fold-constant-atan2 --split-input-file | FileCheck %s

// atan2 of two constants folds as IEEE 754: atan2(0, 0) = 0, atan2(0, -0) = pi.
// CHECK-LABEL: func.func @zeros
// CHECK: %[[R:.*]] = stablehlo.constant dense<[0.000000e+00, 3.14159274]> : tensor<2xf32>
// CHECK-NOT: stablehlo.atan2
// CHECK: return %[[R]]
func.func @zeros() -> tensor<2xf32> {
  %y = stablehlo.constant dense<0.0> : tensor<2xf32>
  %x = stablehlo.constant dense<[0.0, -0.0]> : tensor<2xf32>
  %0 = stablehlo.atan2 %y, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// An operand that is not a constant: left alone.
// CHECK-LABEL: func.func @argument
// CHECK: stablehlo.atan2
func.func @argument(%y: tensor<2xf32>) -> tensor<2xf32> {
  %x = stablehlo.constant dense<0.0> : tensor<2xf32>
  %0 = stablehlo.atan2 %y, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}

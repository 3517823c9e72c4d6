// RUN: xhlo-opt %s --xhlo-split-f64-to-half-converts --split-input-file | FileCheck %s

// f64 -> bf16: nearest f32, its error decides round-to-odd bits, then bf16.
// CHECK-LABEL: func.func @to_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<4xf64>)
// CHECK: %[[N:.*]] = stablehlo.convert %[[X]] : (tensor<4xf64>) -> tensor<4xf32>
// CHECK: %[[B:.*]] = stablehlo.convert %[[N]] : (tensor<4xf32>) -> tensor<4xf64>
// CHECK: stablehlo.compare NE, %[[B]], %[[X]]
// CHECK: stablehlo.compare GT
// CHECK: %[[BITS:.*]] = stablehlo.bitcast_convert %[[N]] : (tensor<4xf32>) -> tensor<4xi32>
// CHECK: stablehlo.subtract %[[BITS]]
// CHECK: %[[ODD:.*]] = stablehlo.or
// CHECK: %[[F:.*]] = stablehlo.bitcast_convert %[[ODD]] : (tensor<4xi32>) -> tensor<4xf32>
// CHECK: %[[R:.*]] = stablehlo.convert %[[F]] : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK: return %[[R]]
func.func @to_bf16(%x: tensor<4xf64>) -> tensor<4xbf16> {
  %0 = stablehlo.convert %x : (tensor<4xf64>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// Other conversions stay.
// CHECK-LABEL: func.func @others
// CHECK-NEXT: stablehlo.convert %{{.*}} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT: stablehlo.convert %{{.*}} : (tensor<4xf64>) -> tensor<4xf32>
// CHECK-NEXT: return
func.func @others(%x: tensor<4xf32>, %y: tensor<4xf64>) -> (tensor<4xf16>, tensor<4xf32>) {
  %0 = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xf16>
  %1 = stablehlo.convert %y : (tensor<4xf64>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf16>, tensor<4xf32>
}

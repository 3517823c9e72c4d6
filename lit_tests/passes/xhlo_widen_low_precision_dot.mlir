// RUN: xhlo-opt %s --xhlo-widen-low-precision-dot --split-input-file | FileCheck %s

// A bf16 dot runs in f32 and is rounded once.
// CHECK-LABEL: func.func @bf16_dot
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xbf16>, %[[B:.*]]: tensor<8x3xbf16>)
// CHECK-NEXT: %[[WA:.*]] = stablehlo.convert %[[A]] : (tensor<2x8xbf16>) -> tensor<2x8xf32>
// CHECK-NEXT: %[[WB:.*]] = stablehlo.convert %[[B]] : (tensor<8x3xbf16>) -> tensor<8x3xf32>
// CHECK-NEXT: %[[D:.*]] = stablehlo.dot_general %[[WA]], %[[WB]], contracting_dims = [1] x [0] : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.convert %[[D]] : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// CHECK-NEXT: return %[[R]]
func.func @bf16_dot(%a: tensor<2x8xbf16>, %b: tensor<8x3xbf16>) -> tensor<2x3xbf16> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x8xbf16>, tensor<8x3xbf16>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// -----

// f32 dots are untouched.
// CHECK-LABEL: func.func @f32_dot
// CHECK-NOT: stablehlo.convert
// CHECK: stablehlo.dot_general
func.func @f32_dot(%a: tensor<2x8xf32>, %b: tensor<8x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// complex64 operands of a complex128 product are converted (exactly) to complex128.
// CHECK-LABEL: func.func @complex_preferred
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xcomplex<f32>>, %[[B:.*]]: tensor<8x3xcomplex<f32>>)
// CHECK-NEXT: %[[WA:.*]] = stablehlo.convert %[[A]] : (tensor<2x8xcomplex<f32>>) -> tensor<2x8xcomplex<f64>>
// CHECK-NEXT: %[[WB:.*]] = stablehlo.convert %[[B]] : (tensor<8x3xcomplex<f32>>) -> tensor<8x3xcomplex<f64>>
// CHECK-NEXT: %[[D:.*]] = stablehlo.dot_general %[[WA]], %[[WB]], contracting_dims = [1] x [0] : (tensor<2x8xcomplex<f64>>, tensor<8x3xcomplex<f64>>) -> tensor<2x3xcomplex<f64>>
// CHECK-NEXT: return %[[D]]
func.func @complex_preferred(%a: tensor<2x8xcomplex<f32>>, %b: tensor<8x3xcomplex<f32>>) -> tensor<2x3xcomplex<f64>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x8xcomplex<f32>>, tensor<8x3xcomplex<f32>>) -> tensor<2x3xcomplex<f64>>
  return %0 : tensor<2x3xcomplex<f64>>
}

// -----

// bf16 operands of an f32 product are converted (exactly) to f32; the result is as it was.
// CHECK-LABEL: func.func @bf16_preferred_f32
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xbf16>, %[[B:.*]]: tensor<8x3xbf16>)
// CHECK-NEXT: %[[WA:.*]] = stablehlo.convert %[[A]] : (tensor<2x8xbf16>) -> tensor<2x8xf32>
// CHECK-NEXT: %[[WB:.*]] = stablehlo.convert %[[B]] : (tensor<8x3xbf16>) -> tensor<8x3xf32>
// CHECK-NEXT: %[[D:.*]] = stablehlo.dot_general %[[WA]], %[[WB]], contracting_dims = [1] x [0] : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[D]]
func.func @bf16_preferred_f32(%a: tensor<2x8xbf16>, %b: tensor<8x3xbf16>) -> tensor<2x3xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x8xbf16>, tensor<8x3xbf16>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// RUN: xhlo-opt %s --xhlo-legalize-complex-ops --split-input-file | FileCheck %s

// A complex bitcast to its own type is the identity.
// CHECK-LABEL: func.func @same_type
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xcomplex<f32>>)
// CHECK-NEXT: return %[[A]]
func.func @same_type(%a: tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>> {
  %0 = stablehlo.bitcast_convert %a : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>
  return %0 : tensor<2x3xcomplex<f32>>
}

// -----

// complex<f64> -> 2 x complex<f32>: each real part splits into (low, high) f32
// halves, and the result's real parts are the low halves.
// CHECK-LABEL: func.func @narrowing
// CHECK-DAG: %[[RE:.*]] = stablehlo.real %{{.*}} : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
// CHECK-DAG: %[[IM:.*]] = stablehlo.imag %{{.*}} : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
// CHECK-DAG: %[[RE2:.*]] = stablehlo.bitcast_convert %[[RE]] : (tensor<3xf64>) -> tensor<3x2xf32>
// CHECK-DAG: %[[IM2:.*]] = stablehlo.bitcast_convert %[[IM]] : (tensor<3xf64>) -> tensor<3x2xf32>
// CHECK: %[[R:.*]] = stablehlo.complex %{{.*}}, %{{.*}} : tensor<3x2xcomplex<f32>>
// CHECK-NOT: bitcast_convert {{.*}}complex
// CHECK: return %[[R]]
func.func @narrowing(%a: tensor<3xcomplex<f64>>) -> tensor<3x2xcomplex<f32>> {
  %0 = stablehlo.bitcast_convert %a : (tensor<3xcomplex<f64>>) -> tensor<3x2xcomplex<f32>>
  return %0 : tensor<3x2xcomplex<f32>>
}

// -----

// 2 x complex<f32> -> complex<f64>: the halves regroup, then widen.
// CHECK-LABEL: func.func @widening
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<3x2xf32>) -> tensor<3xf64>
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<3x2xf32>) -> tensor<3xf64>
// CHECK: stablehlo.complex %{{.*}}, %{{.*}} : tensor<3xcomplex<f64>>
func.func @widening(%a: tensor<3x2xcomplex<f32>>) -> tensor<3xcomplex<f64>> {
  %0 = stablehlo.bitcast_convert %a : (tensor<3x2xcomplex<f32>>) -> tensor<3xcomplex<f64>>
  return %0 : tensor<3xcomplex<f64>>
}

// -----

// Real bitcasts are left to the linalg lowering.
// CHECK-LABEL: func.func @real
// CHECK-NEXT: stablehlo.bitcast_convert
func.func @real(%a: tensor<4xf32>) -> tensor<4xi32> {
  %0 = stablehlo.bitcast_convert %a : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Complex maximum: a wins on a larger real part, or an equal one and a larger
// or equal imaginary part.
// CHECK-LABEL: func.func @maximum
// CHECK-SAME: (%[[A:.*]]: tensor<4xcomplex<f32>>, %[[B:.*]]: tensor<4xcomplex<f32>>)
// CHECK-DAG: %[[RA:.*]] = stablehlo.real %[[A]]
// CHECK-DAG: %[[RB:.*]] = stablehlo.real %[[B]]
// CHECK-DAG: %[[GT:.*]] = stablehlo.compare GT, %[[RA]], %[[RB]]
// CHECK-DAG: %[[EQ:.*]] = stablehlo.compare EQ, %[[RA]], %[[RB]]
// CHECK-DAG: %[[GE:.*]] = stablehlo.compare GE, %{{.*}}, %{{.*}}
// CHECK-DAG: %[[TIE:.*]] = stablehlo.and %[[EQ]], %[[GE]]
// CHECK: %[[PICK:.*]] = stablehlo.or %[[GT]], %[[TIE]]
// CHECK: %[[R:.*]] = stablehlo.select %[[PICK]], %[[A]], %[[B]]
// CHECK: return %[[R]]
func.func @maximum(%a: tensor<4xcomplex<f32>>, %b: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = stablehlo.maximum %a, %b : tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// Minimum compares the other way; real minimum stays.
// CHECK-LABEL: func.func @minimum
// CHECK: stablehlo.compare LT
// CHECK: stablehlo.compare LE
// CHECK: stablehlo.select
// CHECK: stablehlo.minimum %{{.*}} : tensor<4xf32>
func.func @minimum(%a: tensor<4xcomplex<f32>>, %b: tensor<4xcomplex<f32>>, %c: tensor<4xf32>) -> (tensor<4xcomplex<f32>>, tensor<4xf32>) {
  %0 = stablehlo.minimum %a, %b : tensor<4xcomplex<f32>>
  %1 = stablehlo.minimum %c, %c : tensor<4xf32>
  return %0, %1 : tensor<4xcomplex<f32>>, tensor<4xf32>
}

// -----

// Complex cube root: exp(log(z) / 3).
// CHECK-LABEL: func.func @cbrt
// CHECK: %[[L:.*]] = stablehlo.log %{{.*}} : tensor<3xcomplex<f64>>
// CHECK: stablehlo.multiply %{{.*}}, %{{.*}} : tensor<3xf64>
// CHECK: %[[T:.*]] = stablehlo.complex
// CHECK: stablehlo.exponential %[[T]] : tensor<3xcomplex<f64>>
// CHECK-NOT: stablehlo.cbrt
func.func @cbrt(%a: tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>> {
  %0 = stablehlo.cbrt %a : tensor<3xcomplex<f64>>
  return %0 : tensor<3xcomplex<f64>>
}

// RUN: xhlo-opt %s --xhlo-expand-rng --split-input-file --verify-diagnostics | FileCheck %s

// f32: 2 x N THREE_FRY words from a fixed state, each half turned into a uniform
// in [0, 1) (top 23 bits under the exponent of 1.0, minus 1), then Box-Muller:
// mu + sigma * sqrt(-2 log(1 - u1)) * cos(2 pi u2).

// CHECK-LABEL: func.func @normal_f32
// CHECK-SAME: %[[MU:[a-zA-Z0-9_]+]]: tensor<f32>, %[[SIGMA:[a-zA-Z0-9_]+]]: tensor<f32>
// CHECK: %[[STATE:.*]] = stablehlo.constant dense<[2020109423, 0]> : tensor<2xui64>
// CHECK: %{{.*}}, %[[WORDS:.*]] = stablehlo.rng_bit_generator %[[STATE]], algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3x2xui32>)
// CHECK: %[[H1:.*]] = stablehlo.slice %[[WORDS]] [0:1, 0:3, 0:2]
// CHECK: %[[W1:.*]] = stablehlo.reshape %[[H1]] : (tensor<1x3x2xui32>) -> tensor<3x2xui32>
// CHECK: %[[H2:.*]] = stablehlo.slice %[[WORDS]] [1:2, 0:3, 0:2]
// CHECK: %[[W2:.*]] = stablehlo.reshape %[[H2]]
// CHECK: %[[NINE:.*]] = stablehlo.constant dense<9> : tensor<3x2xui32>
// CHECK: %[[M1:.*]] = stablehlo.shift_right_logical %[[W1]], %[[NINE]]
// CHECK: %[[ONE_BITS:.*]] = stablehlo.constant dense<1065353216> : tensor<3x2xui32>
// CHECK: %[[E1:.*]] = stablehlo.or %[[M1]], %[[ONE_BITS]]
// CHECK: %[[F1:.*]] = stablehlo.bitcast_convert %[[E1]] : (tensor<3x2xui32>) -> tensor<3x2xf32>
// CHECK: %[[U1:.*]] = stablehlo.subtract %[[F1]], %{{.*}}
// CHECK: stablehlo.shift_right_logical %[[W2]]
// CHECK: %[[U2:.*]] = stablehlo.subtract %{{.*}}, %{{.*}} : tensor<3x2xf32>
// CHECK: %[[ONE_MINUS:.*]] = stablehlo.subtract %{{.*}}, %[[U1]]
// CHECK: %[[LOG:.*]] = stablehlo.log %[[ONE_MINUS]]
// CHECK: %[[MINUS2:.*]] = stablehlo.constant dense<-2.000000e+00>
// CHECK: %[[SQUARED:.*]] = stablehlo.multiply %[[MINUS2]], %[[LOG]]
// CHECK: %[[RADIUS:.*]] = stablehlo.sqrt %[[SQUARED]]
// CHECK: %[[TWO_PI:.*]] = stablehlo.constant dense<6.28318548>
// CHECK: %[[ANGLE:.*]] = stablehlo.multiply %[[TWO_PI]], %[[U2]]
// CHECK: %[[COS:.*]] = stablehlo.cosine %[[ANGLE]]
// CHECK: %[[Z:.*]] = stablehlo.multiply %[[RADIUS]], %[[COS]]
// CHECK: %[[MUS:.*]] = stablehlo.broadcast_in_dim %[[MU]], dims = []
// CHECK: %[[SIGMAS:.*]] = stablehlo.broadcast_in_dim %[[SIGMA]], dims = []
// CHECK: %[[SPREAD:.*]] = stablehlo.multiply %[[SIGMAS]], %[[Z]]
// CHECK: %[[SAMPLES:.*]] = stablehlo.add %[[MUS]], %[[SPREAD]]
// CHECK: return %[[SAMPLES]]
// CHECK-NOT: stablehlo.rng %
func.func @normal_f32(%mu: tensor<f32>, %sigma: tensor<f32>) -> tensor<3x2xf32> {
  %shape = stablehlo.constant dense<[3, 2]> : tensor<2xi64>
  %0 = stablehlo.rng %mu, %sigma, %shape, distribution = NORMAL : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// f64 uses 64-bit words and 52 mantissa bits; every rng op gets its own
// state (the second word counts the ops); UNIFORM is a + (b - a) * u.

// CHECK-LABEL: func.func @normal_f64_twice_and_uniform
// CHECK: stablehlo.constant dense<[2020109423, 0]> : tensor<2xui64>
// CHECK: stablehlo.rng_bit_generator %{{.*}}, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x4xui64>)
// CHECK: stablehlo.constant dense<12> : tensor<4xui64>
// CHECK: stablehlo.constant dense<4607182418800017408> : tensor<4xui64>
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<4xui64>) -> tensor<4xf64>
// CHECK: stablehlo.constant dense<[2020109423, 1]> : tensor<2xui64>
// CHECK: stablehlo.constant dense<[2020109423, 2]> : tensor<2xui64>
// CHECK: stablehlo.rng_bit_generator
// CHECK: %[[SPAN:.*]] = stablehlo.subtract %[[HI:[0-9]+]], %[[LO:[0-9]+]] : tensor<4xf64>
// CHECK: %[[SCALED:.*]] = stablehlo.multiply %[[SPAN]], %{{.*}} : tensor<4xf64>
// CHECK: %[[X:.*]] = stablehlo.add %[[LO]], %[[SCALED]] : tensor<4xf64>
// CHECK: %[[IN:.*]] = stablehlo.compare LT, %[[X]], %[[HI]]
// CHECK: stablehlo.select %[[IN]], %[[X]], %[[LO]]
// CHECK-NOT: stablehlo.rng {{.*}}distribution
func.func @normal_f64_twice_and_uniform(%mu: tensor<f64>, %sigma: tensor<f64>) -> (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {
  %shape = stablehlo.constant dense<[4]> : tensor<1xi64>
  %0 = stablehlo.rng %mu, %sigma, %shape, distribution = NORMAL : (tensor<f64>, tensor<f64>, tensor<1xi64>) -> tensor<4xf64>
  %1 = stablehlo.rng %mu, %sigma, %shape, distribution = NORMAL : (tensor<f64>, tensor<f64>, tensor<1xi64>) -> tensor<4xf64>
  %2 = stablehlo.rng %mu, %sigma, %shape, distribution = UNIFORM : (tensor<f64>, tensor<f64>, tensor<1xi64>) -> tensor<4xf64>
  return %0, %1, %2 : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
}

// -----

// bf16 is sampled in f32 and rounded once.

// CHECK-LABEL: func.func @normal_bf16
// CHECK: tensor<2x5xui32>
// CHECK: %[[SAMPLES:.*]] = stablehlo.add %{{.*}}, %{{.*}} : tensor<5xf32>
// CHECK: %[[NARROW:.*]] = stablehlo.convert %[[SAMPLES]] : (tensor<5xf32>) -> tensor<5xbf16>
// CHECK: return %[[NARROW]]
func.func @normal_bf16(%mu: tensor<bf16>, %sigma: tensor<bf16>) -> tensor<5xbf16> {
  %shape = stablehlo.constant dense<[5]> : tensor<1xi64>
  %0 = stablehlo.rng %mu, %sigma, %shape, distribution = NORMAL : (tensor<bf16>, tensor<bf16>, tensor<1xi64>) -> tensor<5xbf16>
  return %0 : tensor<5xbf16>
}

// -----

func.func @dynamic_result(%mu: tensor<f32>, %sigma: tensor<f32>, %shape: tensor<1xi64>) -> tensor<?xf32> {
  // expected-error@+1 {{xhlo-expand-rng: 'stablehlo.rng' NORMAL needs a static result shape, got tensor<?xf32>}}
  %0 = stablehlo.rng %mu, %sigma, %shape, distribution = NORMAL : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Booleans in [a, b): integers of [a, b) as i32, then != 0.
// CHECK-LABEL: func.func @booleans
// CHECK: %[[A:.*]] = stablehlo.convert %arg0 : (tensor<i1>) -> tensor<i32>
// CHECK: %[[B:.*]] = stablehlo.convert %arg1 : (tensor<i1>) -> tensor<i32>
// CHECK: %[[N:.*]] = stablehlo.convert %{{.*}} : (tensor<8xi64>) -> tensor<8xi32>
// CHECK: %[[R:.*]] = stablehlo.compare  NE, %[[N]], %{{.*}} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
// CHECK-NOT: stablehlo.rng
// CHECK: return %[[R]]
func.func @booleans(%a: tensor<i1>, %b: tensor<i1>) -> tensor<8xi1> {
  %shape = stablehlo.constant dense<8> : tensor<1xi64>
  %0 = stablehlo.rng %a, %b, %shape, distribution = UNIFORM : (tensor<i1>, tensor<i1>, tensor<1xi64>) -> tensor<8xi1>
  return %0 : tensor<8xi1>
}

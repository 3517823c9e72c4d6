// RUN: xhlo-opt %s --xhlo-widen-half-floats --split-input-file | FileCheck %s

// A bf16 chain: each op gets f32 operands and is rounded back to bf16 after it
// (the next op widens that again). Data movement (the reshape) keeps bf16; a
// reduction by max runs on f32 with an f32 combiner (it selects an operand, so
// the result rounds back to the same value).

// CHECK-LABEL: func.func @chain
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x8xbf16>
// CHECK: %[[W:.*]] = stablehlo.convert %[[X]] : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: %[[T:.*]] = stablehlo.tanh %[[W]] : tensor<4x8xf32>
// CHECK: %[[N:.*]] = stablehlo.convert %[[T]] : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK: %[[W2:.*]] = stablehlo.convert %[[N]] : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: %[[W3:.*]] = stablehlo.convert %[[X]] : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: %[[M:.*]] = stablehlo.multiply %[[W2]], %[[W3]] : tensor<4x8xf32>
// CHECK: %[[N2:.*]] = stablehlo.convert %[[M]] : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK: %[[R:.*]] = stablehlo.reshape %[[N2]] : (tensor<4x8xbf16>) -> tensor<32xbf16>
// CHECK: %[[RW:.*]] = stablehlo.convert %[[R]] : (tensor<32xbf16>) -> tensor<32xf32>
// CHECK: %[[IW:.*]] = stablehlo.convert %{{.*}} : (tensor<bf16>) -> tensor<f32>
// CHECK: %[[MAX:.*]] = stablehlo.reduce(%[[RW]] init: %[[IW]]) applies stablehlo.maximum across dimensions = [0] : (tensor<32xf32>, tensor<f32>) -> tensor<f32>
// CHECK: stablehlo.convert %[[MAX]] : (tensor<f32>) -> tensor<bf16>
func.func @chain(%x: tensor<4x8xbf16>) -> (tensor<32xbf16>, tensor<bf16>) {
  %t = stablehlo.tanh %x : tensor<4x8xbf16>
  %m = stablehlo.multiply %t, %x : tensor<4x8xbf16>
  %r = stablehlo.reshape %m : (tensor<4x8xbf16>) -> tensor<32xbf16>
  %init = stablehlo.constant dense<0xFF80> : tensor<bf16>
  %max = stablehlo.reduce(%r init: %init) across dimensions = [0] : (tensor<32xbf16>, tensor<bf16>) -> tensor<bf16>
    reducer(%a: tensor<bf16>, %b: tensor<bf16>) {
      %c = stablehlo.maximum %a, %b : tensor<bf16>
      stablehlo.return %c : tensor<bf16>
    }
  return %r, %max : tensor<32xbf16>, tensor<bf16>
}

// -----

// f16 comparisons read f32 (exact); f32 ops are left alone.

// CHECK-LABEL: func.func @compare_f16
// CHECK: %[[A:.*]] = stablehlo.convert %{{.*}} : (tensor<16xf16>) -> tensor<16xf32>
// CHECK: %[[B:.*]] = stablehlo.convert %{{.*}} : (tensor<16xf16>) -> tensor<16xf32>
// CHECK: stablehlo.compare GT, %[[A]], %[[B]] : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
// CHECK: stablehlo.add %{{.*}}, %{{.*}} : tensor<16xf32>
func.func @compare_f16(%a: tensor<16xf16>, %b: tensor<16xf16>, %c: tensor<16xf32>) -> (tensor<16xi1>, tensor<16xf32>) {
  %gt = stablehlo.compare GT, %a, %b : (tensor<16xf16>, tensor<16xf16>) -> tensor<16xi1>
  %s = stablehlo.add %c, %c : tensor<16xf32>
  return %gt, %s : tensor<16xi1>, tensor<16xf32>
}

// -----

// A sum keeps its bf16 combiner (widening would change its rounding).
// CHECK-LABEL: func.func @sum_stays
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<32xbf16>, tensor<bf16>) -> tensor<bf16>
func.func @sum_stays(%x: tensor<32xbf16>) -> tensor<bf16> {
  %init = stablehlo.constant dense<0.0> : tensor<bf16>
  %sum = stablehlo.reduce(%x init: %init) across dimensions = [0] : (tensor<32xbf16>, tensor<bf16>) -> tensor<bf16>
    reducer(%a: tensor<bf16>, %b: tensor<bf16>) {
      %c = stablehlo.add %a, %b : tensor<bf16>
      stablehlo.return %c : tensor<bf16>
    }
  return %sum : tensor<bf16>
}

// -----

// An argmax's (value, index) reduction compares and selects only: it runs on f32,
// its index operand as it is, its values rounded back (exactly).
// CHECK-LABEL: func.func @argmax
// CHECK: %[[V:.*]] = stablehlo.convert %{{.*}} : (tensor<8x16xbf16>) -> tensor<8x16xf32>
// CHECK: %[[R:.*]]:2 = stablehlo.reduce(%[[V]] init: %{{.*}}), (%{{.*}} init: %{{.*}}) across dimensions = [1] : (tensor<8x16xf32>, tensor<8x16xi32>, tensor<f32>, tensor<i32>) -> (tensor<8xf32>, tensor<8xi32>)
// CHECK: reducer(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>) (%{{.*}}: tensor<i32>, %{{.*}}: tensor<i32>)
// CHECK: stablehlo.compare GT, %[[A]], %[[B]], FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK: stablehlo.select %{{.*}}, %[[A]], %[[B]] : tensor<i1>, tensor<f32>
// CHECK: stablehlo.convert %[[R]]#0 : (tensor<8xf32>) -> tensor<8xbf16>
func.func @argmax(%x: tensor<8x16xbf16>, %i: tensor<8x16xi32>) -> (tensor<8xbf16>, tensor<8xi32>) {
  %vinit = stablehlo.constant dense<0xFF80> : tensor<bf16>
  %iinit = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.reduce(%x init: %vinit), (%i init: %iinit) across dimensions = [1] : (tensor<8x16xbf16>, tensor<8x16xi32>, tensor<bf16>, tensor<i32>) -> (tensor<8xbf16>, tensor<8xi32>)
    reducer(%a: tensor<bf16>, %b: tensor<bf16>) (%ia: tensor<i32>, %ib: tensor<i32>) {
      %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<bf16>, tensor<bf16>) -> tensor<i1>
      %v = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<bf16>
      %j = stablehlo.select %gt, %ia, %ib : tensor<i1>, tensor<i32>
      stablehlo.return %v, %j : tensor<bf16>, tensor<i32>
    }
  return %r#0, %r#1 : tensor<8xbf16>, tensor<8xi32>
}

// RUN: xhlo-opt %s --xhlo-legalize-rng-bit-generator --split-input-file --verify-diagnostics | FileCheck %s

// PHILOX: key = state[0], 128-bit counter = state[2]:state[1] plus the block
// index (with carry), ten rounds of Philox-4x32, four words per block in
// order, then the state with the counter advanced by the two blocks used.

// CHECK-LABEL: func.func @philox_u64x3_state
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: tensor<3xui64>
// CHECK: %[[K1:.*]] = stablehlo.slice %[[S]] [0:1]
// CHECK: %[[KEY:.*]] = stablehlo.reshape %[[K1]] : (tensor<1xui64>) -> tensor<ui64>
// CHECK: %[[L1:.*]] = stablehlo.slice %[[S]] [1:2]
// CHECK: %[[LOW:.*]] = stablehlo.reshape %[[L1]]
// CHECK: %[[H1:.*]] = stablehlo.slice %[[S]] [2:3]
// CHECK: %[[HIGH:.*]] = stablehlo.reshape %[[H1]]
// CHECK: %[[BLOCK:.*]] = stablehlo.iota dim = 0 : tensor<2xui64>
// CHECK: %[[LOWS:.*]] = stablehlo.broadcast_in_dim %[[LOW]], dims = []
// CHECK: %[[HIGHS:.*]] = stablehlo.broadcast_in_dim %[[HIGH]], dims = []
// CHECK: %[[SUM:.*]] = stablehlo.add %[[LOWS]], %[[BLOCK]] : tensor<2xui64>
// CHECK: %[[WRAPPED:.*]] = stablehlo.compare LT, %[[SUM]], %[[BLOCK]], UNSIGNED
// CHECK: %[[CARRY:.*]] = stablehlo.convert %[[WRAPPED]] : (tensor<2xi1>) -> tensor<2xui64>
// CHECK: %[[SUM_HIGH:.*]] = stablehlo.add %[[HIGHS]], %[[CARRY]]
// CHECK: stablehlo.constant dense<3528531795> : tensor<2xui64>
// CHECK: stablehlo.constant dense<3449720151> : tensor<2xui64>
// CHECK: stablehlo.xor
// CHECK: stablehlo.constant dense<2654435769> : tensor<2xui32>
// CHECK: stablehlo.constant dense<3144134277> : tensor<2xui32>
// CHECK: %[[WORDS:.*]] = stablehlo.concatenate %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, dim = 1 : (tensor<2x1xui32>, tensor<2x1xui32>, tensor<2x1xui32>, tensor<2x1xui32>) -> tensor<2x4xui32>
// CHECK: %[[TWO:.*]] = stablehlo.constant dense<2> : tensor<ui64>
// CHECK: %[[NEW_LOW:.*]] = stablehlo.add %[[LOW]], %[[TWO]] : tensor<ui64>
// CHECK: stablehlo.compare LT, %[[NEW_LOW]], %[[TWO]], UNSIGNED
// CHECK: %[[NEW_HIGH:.*]] = stablehlo.add %[[HIGH]], %{{.*}} : tensor<ui64>
// CHECK: %[[P0:.*]] = stablehlo.reshape %[[KEY]] : (tensor<ui64>) -> tensor<1xui64>
// CHECK: %[[P1:.*]] = stablehlo.reshape %[[NEW_LOW]]
// CHECK: %[[P2:.*]] = stablehlo.reshape %[[NEW_HIGH]]
// CHECK: %[[STATE:.*]] = stablehlo.concatenate %[[P0]], %[[P1]], %[[P2]], dim = 0
// CHECK: %[[FLAT:.*]] = stablehlo.reshape %[[WORDS]] : (tensor<2x4xui32>) -> tensor<8xui32>
// CHECK: %[[BITS:.*]] = stablehlo.slice %[[FLAT]] [0:6]
// CHECK: return %[[STATE]], %[[BITS]]
// CHECK-NOT: rng_bit_generator
func.func @philox_u64x3_state(%s: tensor<3xui64>) -> (tensor<3xui64>, tensor<6xui32>) {
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<6xui32>)
  return %0#0, %0#1 : tensor<3xui64>, tensor<6xui32>
}

// -----

// DEFAULT is PHILOX; a u64[2] state uses state[0] as the counter's high half.
// 64-bit values take two words (low first); a signed result is a bitcast.

// CHECK-LABEL: func.func @default_signed_64
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: tensor<2xui64>
// CHECK: stablehlo.slice %[[S]] [0:1]
// CHECK: stablehlo.slice %[[S]] [1:2]
// CHECK: stablehlo.slice %[[S]] [0:1]
// CHECK: %[[PAIRS:.*]] = stablehlo.reshape %{{.*}} : (tensor<8xui32>) -> tensor<4x2xui32>
// CHECK: stablehlo.slice %[[PAIRS]] [0:3, 0:1]
// CHECK: stablehlo.slice %[[PAIRS]] [0:3, 1:2]
// CHECK: %[[HIGH:.*]] = stablehlo.shift_left %{{.*}}, %{{.*}} : tensor<3xui64>
// CHECK: %[[VALUES:.*]] = stablehlo.or %{{.*}}, %[[HIGH]] : tensor<3xui64>
// CHECK: %[[SIGNED:.*]] = stablehlo.bitcast_convert %[[VALUES]] : (tensor<3xui64>) -> tensor<3xi64>
// CHECK: return %{{.*}}, %[[SIGNED]]
func.func @default_signed_64(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<3xi64>) {
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3xi64>)
  return %0#0, %0#1 : tensor<2xui64>, tensor<3xi64>
}

// -----

// THREE_FRY stays with the upstream lowering; a float output becomes the
// unsigned bits of the same width, reinterpreted.

// CHECK-LABEL: func.func @three_fry_float
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: tensor<2xui64>
// CHECK-NEXT: %[[STATE:.*]], %[[BITS:.*]] = stablehlo.rng_bit_generator %[[S]], algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xui32>)
// CHECK-NEXT: %[[F:.*]] = stablehlo.bitcast_convert %[[BITS]] : (tensor<2x3xui32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[STATE]], %[[F]]
func.func @three_fry_float(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xf32>) {
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xf32>)
  return %0#0, %0#1 : tensor<2xui64>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @three_fry_unsigned_untouched
// CHECK-NEXT: stablehlo.rng_bit_generator %{{.*}}, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui64>)
// CHECK-NEXT: return
func.func @three_fry_unsigned_untouched(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui64>) {
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui64>)
  return %0#0, %0#1 : tensor<2xui64>, tensor<4xui64>
}

// -----

func.func @six_bit_float(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<4xf6E2M3FN>) {
  // expected-error@+1 {{xhlo-legalize-rng-bit-generator: rng_bit_generator cannot produce f6E2M3FN}}
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xf6E2M3FN>)
  return %0#0, %0#1 : tensor<2xui64>, tensor<4xf6E2M3FN>
}

// -----

func.func @short_state(%state: tensor<1xui64>) -> tensor<4xui32> {
  // expected-error@+1 {{rng_bit_generator DEFAULT needs a state of u64[2] or u64[3] (PHILOX on the CPU), got u64[1]}}
  %0:2 = stablehlo.rng_bit_generator %state, algorithm = DEFAULT : (tensor<1xui64>) -> (tensor<1xui64>, tensor<4xui32>)
  return %0#1 : tensor<4xui32>
}

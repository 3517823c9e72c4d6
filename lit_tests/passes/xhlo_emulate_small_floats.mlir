// RUN: xhlo-opt %s --xhlo-emulate-small-floats --split-input-file | FileCheck %s

// Arithmetic on a small float runs in f32: both operands are decoded from
// their bits, the f32 product is rounded back into the bits of the result.

// CHECK-LABEL: func.func @multiply_in_f32
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4xf8E4M3FN>, %[[B:[a-zA-Z0-9_]+]]: tensor<4xf8E4M3FN>
// CHECK: stablehlo.bitcast_convert %[[A]] : (tensor<4xf8E4M3FN>) -> tensor<4xui8>
// CHECK: %[[WA:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<4xi32>) -> tensor<4xf32>
// CHECK: stablehlo.bitcast_convert %[[B]] : (tensor<4xf8E4M3FN>) -> tensor<4xui8>
// CHECK: %[[WB:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<4xi32>) -> tensor<4xf32>
// CHECK: %[[P:.*]] = stablehlo.multiply %[[WA]], %[[WB]] : tensor<4xf32>
// CHECK: stablehlo.bitcast_convert %[[P]] : (tensor<4xf32>) -> tensor<4xi32>
// CHECK: %[[CODE:.*]] = stablehlo.convert %{{.*}} : (tensor<4xi32>) -> tensor<4xui8>
// CHECK: %[[R:.*]] = stablehlo.bitcast_convert %[[CODE]] : (tensor<4xui8>) -> tensor<4xf8E4M3FN>
// CHECK: return %[[R]]
// CHECK-NOT: stablehlo.multiply {{.*}}f8E4M3FN
func.func @multiply_in_f32(%a: tensor<4xf8E4M3FN>, %b: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %0 = stablehlo.multiply %a, %b : tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

// Decoding E4M3FN (bias 7): normal codes shift exponent and mantissa into the
// f32 fields and rebias ((127 - 7) << 23 = 1006632960); subnormals are the
// mantissa times 2^-9; the sign moves to bit 31; S.1111.111 is NaN.

// CHECK-LABEL: func.func @decode_e4m3fn
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4xf8E4M3FN>
// CHECK: %[[RAW:.*]] = stablehlo.bitcast_convert %[[A]] : (tensor<4xf8E4M3FN>) -> tensor<4xui8>
// CHECK: %[[WIDE:.*]] = stablehlo.convert %[[RAW]] : (tensor<4xui8>) -> tensor<4xi32>
// CHECK: %[[CODE:.*]] = stablehlo.and %[[WIDE]], %{{.*}}
// CHECK: %[[MAG_MASK:.*]] = stablehlo.constant dense<127> : tensor<4xi32>
// CHECK: %[[MAG:.*]] = stablehlo.and %[[CODE]], %[[MAG_MASK]]
// CHECK: %[[EXP:.*]] = stablehlo.shift_right_logical %[[MAG]], %{{.*}}
// CHECK: %[[MANT:.*]] = stablehlo.and %[[MAG]], %{{.*}}
// CHECK: %[[TWENTY:.*]] = stablehlo.constant dense<20> : tensor<4xi32>
// CHECK: %[[SHIFTED:.*]] = stablehlo.shift_left %[[MAG]], %[[TWENTY]]
// CHECK: %[[REBIAS:.*]] = stablehlo.constant dense<1006632960> : tensor<4xi32>
// CHECK: %[[NORMAL:.*]] = stablehlo.add %[[SHIFTED]], %[[REBIAS]]
// CHECK: %[[MANT_F:.*]] = stablehlo.convert %[[MANT]] : (tensor<4xi32>) -> tensor<4xf32>
// CHECK: %[[ULP:.*]] = stablehlo.constant dense<0.001953125> : tensor<4xf32>
// CHECK: %[[SUB_F:.*]] = stablehlo.multiply %[[MANT_F]], %[[ULP]]
// CHECK: %[[SUB:.*]] = stablehlo.bitcast_convert %[[SUB_F]] : (tensor<4xf32>) -> tensor<4xi32>
// CHECK: %[[IS_SUB:.*]] = stablehlo.compare EQ, %[[EXP]], %{{.*}}, SIGNED
// CHECK: %[[BITS:.*]] = stablehlo.select %[[IS_SUB]], %[[SUB]], %[[NORMAL]]
// CHECK: %[[SIGN_BIT:.*]] = stablehlo.shift_right_logical %[[CODE]], %{{.*}}
// CHECK: %[[SIGN:.*]] = stablehlo.shift_left %[[SIGN_BIT]], %{{.*}}
// CHECK: %[[SIGNED:.*]] = stablehlo.or %[[BITS]], %[[SIGN]]
// CHECK: %[[IS_NAN:.*]] = stablehlo.compare EQ, %[[MAG]], %{{.*}}, SIGNED
// CHECK: %[[QNAN:.*]] = stablehlo.constant dense<2143289344> : tensor<4xi32>
// CHECK: %[[NAN:.*]] = stablehlo.or %[[SIGN]], %[[QNAN]]
// CHECK: %[[F32_BITS:.*]] = stablehlo.select %[[IS_NAN]], %[[NAN]], %[[SIGNED]]
// CHECK: %[[R:.*]] = stablehlo.bitcast_convert %[[F32_BITS]] : (tensor<4xi32>) -> tensor<4xf32>
// CHECK: return %[[R]]
func.func @decode_e4m3fn(%a: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  %0 = stablehlo.convert %a : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Encoding to E5M2 rounds the f32 significand to nearest even at a shift that
// grows below the smallest normal exponent (-14); codes above 0x7B overflow
// to Inf (0x7C), NaN becomes 0x7E; the sign is bit 7.

// CHECK-LABEL: func.func @encode_e5m2
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4xf32>
// CHECK: %[[BITS:.*]] = stablehlo.bitcast_convert %[[X]] : (tensor<4xf32>) -> tensor<4xi32>
// CHECK: %[[MAG:.*]] = stablehlo.and %[[BITS]], %{{.*}}
// CHECK: %[[EXP:.*]] = stablehlo.shift_right_logical %[[MAG]], %{{.*}}
// CHECK: %[[MIN_EXP:.*]] = stablehlo.constant dense<-14> : tensor<4xi32>
// CHECK: %[[CLAMPED:.*]] = stablehlo.maximum %{{.*}}, %[[MIN_EXP]]
// CHECK: %[[SHIFT:.*]] = stablehlo.minimum %{{.*}}, %{{.*}}
// CHECK: %[[Q:.*]] = stablehlo.shift_right_logical %[[SIGNIFICAND:.*]], %[[SHIFT]]
// CHECK: %[[REM:.*]] = stablehlo.and %[[SIGNIFICAND]], %{{.*}}
// CHECK: %[[HALF:.*]] = stablehlo.shift_left %{{.*}}, %{{.*}}
// CHECK: %[[ODD:.*]] = stablehlo.compare EQ, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[ABOVE:.*]] = stablehlo.compare GT, %[[REM]], %[[HALF]], SIGNED
// CHECK: %[[TIE:.*]] = stablehlo.compare EQ, %[[REM]], %[[HALF]], SIGNED
// CHECK: %[[TIE_ODD:.*]] = stablehlo.and %[[TIE]], %[[ODD]] : tensor<4xi1>
// CHECK: %[[UP:.*]] = stablehlo.or %[[ABOVE]], %[[TIE_ODD]] : tensor<4xi1>
// CHECK: %[[UP_I:.*]] = stablehlo.convert %[[UP]] : (tensor<4xi1>) -> tensor<4xi32>
// CHECK: %[[UNITS:.*]] = stablehlo.add %[[Q]], %[[UP_I]]
// CHECK: %[[CODE:.*]] = stablehlo.add %{{.*}}, %[[UNITS]]
// CHECK: %[[IS_NAN:.*]] = stablehlo.compare GT, %[[MAG]], %{{.*}}, SIGNED
// CHECK: %[[MAX:.*]] = stablehlo.constant dense<123> : tensor<4xi32>
// CHECK: %[[OVERFLOW:.*]] = stablehlo.compare GT, %[[CODE]], %[[MAX]], SIGNED
// CHECK: %[[INF:.*]] = stablehlo.constant dense<124> : tensor<4xi32>
// CHECK: %[[FINITE:.*]] = stablehlo.select %[[OVERFLOW]], %[[INF]], %[[CODE]]
// CHECK: %[[NAN:.*]] = stablehlo.constant dense<126> : tensor<4xi32>
// CHECK: %[[MAG_CODE:.*]] = stablehlo.select %[[IS_NAN]], %[[NAN]], %[[FINITE]]
// CHECK: %[[RESULT:.*]] = stablehlo.or %[[MAG_CODE]], %{{.*}}
// CHECK: %[[NARROW:.*]] = stablehlo.convert %[[RESULT]] : (tensor<4xi32>) -> tensor<4xui8>
// CHECK: %[[R:.*]] = stablehlo.bitcast_convert %[[NARROW]] : (tensor<4xui8>) -> tensor<4xf8E5M2>
// CHECK: return %[[R]]
func.func @encode_e5m2(%x: tensor<4xf32>) -> tensor<4xf8E5M2> {
  %0 = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xf8E5M2>
  return %0 : tensor<4xf8E5M2>
}

// -----

// Data movement keeps the small type: it lowers to loads and stores.

// CHECK-LABEL: func.func @data_movement_kept
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<2x3xf8E5M2>, %[[I:[a-zA-Z0-9_]+]]: tensor<i32>
// CHECK: %[[T:.*]] = stablehlo.transpose %[[A]], dims = [1, 0] : (tensor<2x3xf8E5M2>) -> tensor<3x2xf8E5M2>
// CHECK: %[[S:.*]] = stablehlo.dynamic_slice %[[T]], %[[I]], %{{.*}}, sizes = [3, 2] : (tensor<3x2xf8E5M2>, tensor<i32>, tensor<i32>) -> tensor<3x2xf8E5M2>
// CHECK: return %[[S]]
// CHECK-NOT: stablehlo.convert
func.func @data_movement_kept(%a: tensor<2x3xf8E5M2>, %i: tensor<i32>) -> tensor<3x2xf8E5M2> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf8E5M2>) -> tensor<3x2xf8E5M2>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.dynamic_slice %0, %i, %z, sizes = [3, 2] : (tensor<3x2xf8E5M2>, tensor<i32>, tensor<i32>) -> tensor<3x2xf8E5M2>
  return %1 : tensor<3x2xf8E5M2>
}

// -----

// The reduction body computes in f32 on the widened arguments and rounds its
// result, so the reduction rounds after every step.

// CHECK-LABEL: func.func @reduce_rounds_each_step
// CHECK: %[[R:.*]] = stablehlo.reduce(%{{.*}} init: %{{.*}}) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: reducer(%[[ACC:.*]]: tensor<f32>, %[[X:.*]]: tensor<f32>)
// CHECK-NEXT: %[[SUM:.*]] = stablehlo.add %[[ACC]], %[[X]] : tensor<f32>
// CHECK: stablehlo.bitcast_convert %[[SUM]] : (tensor<f32>) -> tensor<i32>
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<ui8>) -> tensor<f8E4M3FN>
// CHECK: %[[ROUNDED:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<i32>) -> tensor<f32>
// CHECK-NEXT: stablehlo.return %[[ROUNDED]] : tensor<f32>
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<ui8>) -> tensor<f8E4M3FN>
func.func @reduce_rounds_each_step(%a: tensor<4xf8E4M3FN>, %z: tensor<f8E4M3FN>) -> tensor<f8E4M3FN> {
  %s = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf8E4M3FN>, tensor<f8E4M3FN>) -> tensor<f8E4M3FN>
  return %s : tensor<f8E4M3FN>
}

// -----

// Conversions to other types go through f32 (exact for every small float).

// CHECK-LABEL: func.func @convert_through_f32
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xui8>
// CHECK: %[[NAN_CODE:.*]] = stablehlo.constant dense<128> : tensor<4xi32>
// CHECK: %[[NEG_QNAN:.*]] = stablehlo.constant dense<-4194304> : tensor<4xi32>
// CHECK: %[[F32:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<4xi32>) -> tensor<4xf32>
// CHECK: %[[R:.*]] = stablehlo.convert %[[F32]] : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: return %[[R]]
func.func @convert_through_f32(%a: tensor<4xf8E4M3FNUZ>) -> tensor<4xf16> {
  %0 = stablehlo.convert %a : (tensor<4xf8E4M3FNUZ>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// f4E2M1FN is stored as ui4.

// CHECK-LABEL: func.func @decode_f4
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<4xf4E2M1FN>) -> tensor<4xui4>
// CHECK: stablehlo.convert %{{.*}} : (tensor<4xui4>) -> tensor<4xi32>
// CHECK: stablehlo.constant dense<1056964608> : tensor<4xi32>
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<4xi32>) -> tensor<4xf32>
func.func @decode_f4(%a: tensor<4xf4E2M1FN>) -> tensor<4xf32> {
  %0 = stablehlo.convert %a : (tensor<4xf4E2M1FN>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// E8M0 keeps the f32 exponent, rounding up from a mantissa of 1.5; zero,
// negative numbers and NaN become 0xFF.

// CHECK-LABEL: func.func @encode_e8m0
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4xf32>
// CHECK: %[[BITS:.*]] = stablehlo.bitcast_convert %[[X]] : (tensor<4xf32>) -> tensor<4xi32>
// CHECK: %[[HALF:.*]] = stablehlo.constant dense<4194304> : tensor<4xi32>
// CHECK: stablehlo.compare GE, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[CODE:.*]] = stablehlo.add %{{.*}}, %{{.*}}
// CHECK: %[[CAPPED:.*]] = stablehlo.minimum %[[CODE]], %{{.*}}
// CHECK: %[[INVALID:.*]] = stablehlo.compare LE, %[[BITS]], %{{.*}}, SIGNED
// CHECK: %[[R:.*]] = stablehlo.select %[[INVALID]], %{{.*}}, %[[CAPPED]]
// CHECK: stablehlo.convert %[[R]] : (tensor<4xi32>) -> tensor<4xui8>
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<4xui8>) -> tensor<4xf8E8M0FNU>
func.func @encode_e8m0(%x: tensor<4xf32>) -> tensor<4xf8E8M0FNU> {
  %0 = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xf8E8M0FNU>
  return %0 : tensor<4xf8E8M0FNU>
}

// -----

// A comparison needs no rounding: its i1 result comes straight from f32.

// CHECK-LABEL: func.func @compare_in_f32
// CHECK: %[[WA:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<4xi32>) -> tensor<4xf32>
// CHECK: %[[WB:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<4xi32>) -> tensor<4xf32>
// CHECK: %[[P:.*]] = stablehlo.compare LT, %[[WA]], %[[WB]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT: return %[[P]]
func.func @compare_in_f32(%a: tensor<4xf8E4M3FN>, %b: tensor<4xf8E4M3FN>) -> tensor<4xi1> {
  %0 = stablehlo.compare LT, %a, %b : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// RUN: xhlo-opt %s --xhlo-vector-math --split-input-file | FileCheck %s

// exp: clamp, k = round(x log2 e), r = x - k ln2 in two fused steps, a
// polynomial in r, 2^k from exponent bits in two factors, NaN passed through.
// CHECK-LABEL: func.func @exp
// CHECK-SAME: (%[[X:.*]]: vector<16xf32>)
// CHECK: %[[LO:.*]] = arith.maximumf %[[X]], %{{.*}} : vector<16xf32>
// CHECK: %[[C:.*]] = arith.minimumf %[[LO]], %{{.*}} : vector<16xf32>
// CHECK: %[[T:.*]] = arith.mulf %[[C]], %{{.*}} : vector<16xf32>
// CHECK: %[[K:.*]] = math.roundeven %[[T]] : vector<16xf32>
// CHECK: %[[R0:.*]] = math.fma %[[K]], %{{.*}}, %[[C]] : vector<16xf32>
// CHECK: %[[R:.*]] = math.fma %[[K]], %{{.*}}, %[[R0]] : vector<16xf32>
// CHECK-COUNT-5: math.fma
// CHECK: math.floor
// CHECK: arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : vector<16xf32>
// CHECK: %[[Y:.*]] = arith.select %[[NAN]], %[[X]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: return %[[Y]]
// CHECK-NOT: math.exp
func.func @exp(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.exp %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// tanh: e / (e + 2) with e = expm1(2|x|), |x| clamped where tanh is +-1, the sign of x.
// CHECK-LABEL: func.func @tanh
// CHECK-SAME: (%[[X:.*]]: vector<8xf32>)
// CHECK: %[[ABS:.*]] = math.absf %[[X]] : vector<8xf32>
// CHECK: %[[M:.*]] = arith.minimumf %[[ABS]], %{{.*}} : vector<8xf32>
// CHECK: %[[TWICE:.*]] = arith.addf %[[M]], %[[M]] : vector<8xf32>
// CHECK: math.roundeven
// CHECK-COUNT-7: math.fma
// CHECK: %[[E:.*]] = math.fma
// CHECK: %[[D:.*]] = arith.addf %[[E]], %{{.*}} : vector<8xf32>
// CHECK: %[[Q:.*]] = arith.divf %[[E]], %[[D]] : vector<8xf32>
// CHECK: %[[SAT:.*]] = arith.cmpf oge, %[[M]], %{{.*}} : vector<8xf32>
// CHECK: %[[PICK:.*]] = arith.select %[[SAT]], %{{.*}}, %[[Q]]
// CHECK: math.copysign %[[PICK]], %[[X]] : vector<8xf32>
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
func.func @tanh(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.tanh %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

// Scalars and f64 vectors are left to the precise libm lowering.
// CHECK-LABEL: func.func @scalars_and_f64_keep_libm
// CHECK: math.exp %{{.*}} : f32
// CHECK: math.tanh %{{.*}} : vector<4xf64>
func.func @scalars_and_f64_keep_libm(%x: f32, %y: vector<4xf64>) -> (f32, vector<4xf64>) {
  %0 = math.exp %x : f32
  %1 = math.tanh %y : vector<4xf64>
  return %0, %1 : f32, vector<4xf64>
}

// -----

// log: exponent and mantissa from the bits (subnormals scaled first), f = m - 1 on
// [sqrt(1/2) - 1, sqrt(2) - 1], a polynomial, e ln2 in two parts, then the special cases.
// CHECK-LABEL: func.func @log
// CHECK-SAME: (%[[X:.*]]: vector<16xf32>)
// CHECK: %[[TINY:.*]] = arith.cmpf olt, %[[X]], %{{.*}} : vector<16xf32>
// CHECK: arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.shrui
// CHECK: arith.sitofp
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK-COUNT-8: math.fma
// CHECK: arith.cmpf uge, %[[X]]
// CHECK: arith.cmpf olt, %[[X]]
// CHECK: arith.cmpf oeq, %[[X]]
// CHECK-NOT: math.log
func.func @log(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.log %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// log1p: log(1 + x) corrected by x / ((1 + x) - 1); x itself where 1 + x rounds to 1.
// CHECK-LABEL: func.func @log1p
// CHECK-SAME: (%[[X:.*]]: vector<16xf32>)
// CHECK: %[[U:.*]] = arith.addf %[[X]], %{{.*}} : vector<16xf32>
// CHECK: %[[UM1:.*]] = arith.subf %[[U]], %{{.*}} : vector<16xf32>
// CHECK: %[[RATIO:.*]] = arith.divf %[[X]], %[[UM1]] : vector<16xf32>
// CHECK: arith.mulf %{{.*}}, %[[RATIO]] : vector<16xf32>
// CHECK: %[[INF:.*]] = arith.cmpf oeq, %[[U]], %{{.*}} : vector<16xf32>
// CHECK: arith.select %[[INF]]
// CHECK: %[[ONE:.*]] = arith.cmpf oeq, %[[U]], %{{.*}} : vector<16xf32>
// CHECK: arith.select %[[ONE]], %[[X]], %{{.*}}
// CHECK-NOT: math.log1p
func.func @log1p(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.log1p %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// expm1: 2^k (1 + p) - 1 on the clamped input, exp(x) above the clamp, x where tiny.
// CHECK-LABEL: func.func @expm1
// CHECK-SAME: (%[[X:.*]]: vector<16xf32>)
// CHECK: arith.maximumf %[[X]]
// CHECK: math.roundeven
// CHECK: %[[LARGE:.*]] = arith.cmpf ogt, %[[X]], %{{.*}} : vector<16xf32>
// CHECK: arith.select %[[LARGE]]
// CHECK: %[[ABS:.*]] = math.absf %[[X]]
// CHECK: %[[TINY:.*]] = arith.cmpf olt, %[[ABS]]
// CHECK: arith.select %[[TINY]], %[[X]]
// CHECK-NOT: math.expm1
func.func @expm1(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.expm1 %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// f64 and scalar math keep their lowering (libm).
// CHECK-LABEL: func.func @kept
// CHECK: math.log1p %{{.*}} : vector<4xf64>
// CHECK: math.log %{{.*}} : f32
func.func @kept(%x: vector<4xf64>, %y: f32) -> (vector<4xf64>, f32) {
  %0 = math.log1p %x : vector<4xf64>
  %1 = math.log %y : f32
  return %0, %1 : vector<4xf64>, f32
}

// -----

// atan2 of f32 vectors: the ratio of the smaller magnitude to the larger, the
// atan polynomial, the octant's constant (an f32 part plus the rest) and the sign
// of y. No math.atan2 (which LLVM would scalarize into atan2f calls) is left.

// CHECK-LABEL: func.func @atan2_vector
// CHECK-SAME: %[[Y:[a-zA-Z0-9_]+]]: vector<16xf32>, %[[X:[a-zA-Z0-9_]+]]: vector<16xf32>
// CHECK-NOT: math.atan2
// CHECK: %[[AX:.*]] = math.absf %[[X]]
// CHECK: %[[AY:.*]] = math.absf %[[Y]]
// CHECK: %[[MAX:.*]] = arith.maximumf %[[AX]], %[[AY]]
// CHECK: %[[MIN:.*]] = arith.minimumf %[[AX]], %[[AY]]
// CHECK: arith.divf %[[MIN]], %[[MAX]]
// CHECK: math.fma
// CHECK: arith.bitcast %[[X]] : vector<16xf32> to vector<16xi32>
// CHECK: %[[R:.*]] = math.copysign %{{.*}}, %[[Y]]
// CHECK-NOT: math.atan2
// CHECK: return %[[R]]
func.func @atan2_vector(%y: vector<16xf32>, %x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.atan2 %y, %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// sin of f32 vectors: the polynomial when every lane is within 8192 (the reduction
// by pi/4 runs in f64), libm's for the whole vector otherwise (large, inf, NaN).

// CHECK-LABEL: func.func @sin_vector
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: vector<16xf32>
// CHECK: %[[OUT:.*]] = arith.cmpf ugt
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[OUT]] : vector<16xi1> into i1
// CHECK: %[[R:.*]] = scf.if %[[ANY]] -> (vector<16xf32>) {
// CHECK: math.sin %[[X]] : vector<16xf32>
// CHECK: } else {
// CHECK: arith.fptosi
// CHECK: arith.extf %{{.*}} : vector<16xf32> to vector<16xf64>
// CHECK: arith.truncf %{{.*}} : vector<16xf64> to vector<16xf32>
// CHECK: return %[[R]]
func.func @sin_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.sin %x : vector<16xf32>
  return %0 : vector<16xf32>
}

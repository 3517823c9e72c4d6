// RUN: xhlo-opt %s --xhlo-saturate-float-to-int --split-input-file | FileCheck %s

// f32 -> i8: values in [-128, 128) convert as before, NaN converts 0 (the
// select feeds 0.0 to the conversion), the rest saturate to -128 / 127.
// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[X:.*]]: f32) -> i8
// CHECK-DAG: %[[LO:.*]] = arith.constant -1.280000e+02 : f32
// CHECK-DAG: %[[HI:.*]] = arith.constant 1.280000e+02 : f32
// CHECK: %[[ABOVE:.*]] = arith.cmpf oge, %[[X]], %[[HI]] : f32
// CHECK: %[[BELOW:.*]] = arith.cmpf olt, %[[X]], %[[LO]] : f32
// CHECK: %[[GE:.*]] = arith.cmpf oge, %[[X]], %[[LO]] : f32
// CHECK: %[[LT:.*]] = arith.cmpf olt, %[[X]], %[[HI]] : f32
// CHECK: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: %[[SAFE:.*]] = arith.select %[[IN]], %[[X]], %{{.*}} : f32
// CHECK: %[[I:.*]] = arith.fptosi %[[SAFE]] : f32 to i8
// CHECK: %[[MAX:.*]] = arith.constant 127 : i8
// CHECK: %[[R1:.*]] = arith.select %[[ABOVE]], %[[MAX]], %[[I]] : i8
// CHECK: %[[MIN:.*]] = arith.constant -128 : i8
// CHECK: %[[R2:.*]] = arith.select %[[BELOW]], %[[MIN]], %[[R1]] : i8
// CHECK: return %[[R2]] : i8
func.func @scalar(%x: f32) -> i8 {
  %0 = arith.fptosi %x : f32 to i8
  return %0 : i8
}

// -----

// f64 -> ui32 on vectors: the range is [0, 2^32); above it gives all ones (-1).
// CHECK-LABEL: func.func @vector_unsigned
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf64>
// CHECK-DAG: %[[HI:.*]] = arith.constant dense<0x41F0000000000000> : vector<16xf64>
// CHECK: arith.cmpf oge, %{{.*}}, %[[HI]] : vector<16xf64>
// CHECK: arith.fptoui %{{.*}} : vector<16xf64> to vector<16xi32>
// CHECK: arith.constant dense<-1> : vector<16xi32>
// CHECK: arith.select %{{.*}} : vector<16xi1>, vector<16xi32>
func.func @vector_unsigned(%x: vector<16xf64>) -> vector<16xi32> {
  %0 = arith.fptoui %x : vector<16xf64> to vector<16xi32>
  return %0 : vector<16xi32>
}

// -----

// bf16 -> i64: both 64-bit bounds are powers of two, exact in bf16.
// CHECK-LABEL: func.func @bf16_to_i64
// CHECK-DAG: arith.constant -9.{{[0-9]+}}e+18 : bf16
// CHECK-DAG: arith.constant 9.{{[0-9]+}}e+18 : bf16
// CHECK: arith.fptosi %{{.*}} : bf16 to i64
func.func @bf16_to_i64(%x: bf16) -> i64 {
  %0 = arith.fptosi %x : bf16 to i64
  return %0 : i64
}

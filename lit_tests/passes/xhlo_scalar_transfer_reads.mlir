// RUN: xhlo-opt %s --xhlo-scalar-transfer-reads | FileCheck %s

// One element of a buffer whose rows are every other element (innermost stride
// 2): a scalar load and a broadcast. The same read of a unit-stride buffer, a
// read of several elements and a read that may fall out of bounds stay.

// CHECK-LABEL: func.func @reads
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: memref<4x8xf32, strided<[16, 2]>>
// CHECK: %[[E:.*]] = memref.load %[[S]][%{{.*}}, %{{.*}}] : memref<4x8xf32, strided<[16, 2]>>
// CHECK: %[[V:.*]] = vector.broadcast %[[E]] : f32 to vector<f32>
// CHECK: %[[E1:.*]] = memref.load %[[S]][%{{.*}}, %{{.*}}] : memref<4x8xf32, strided<[16, 2]>>
// CHECK: %[[V1:.*]] = vector.broadcast %[[E1]] : f32 to vector<1xf32>
// CHECK: vector.transfer_read %{{.*}} : memref<4x8xf32>, vector<f32>
// CHECK: vector.transfer_read %[[S]]{{.*}} : memref<4x8xf32, strided<[16, 2]>>, vector<4xf32>
// CHECK: vector.transfer_read %[[S]]{{.*}} : memref<4x8xf32, strided<[16, 2]>>, vector<1xf32>
// CHECK: return %[[V]], %[[V1]]
func.func @reads(%s: memref<4x8xf32, strided<[16, 2]>>, %unit: memref<4x8xf32>, %i: index)
    -> (vector<f32>, vector<1xf32>, vector<f32>, vector<4xf32>, vector<1xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %a = vector.transfer_read %s[%i, %c0], %pad : memref<4x8xf32, strided<[16, 2]>>, vector<f32>
  %b = vector.transfer_read %s[%i, %c0], %pad {in_bounds = [true]} : memref<4x8xf32, strided<[16, 2]>>, vector<1xf32>
  %u = vector.transfer_read %unit[%i, %c0], %pad : memref<4x8xf32>, vector<f32>
  %d = vector.transfer_read %s[%i, %c0], %pad {in_bounds = [true]} : memref<4x8xf32, strided<[16, 2]>>, vector<4xf32>
  %e = vector.transfer_read %s[%i, %c0], %pad : memref<4x8xf32, strided<[16, 2]>>, vector<1xf32>
  return %a, %b, %u, %d, %e : vector<f32>, vector<1xf32>, vector<f32>, vector<4xf32>, vector<1xf32>
}

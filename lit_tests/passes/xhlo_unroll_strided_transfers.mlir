// RUN: xhlo-opt %s --xhlo-unroll-strided-transfers | FileCheck %s

// A column of four rows (innermost stride 4096) read and written in bounds: one
// load or store per lane at constant offsets from the last index. A read of a
// contiguous row, a read that may fall out of bounds and a masked read stay.

// CHECK-LABEL: func.func @column
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: memref<4xf32, strided<[4096], offset: ?>>
// CHECK-SAME: %[[I:[a-zA-Z0-9_]+]]: index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[I1:.*]] = arith.addi %[[I]], %[[C1]]
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[I3:.*]] = arith.addi %[[I]], %[[C3]]
// CHECK: %[[E0:.*]] = memref.load %[[S]][%[[I]]]
// CHECK: %[[E1:.*]] = memref.load %[[S]][%[[I1]]]
// CHECK: %[[E3:.*]] = memref.load %[[S]][%[[I3]]]
// CHECK: %[[V:.*]] = vector.from_elements %[[E0]], %[[E1]], %{{.*}}, %[[E3]] : vector<4xf32>
// CHECK: %[[W:.*]] = arith.addf %[[V]], %[[V]]
// CHECK: %[[X0:.*]] = vector.extract %[[W]][0] : f32 from vector<4xf32>
// CHECK: memref.store %[[X0]], %[[S]][%[[I]]]
// CHECK: %[[X3:.*]] = vector.extract %[[W]][3] : f32 from vector<4xf32>
// CHECK: memref.store %[[X3]], %[[S]][%{{.*}}]
// CHECK-NOT: vector.transfer_write
// CHECK: return
func.func @column(%s: memref<4xf32, strided<[4096], offset: ?>>, %i: index) {
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %s[%i], %pad {in_bounds = [true]} : memref<4xf32, strided<[4096], offset: ?>>, vector<4xf32>
  %w = arith.addf %v, %v : vector<4xf32>
  vector.transfer_write %w, %s[%i] {in_bounds = [true]} : vector<4xf32>, memref<4xf32, strided<[4096], offset: ?>>
  return
}

// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: vector.transfer_read
// CHECK-NOT: memref.load
func.func @kept(%s: memref<4x8xf32, strided<[16, 2]>>, %unit: memref<4x8xf32>, %i: index, %m: vector<4xi1>)
    -> (vector<4xf32>, vector<4xf32>, vector<4xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %a = vector.transfer_read %unit[%i, %c0], %pad {in_bounds = [true]} : memref<4x8xf32>, vector<4xf32>
  %b = vector.transfer_read %s[%i, %c0], %pad : memref<4x8xf32, strided<[16, 2]>>, vector<4xf32>
  %c = vector.transfer_read %s[%i, %c0], %pad, %m {in_bounds = [true]} : memref<4x8xf32, strided<[16, 2]>>, vector<4xf32>
  return %a, %b, %c : vector<4xf32>, vector<4xf32>, vector<4xf32>
}

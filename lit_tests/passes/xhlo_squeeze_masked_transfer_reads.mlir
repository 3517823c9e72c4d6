// RUN: xhlo-opt %s --xhlo-squeeze-masked-transfer-reads --split-input-file | FileCheck %s

// A masked 16x1 read through (d2, d0): a 16-lane read through (d2) (the minor
// identity, not printed) with the mask
// reshaped, and the result reshaped back.
// CHECK-LABEL: func.func @column_tile
// CHECK-SAME: (%[[M:.*]]: memref<1x1x?xf32, strided<[700, 100, 1], offset: ?>>, %[[N:.*]]: index)
// CHECK: %[[MASK:.*]] = vector.create_mask %{{.*}}, %[[N]] : vector<1x16xi1>
// CHECK: %[[FLAT_MASK:.*]] = vector.shape_cast %[[MASK]] : vector<1x16xi1> to vector<16xi1>
// CHECK: %[[READ:.*]] = vector.transfer_read %[[M]][%{{.*}}, %{{.*}}, %{{.*}}], %{{.*}}, %[[FLAT_MASK]] {in_bounds = [true]} : memref<1x1x?xf32, strided<[700, 100, 1], offset: ?>>, vector<16xf32>
// CHECK: %[[BACK:.*]] = vector.shape_cast %[[READ]] : vector<16xf32> to vector<16x1xf32>
// CHECK: return %[[BACK]]
func.func @column_tile(%m: memref<1x1x?xf32, strided<[700, 100, 1], offset: ?>>, %n: index) -> vector<16x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  %mask = vector.create_mask %c1, %n : vector<1x16xi1>
  %0 = vector.transfer_read %m[%c0, %c0, %c0], %pad, %mask {in_bounds = [true, true], permutation_map = affine_map<(d0, d1, d2) -> (d2, d0)>} : memref<1x1x?xf32, strided<[700, 100, 1], offset: ?>>, vector<16x1xf32>
  return %0 : vector<16x1xf32>
}

// -----

// Unmasked reads and reads with two non-unit dims are left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: vector.shape_cast
// CHECK: return
func.func @left_alone(%m: memref<4x16xf32>, %n: index) -> (vector<16x1xf32>, vector<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %0 = vector.transfer_read %m[%c0, %c0], %pad {in_bounds = [true, true], permutation_map = affine_map<(d0, d1) -> (d1, d0)>} : memref<4x16xf32>, vector<16x1xf32>
  %mask = vector.create_mask %n, %n : vector<4x16xi1>
  %1 = vector.transfer_read %m[%c0, %c0], %pad, %mask {in_bounds = [true, true]} : memref<4x16xf32>, vector<4x16xf32>
  return %0, %1 : vector<16x1xf32>, vector<4x16xf32>
}

// RUN: xhlo-opt %s --xhlo-prefetch-gathered-rows --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-prefetch-gathered-rows="ahead-bytes=2048 max-row-bytes=128" --split-input-file \
// RUN:   | FileCheck %s --check-prefix=SHORT

// An embedding lookup's row loop: ids[i] clamped picks a row of 256 floats (1 KiB).
// Row ids[i + 8] (8 rows: 8 KiB ahead; ids[i] again past the end) is prefetched
// whole, one prefetch per 64-byte line.
// CHECK-LABEL: func.func @lookup
// CHECK-SAME: %[[T:[a-zA-Z0-9_]+]]: memref<4096x256xf32>, %[[IDS:[a-zA-Z0-9_]+]]: memref<512xi32>
// CHECK: scf.for %[[I:.*]] = %[[LO:.*]] to %[[HI:.*]] step %[[STEP:[a-zA-Z0-9_]+]]
// CHECK: %[[AHEAD:.*]] = arith.muli %[[STEP]], %{{.*}}
// CHECK: %[[LATER:.*]] = arith.addi %[[I]], %[[AHEAD]]
// CHECK: %[[EXISTS:.*]] = arith.cmpi slt, %[[LATER]], %[[HI]]
// CHECK: %[[J:.*]] = arith.select %[[EXISTS]], %[[LATER]], %[[I]]
// CHECK: %[[ID:.*]] = memref.load %[[IDS]][%[[J]]]
// CHECK: %[[CAST:.*]] = arith.index_cast %[[ID]]
// CHECK: %[[LOW:.*]] = arith.maxsi %[[CAST]]
// CHECK: %[[ROW:.*]] = arith.minsi %[[LOW]]
// CHECK-COUNT-16: memref.prefetch %[[T]][%[[ROW]], %{{.*}}], read, locality<3>, data
// CHECK-NOT: memref.prefetch
// CHECK: memref.load %[[IDS]][%[[I]]]
// CHECK: vector.transfer_read %[[T]]
// SHORT-LABEL: func.func @lookup
// SHORT: %[[TWO:.*]] = arith.constant 2 : index
// SHORT: arith.muli %{{.*}}, %[[TWO]]
// SHORT-COUNT-2: memref.prefetch
// SHORT-NOT: memref.prefetch
func.func @lookup(%table: memref<4096x256xf32>, %ids: memref<512xi32>, %out: memref<512x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %c4095 = arith.constant 4095 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c512 step %c1 {
    %id = memref.load %ids[%i] : memref<512xi32>
    %cast = arith.index_cast %id : i32 to index
    %low = arith.maxsi %cast, %c0 : index
    %row = arith.minsi %low, %c4095 : index
    scf.for %j = %c0 to %c256 step %c16 {
      %v = vector.transfer_read %table[%row, %j], %pad {in_bounds = [true]} : memref<4096x256xf32>, vector<16xf32>
      vector.transfer_write %v, %out[%i, %j] {in_bounds = [true]} : vector<16xf32>, memref<512x256xf32>
    }
  }
  return
}

// -----

// Rows of 32 floats (128 bytes) share lines with their neighbours: nothing to do.
// A row picked by the loop index itself is not a gather either.
// CHECK-LABEL: func.func @not_gathers
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @not_gathers(%short: memref<4096x32xf32>, %table: memref<4096x256xf32>, %ids: memref<512xi32>,
                       %out: memref<512x32xf32>, %out2: memref<512x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c512 step %c1 {
    %id = memref.load %ids[%i] : memref<512xi32>
    %row = arith.index_cast %id : i32 to index
    %v = vector.transfer_read %short[%row, %c0], %pad {in_bounds = [true]} : memref<4096x32xf32>, vector<32xf32>
    vector.transfer_write %v, %out[%i, %c0] {in_bounds = [true]} : vector<32xf32>, memref<512x32xf32>
    scf.for %j = %c0 to %c256 step %c16 {
      %w = vector.transfer_read %table[%i, %j], %pad {in_bounds = [true]} : memref<4096x256xf32>, vector<16xf32>
      vector.transfer_write %w, %out2[%i, %j] {in_bounds = [true]} : vector<16xf32>, memref<512x256xf32>
    }
  }
  return
}

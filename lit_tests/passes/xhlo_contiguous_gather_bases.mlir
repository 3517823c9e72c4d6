// RUN: xhlo-opt %s --xhlo-contiguous-gather-bases --split-input-file | FileCheck %s

// A gather on a strided view (a slice a[..., :1]) reads a row-major copy, made
// before the loop around it and freed after the loop; the view is left alone.
// CHECK-LABEL: func.func @strided_view_in_a_loop
// CHECK-SAME: (%[[A:.*]]: memref<2x3x3xf32>,
// CHECK: %[[VIEW:.*]] = memref.subview %[[A]]
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<2x3x1xf32>
// CHECK-NEXT: memref.copy %[[VIEW]], %[[COPY]]
// CHECK-NEXT: scf.for
// CHECK-NEXT: vector.gather %[[COPY]][%{{.*}}, %{{.*}}, %{{.*}}] [%{{.*}}]
// CHECK-NEXT: vector.transfer_write
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[COPY]]
func.func @strided_view_in_a_loop(%a: memref<2x3x3xf32>, %i: vector<3xindex>, %out: memref<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %mask = arith.constant dense<true> : vector<3xi1>
  %pass = arith.constant dense<0.0> : vector<3xf32>
  %view = memref.subview %a[0, 0, 0] [2, 3, 1] [1, 1, 1] : memref<2x3x3xf32> to memref<2x3x1xf32, strided<[9, 3, 1]>>
  scf.for %b = %c0 to %c2 step %c1 {
    %g = vector.gather %view[%b, %c0, %c0] [%i], %mask, %pass : memref<2x3x1xf32, strided<[9, 3, 1]>>, vector<3xindex>, vector<3xi1>, vector<3xf32> into vector<3xf32>
    vector.transfer_write %g, %out[%b, %c0] {in_bounds = [true]} : vector<3xf32>, memref<2x3xf32>
  }
  return
}

// -----

// A row-major base (any offset) is read in place.
// CHECK-LABEL: func.func @row_major_view
// CHECK-NOT: memref.alloc
// CHECK: vector.gather %{{.*}} : memref<3xf32, strided<[1], offset: 3>>
func.func @row_major_view(%a: memref<2x3xf32>, %i: vector<3xindex>) -> vector<3xf32> {
  %c0 = arith.constant 0 : index
  %mask = arith.constant dense<true> : vector<3xi1>
  %pass = arith.constant dense<0.0> : vector<3xf32>
  %row = memref.subview %a[1, 0] [1, 3] [1, 1] : memref<2x3xf32> to memref<3xf32, strided<[1], offset: 3>>
  %g = vector.gather %row[%c0] [%i], %mask, %pass : memref<3xf32, strided<[1], offset: 3>>, vector<3xindex>, vector<3xi1>, vector<3xf32> into vector<3xf32>
  return %g : vector<3xf32>
}

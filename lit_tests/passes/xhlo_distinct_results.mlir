// RUN: xhlo-opt %s --xhlo-distinct-results --split-input-file | FileCheck %s

// A buffer returned twice: the second result is copied into a fresh buffer, so
// buffer-results-to-out-params sees distinct results.
// CHECK-LABEL: func.func @twice
// CHECK-SAME: (%[[A:.*]]: memref<3xf32>)
// CHECK-NEXT: %[[FRESH:.*]] = memref.alloc() : memref<3xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[FRESH]] : memref<3xf32> to memref<3xf32>
// CHECK-NEXT: return %[[A]], %[[FRESH]] : memref<3xf32>, memref<3xf32>
func.func @twice(%a: memref<3xf32>) -> (memref<3xf32>, memref<3xf32>) {
  return %a, %a : memref<3xf32>, memref<3xf32>
}

// -----

// Each repeat gets its own copy; the first occurrence keeps the original.
// CHECK-LABEL: func.func @three_times
// CHECK-SAME: (%[[A:.*]]: memref<2xi32>, %[[B:.*]]: memref<2xi32>)
// CHECK-NEXT: %[[C1:.*]] = memref.alloc() : memref<2xi32>
// CHECK-NEXT: memref.copy %[[A]], %[[C1]]
// CHECK-NEXT: %[[C2:.*]] = memref.alloc() : memref<2xi32>
// CHECK-NEXT: memref.copy %[[A]], %[[C2]]
// CHECK-NEXT: return %[[A]], %[[B]], %[[C1]], %[[C2]] : memref<2xi32>, memref<2xi32>, memref<2xi32>, memref<2xi32>
func.func @three_times(%a: memref<2xi32>, %b: memref<2xi32>)
    -> (memref<2xi32>, memref<2xi32>, memref<2xi32>, memref<2xi32>) {
  return %a, %b, %a, %a : memref<2xi32>, memref<2xi32>, memref<2xi32>, memref<2xi32>
}

// -----

// Distinct results and repeated non-memref values are left alone.
// CHECK-LABEL: func.func @already_distinct
// CHECK-NEXT: return %{{.*}}, %{{.*}}, %[[I:.*]], %[[I]] :
// CHECK-NOT: memref.alloc
func.func @already_distinct(%a: memref<3xf32>, %b: memref<3xf32>, %i: i32) -> (memref<3xf32>, memref<3xf32>, i32, i32) {
  return %a, %b, %i, %i : memref<3xf32>, memref<3xf32>, i32, i32
}

// Stage 5 of xhlo.compile: tagged contractions -> BLAS calls, linalg on buffers -> scf loops.
// RUN: xhlo-opt %s --xhlo-lower-to-loops | FileCheck %s
// RUN: xhlo-opt %s -p 'builtin.module(xhlo-lower-to-loops)' | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: memref<2x3xf32>, %[[OUT:.*]]: memref<2x3xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C2]] step %[[C1]] {
// CHECK-NEXT: scf.for %[[J:.*]] = %[[C0]] to %[[C3]] step %[[C1]] {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[A]][%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT: %[[Y:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT: memref.store %[[Y]], %[[OUT]][%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NOT: linalg.
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: memref<2x3xf32>, %out: memref<2x3xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%a : memref<2x3xf32>) outs(%out : memref<2x3xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  return
}

// Stage 4 of xhlo.compile: tensors -> memrefs; results become out-parameters.
// RUN: xhlo-opt %s --xhlo-bufferize --split-input-file | FileCheck %s
// RUN: xhlo-opt %s -p 'builtin.module(xhlo-bufferize)' --split-input-file | FileCheck %s

// The result is written straight into the caller's out-parameter; the
// temporary is a view of the scratch arena the caller passes last (64 bytes,
// one aligned slot), so nothing is allocated or freed.
// CHECK: #[[MAP:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: memref<3xf32>, %[[OUT:.*]]: memref<3xf32>, %[[ARENA:.*]]: memref<64xi8>) attributes {xhlo.scratch_bytes = 64 : i64} {
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[TMP:.*]] = memref.view %[[ARENA]][%[[ZERO]]][] : memref<64xi8> to memref<3xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[A]], %[[A]] : memref<3xf32>, memref<3xf32>) outs(%[[TMP]] : memref<3xf32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%[[TMP]] : memref<3xf32>) outs(%[[OUT]] : memref<3xf32>)
// CHECK: math.tan
// CHECK-NOT: memref.dealloc
// CHECK: return{{$}}
#map = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = tensor.empty() : tensor<3xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %a : tensor<3xf32>, tensor<3xf32>) outs(%0 : tensor<3xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.mulf %in, %in_0 : f32
    linalg.yield %4 : f32
  } -> tensor<3xf32>
  %2 = tensor.empty() : tensor<3xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%1 : tensor<3xf32>) outs(%2 : tensor<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = math.tan %in : f32
    linalg.yield %4 : f32
  } -> tensor<3xf32>
  return %3 : tensor<3xf32>
}

// -----

// One value returned twice fills two out-parameters, with linalg.copy (no
// runtime library needed).
// CHECK-LABEL: func.func @twice
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[OUT0:.*]]: memref<4xf32>, %[[OUT1:.*]]: memref<4xf32>)
// CHECK-DAG: linalg.copy {{.*}}ins(%[[A]] : memref<4xf32>) outs(%[[OUT0]] : memref<4xf32>)
// CHECK-DAG: linalg.copy {{.*}}ins(%[[A]] : memref<4xf32>) outs(%[[OUT1]] : memref<4xf32>)
// CHECK-NOT: memref.copy
func.func @twice(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  return %a, %a : tensor<4xf32>, tensor<4xf32>
}

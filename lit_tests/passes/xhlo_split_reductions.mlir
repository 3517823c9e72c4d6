// RUN: xhlo-opt %s --xhlo-split-reductions --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-split-reductions="parts=4 min-elements=8192" --split-input-file | FileCheck %s --check-prefix=SMALL

// A sum of 1M floats to one output: 32 rows of 32768 start from the identity
// (-0.0), then the 32 partial sums are folded into the original init.
// CHECK-LABEL: func.func @total
// CHECK-SAME: (%[[X:.*]]: tensor<1048576xf32>, %[[INIT:.*]]: tensor<f32>)
// CHECK: %[[ROWS:.*]] = stablehlo.reshape %[[X]] : (tensor<1048576xf32>) -> tensor<32x32768xf32>
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<-0.000000e+00> : tensor<f32>
// CHECK: %[[PARTIAL:.*]] = stablehlo.reduce(%[[ROWS]] init: %[[ZERO]]) applies stablehlo.add across dimensions = [1] : (tensor<32x32768xf32>, tensor<f32>) -> tensor<32xf32>
// CHECK: %[[P2:.*]] = stablehlo.reshape %[[PARTIAL]] : (tensor<32xf32>) -> tensor<1x32xf32>
// CHECK: %[[TOTAL:.*]] = stablehlo.reduce(%[[P2]] init: %[[INIT]]) applies stablehlo.add across dimensions = [1] : (tensor<1x32xf32>, tensor<f32>) -> tensor<1xf32>
// CHECK: %[[R:.*]] = stablehlo.reshape %[[TOTAL]] : (tensor<1xf32>) -> tensor<f32>
// CHECK: return %[[R]]
// With parts=4: 4 rows.
// SMALL-LABEL: func.func @total
// SMALL: stablehlo.reshape %{{.*}} : (tensor<1048576xf32>) -> tensor<4x262144xf32>
func.func @total(%x: tensor<1048576xf32>, %init: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [0] : (tensor<1048576xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Three outputs (a unit dimension between them and the reduced ones): 12 parts
// per output, the first count from 32 / 3 up that divides 2 * 196608.
// CHECK-LABEL: func.func @max_of_three_rows
// CHECK: stablehlo.reshape %{{.*}} : (tensor<3x1x2x196608xi32>) -> tensor<36x32768xi32>
// CHECK: %[[LOWEST:.*]] = stablehlo.constant dense<-2147483648> : tensor<i32>
// CHECK: stablehlo.reduce(%{{.*}} init: %[[LOWEST]]) applies stablehlo.maximum across dimensions = [1] : (tensor<36x32768xi32>, tensor<i32>) -> tensor<36xi32>
// CHECK: stablehlo.reshape %{{.*}} : (tensor<36xi32>) -> tensor<3x12xi32>
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.maximum across dimensions = [1] : (tensor<3x12xi32>, tensor<i32>) -> tensor<3xi32>
// CHECK: stablehlo.reshape %{{.*}} : (tensor<3xi32>) -> tensor<3x1xi32>
func.func @max_of_three_rows(%x: tensor<3x1x2x196608xi32>) -> tensor<3x1xi32> {
  %init = stablehlo.constant dense<-5> : tensor<i32>
  %0 = stablehlo.reduce(%x init: %init) applies stablehlo.maximum across dimensions = [2, 3] : (tensor<3x1x2x196608xi32>, tensor<i32>) -> tensor<3x1xi32>
  return %0 : tensor<3x1xi32>
}

// -----

// Left alone: many outputs (the loop over them is parallel already), a reduction
// whose elements are not contiguous (a kept dimension after a reduced one), a
// small reduction, bf16, and a body that is not one combiner.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: stablehlo.reshape
// CHECK: return
// With min-elements=8192 the small reduction is split, and only it.
// SMALL-LABEL: func.func @left_alone
// SMALL: stablehlo.reshape %{{.*}} : (tensor<16384xf32>) -> tensor<4x4096xf32>
// SMALL: stablehlo.reshape %{{.*}} : (tensor<4xf32>) -> tensor<1x4xf32>
// SMALL: stablehlo.reshape %{{.*}} : (tensor<1xf32>) -> tensor<f32>
// SMALL-NOT: stablehlo.reshape
// SMALL: return
func.func @left_alone(%rows: tensor<64x4096xf32>, %columns: tensor<4096x64xf32>, %small: tensor<16384xf32>,
                      %half: tensor<1048576xbf16>, %x: tensor<1048576xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<f32>, tensor<bf16>, tensor<f32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %hzero = stablehlo.constant dense<0.0> : tensor<bf16>
  %0 = stablehlo.reduce(%rows init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x4096xf32>, tensor<f32>) -> tensor<64xf32>
  %1 = stablehlo.reduce(%columns init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4096x64xf32>, tensor<f32>) -> tensor<64xf32>
  %2 = stablehlo.reduce(%small init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<16384xf32>, tensor<f32>) -> tensor<f32>
  %3 = stablehlo.reduce(%half init: %hzero) applies stablehlo.add across dimensions = [0] : (tensor<1048576xbf16>, tensor<bf16>) -> tensor<bf16>
  %4 = stablehlo.reduce(%x init: %zero) across dimensions = [0] : (tensor<1048576xf32>, tensor<f32>) -> tensor<f32>
   reducer(%a: tensor<f32>, %b: tensor<f32>) {
    %s = stablehlo.add %a, %b : tensor<f32>
    %t = stablehlo.multiply %s, %s : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }
  return %0, %1, %2, %3, %4 : tensor<64xf32>, tensor<64xf32>, tensor<f32>, tensor<bf16>, tensor<f32>
}

// RUN: xhlo-opt %s --xhlo-lower-direct-convolutions="accumulators=24 max-pixels=4" --cse --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-lower-direct-convolutions="accumulators=6 max-pixels=6" --cse --split-input-file | FileCheck %s --check-prefix=AVX2
// Checked with AVX-512's 24 accumulators and 4 pixels a block, and with AVX2's 6 and 6
// (the defaults follow the host).

// A tagged stride-2 convolution of 3 channels into 32 features (2 vectors), its output
// zero-filled first: the fill goes, a loop over the blocks of the 4 output rows (one
// block of 4 pixels a row) is marked for the thread pool, a block keeps 4 x 2 vector
// sums over the 3 x 3 window, each tap loads the filter's vectors once per channel and
// broadcasts one image element per pixel (the pixels 2 columns apart), and the sums
// are stored.
// CHECK-LABEL: func.func @stem
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[BLOCK:.*]] = %c0 to %c4 step %c1 {
// CHECK: %[[ROW:.*]] = arith.divui %[[BLOCK]], %c1
// CHECK: %[[N:.*]] = arith.divui %[[ROW]], %c4
// CHECK: %[[OH:.*]] = arith.remui %[[ROW]], %c4
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: scf.for %[[KH:.*]] = %c0 to %c3 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for %[[KW:.*]] = %c0 to %c3 step %c1 iter_args(
// CHECK: %[[W0:.*]] = vector.load %arg1[%[[KH]], %[[KW]], %c0, %c0] : memref<3x3x3x32xf32>, vector<16xf32>
// CHECK: %[[W1:.*]] = vector.load %arg1[%[[KH]], %[[KW]], %c0, %c16] : memref<3x3x3x32xf32>, vector<16xf32>
// CHECK: %[[PIXEL:.*]] = memref.load %arg0[%[[N]], %{{.*}}, %{{.*}}, %c0] : memref<1x9x9x3xf32>
// CHECK: %[[SPREAD:.*]] = vector.broadcast %[[PIXEL]] : f32 to vector<16xf32>
// CHECK: vector.fma %[[SPREAD]], %[[W0]], %{{.*}} : vector<16xf32>
// CHECK: vector.fma %[[SPREAD]], %[[W1]], %{{.*}} : vector<16xf32>
// CHECK-COUNT-22: vector.fma
// CHECK: vector.store %{{.*}}, %arg2[%[[N]], %[[OH]], %{{.*}}, %c0] : memref<1x4x4x32xf32>, vector<16xf32>
// CHECK: } {xhlo.parallel_loop}
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
func.func @stem(%image: memref<1x9x9x3xf32>, %filter: memref<3x3x3x32xf32>, %out: memref<1x4x4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%out : memref<1x4x4x32xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>, xhlo.blas, xhlo.direct_conv}
    ins(%image, %filter : memref<1x9x9x3xf32>, memref<3x3x3x32xf32>) outs(%out : memref<1x4x4x32xf32>)
  return
}

// -----

// Without a zero fill before it the sums start from the output (loaded first), and the
// 6 pixels of a row take a block of 4 and one of 2 (no overlap: a pixel must not be
// added twice).
// CHECK-LABEL: func.func @accumulate
// CHECK: vector.load %arg2[
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>)
// CHECK: } {xhlo.parallel_loop}
func.func @accumulate(%image: memref<2x3x8x1xf32>, %filter: memref<1x3x1x16xf32>, %out: memref<2x3x6x16xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, xhlo.blas, xhlo.direct_conv}
    ins(%image, %filter : memref<2x3x8x1xf32>, memref<1x3x1x16xf32>) outs(%out : memref<2x3x6x16xf32>)
  return
}

// -----

// 64 features: AVX-512 blocks are 4 pixels x all 4 vectors (the 6 pixels of a row take
// two overlapping blocks); AVX2 blocks are 6 pixels x 1 vector, and one loop takes the
// 4 chunks of 16 features of each row, the chunk varying fastest.
// CHECK-LABEL: func.func @features_in_chunks
// CHECK: scf.for %{{.*}} = %c0 to %c6 step %c1 {
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: } {xhlo.parallel_loop}
// AVX2-LABEL: func.func @features_in_chunks
// AVX2: scf.for %[[INDEX:.*]] = %c0 to %c12 step %c1 {
// AVX2: %[[BLOCK:.*]] = arith.divui %[[INDEX]], %c4
// AVX2: %[[CHUNK:.*]] = arith.remui %[[INDEX]], %c4
// AVX2: %[[FIRST:.*]] = arith.muli %[[CHUNK]], %c16
// AVX2: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX2: vector.load %arg1[%{{.*}}, %{{.*}}, %c0, %[[FIRST]]] : memref<1x3x4x64xf32>, vector<16xf32>
// AVX2-COUNT-6: vector.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}, %{{.*}}, %[[FIRST]]] : memref<1x3x6x64xf32>, vector<16xf32>
// AVX2: } {xhlo.parallel_loop}
func.func @features_in_chunks(%image: memref<1x3x8x4xf32>, %filter: memref<1x3x4x64xf32>, %out: memref<1x3x6x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%out : memref<1x3x6x64xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, xhlo.blas, xhlo.direct_conv}
    ins(%image, %filter : memref<1x3x8x4xf32>, memref<1x3x4x64xf32>) outs(%out : memref<1x3x6x64xf32>)
  return
}

// -----

// Untagged convolutions are left alone.
// CHECK-LABEL: func.func @untagged
// CHECK: linalg.conv_2d_nhwc_hwcf
func.func @untagged(%image: memref<1x9x9x3xf32>, %filter: memref<3x3x3x32xf32>, %out: memref<1x7x7x32xf32>) {
  linalg.conv_2d_nhwc_hwcf ins(%image, %filter : memref<1x9x9x3xf32>, memref<3x3x3x32xf32>) outs(%out : memref<1x7x7x32xf32>)
  return
}

// -----

// One channel, one feature (jnp.convolve): image and output are viewed without their
// unit channel dim; one loop over the 1 x 2 blocks of 64 pixels of the 2 rows (for the
// thread pool) keeps 4 vectors of 16 neighbouring pixels' sums, each tap broadcasts its
// weight over 4 vectors of neighbouring image pixels. The rows' last 32 pixels take two
// single vectors, the last 3 scalar code.
// CHECK-LABEL: func.func @one_channel_one_feature
// CHECK-NOT: linalg.fill
// CHECK: %[[IMAGE:.*]] = memref.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : memref<2x1x103x1xf32> into memref<2x1x103xf32>
// CHECK: %[[OUT:.*]] = memref.collapse_shape %arg2 {{\[\[}}0], [1], [2, 3]] : memref<2x1x99x1xf32> into memref<2x1x99xf32>
// CHECK: scf.for %[[BLOCK:.*]] = %c0 to %c2 step %c1 {
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: %[[W:.*]] = memref.load %arg1[
// CHECK: vector.load %[[IMAGE]][
// CHECK: %[[SPREAD:.*]] = vector.broadcast %[[W]] : f32 to vector<16xf32>
// CHECK: vector.fma %{{.*}}, %[[SPREAD]]
// CHECK-COUNT-4: vector.store %{{.*}}, %[[OUT]][
// CHECK: } {xhlo.parallel_loop}
// CHECK: scf.for %[[ROW:.*]] = %c0 to %c2 step %c1 {
// CHECK: -> (vector<16xf32>, vector<16xf32>)
// CHECK: scf.for %[[PIXEL:.*]] = %c96 to %c99 step %c1 {
// CHECK: memref.load %[[IMAGE]][
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[OUT]][
// CHECK: } {xhlo.parallel_loop}
func.func @one_channel_one_feature(%image: memref<2x1x103x1xf32>, %filter: memref<1x5x1x1xf32>, %out: memref<2x1x99x1xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%out : memref<2x1x99x1xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, xhlo.blas, xhlo.direct_conv}
    ins(%image, %filter : memref<2x1x103x1xf32>, memref<1x5x1x1xf32>) outs(%out : memref<2x1x99x1xf32>)
  return
}

// -----

// 16 input channels: a loop over them inside each tap (not 16 unrolled copies) carries
// the sums; one long row of 64 pixels gives its 16 blocks to the thread pool.
// CHECK-LABEL: func.func @channel_loop
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c1 {
// CHECK: scf.for %[[KW:.*]] = %c0 to %c3 step %c1 iter_args(
// CHECK: scf.for %[[CI:.*]] = %c0 to %c16 step %c1 iter_args(
// CHECK: vector.load %arg1[%{{.*}}, %[[KW]], %[[CI]], %c0] : memref<1x3x16x16xf32>, vector<16xf32>
// CHECK: } {xhlo.parallel_loop}
func.func @channel_loop(%image: memref<1x1x66x16xf32>, %filter: memref<1x3x16x16xf32>, %out: memref<1x1x64x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%out : memref<1x1x64x16xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, xhlo.blas, xhlo.direct_conv}
    ins(%image, %filter : memref<1x1x66x16xf32>, memref<1x3x16x16xf32>) outs(%out : memref<1x1x64x16xf32>)
  return
}

// -----

// "SAME" padding: the padded copy of the image is written between the output's fill and
// the convolution, into another buffer (the scratch arena): the fill still goes.
// CHECK-LABEL: func.func @padded_image
// CHECK-NOT: linalg.fill
// CHECK: linalg.map
// CHECK: linalg.copy
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
func.func @padded_image(%image: memref<1x4x4x2xf32>, %filter: memref<3x3x2x16xf32>, %out: memref<1x4x4x16xf32>, %scratch: memref<1024xi8>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%out : memref<1x4x4x16xf32>)
  %c0 = arith.constant 0 : index
  %padded = memref.view %scratch[%c0][] : memref<1024xi8> to memref<1x6x6x2xf32>
  linalg.map outs(%padded : memref<1x6x6x2xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %inner = memref.subview %padded[0, 1, 1, 0] [1, 4, 4, 2] [1, 1, 1, 1] : memref<1x6x6x2xf32> to memref<1x4x4x2xf32, strided<[72, 12, 2, 1], offset: 14>>
  linalg.copy ins(%image : memref<1x4x4x2xf32>) outs(%inner : memref<1x4x4x2xf32, strided<[72, 12, 2, 1], offset: 14>>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, xhlo.blas, xhlo.direct_conv}
    ins(%padded, %filter : memref<1x6x6x2xf32>, memref<3x3x2x16xf32>) outs(%out : memref<1x4x4x16xf32>)
  return
}

// -----

// A write into the output itself between its fill and the convolution keeps the fill.
// CHECK-LABEL: func.func @output_written_before
// CHECK: linalg.fill
func.func @output_written_before(%image: memref<1x6x6x2xf32>, %filter: memref<3x3x2x16xf32>, %out: memref<1x4x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%out : memref<1x4x4x16xf32>)
  %row = memref.subview %out[0, 0, 0, 0] [1, 1, 4, 16] [1, 1, 1, 1] : memref<1x4x4x16xf32> to memref<1x1x4x16xf32, strided<[256, 64, 16, 1]>>
  linalg.fill ins(%one : f32) outs(%row : memref<1x1x4x16xf32, strided<[256, 64, 16, 1]>>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, xhlo.blas, xhlo.direct_conv}
    ins(%image, %filter : memref<1x6x6x2xf32>, memref<3x3x2x16xf32>) outs(%out : memref<1x4x4x16xf32>)
  return
}

// -----

// A read of the zeroed output between its fill and the convolution keeps the fill.
// CHECK-LABEL: func.func @output_read_before
// CHECK: linalg.fill
func.func @output_read_before(%image: memref<1x6x6x2xf32>, %filter: memref<3x3x2x16xf32>, %out: memref<1x4x4x16xf32>, %saved: memref<1x4x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {xhlo.blas} ins(%zero : f32) outs(%out : memref<1x4x4x16xf32>)
  linalg.copy ins(%out : memref<1x4x4x16xf32>) outs(%saved : memref<1x4x4x16xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, xhlo.blas, xhlo.direct_conv}
    ins(%image, %filter : memref<1x6x6x2xf32>, memref<3x3x2x16xf32>) outs(%out : memref<1x4x4x16xf32>)
  return
}

// RUN: xhlo-opt %s --xhlo-fft-to-pocketfft --cse --split-input-file | FileCheck %s

// Rows of a complex FFT: the operand lent read-only, the result allocated, and a
// body whose loop over two blocks of 512 lines (marked for xhlo-parallelize-loops,
// with the work of its calls) calls pocketfft's c2c f32 loop (entry 0), forward, 64
// points per line, lines 512 bytes apart, elements 8 bytes apart, scale 1.
// CHECK-LABEL: func.func @rows
// CHECK: %[[IN:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<1024x64xcomplex<f32>> to memref<1024x64xcomplex<f32>>
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1024x64xcomplex<f32>>
// CHECK: call @xhlo_fft0(%[[IN]], %[[OUT]])
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: stablehlo.fft
// CHECK: func.func private @xhlo_fft0(%arg0: memref<1024x64xcomplex<f32>>, %arg1: memref<1024x64xcomplex<f32>>)
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 2 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[BLOCKS]] step
// CHECK-DAG: %[[ENTRY:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[FORWARD:.*]] = arith.constant 1 : i8
// CHECK-DAG: %[[N:.*]] = arith.constant 64 : i64
// CHECK-DAG: %[[LINE:.*]] = arith.constant 512 : i64
// CHECK-DAG: %[[STEP:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK: func.call @xhlo_pocketfft_lines(%[[ENTRY]], %[[FORWARD]], %{{.*}}, %{{.*}}, %{{.*}}, %[[N]], %[[N]], %[[LINE]], %[[LINE]], %[[STEP]], %[[STEP]], %[[ONE]])
// CHECK: } {xhlo.parallel_loop, xhlo.work = 196608 : i64}
// CHECK: llvm.mlir.global internal @xhlo_pocketfft_table() {{.*}} : !llvm.array<8 x ptr>
// CHECK: func.func private @xhlo_pocketfft_table_address() -> !llvm.ptr
// CHECK: func.func private @xhlo_pocketfft_lines({{.*}}) attributes {xhlo.thread_safe}
// CHECK: llvm.load
// CHECK: llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
func.func @rows(%x: tensor<1024x64xcomplex<f32>>) -> tensor<1024x64xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [64] : (tensor<1024x64xcomplex<f32>>) -> tensor<1024x64xcomplex<f32>>
  return %0 : tensor<1024x64xcomplex<f32>>
}

// -----

// IFFT over two axes in f64 (entry 1), backward: the rows from the operand into the
// result, then the columns in place (the same pointer in and out; 6 lines 16 bytes
// apart, elements 96 bytes apart), each axis scaled by 1/n.
// CHECK-LABEL: func.func @ifft2
// CHECK: func.func private @xhlo_fft0
// CHECK: %[[SIXTH:.*]] = arith.constant 0.16666666666666666 : f64
// CHECK: func.call @xhlo_pocketfft_lines(%c1_i64, %c0_i8, %{{.*}}, %{{.*}}, %{{.*}}, %c6_i64, %c6_i64, %c96_i64, %c96_i64, %c16_i64, %c16_i64, %[[SIXTH]])
// CHECK: %[[QUARTER:.*]] = arith.constant 2.500000e-01 : f64
// CHECK: func.call @xhlo_pocketfft_lines(%c1_i64, %c0_i8, %[[P:.*]], %[[P]], %{{.*}}, %c4_i64, %c4_i64, %c16_i64, %c16_i64, %c96_i64, %c96_i64, %[[QUARTER]])
func.func @ifft2(%x: tensor<4x6xcomplex<f64>>) -> tensor<4x6xcomplex<f64>> {
  %0 = stablehlo.fft %x, type = IFFT, length = [4, 6] : (tensor<4x6xcomplex<f64>>) -> tensor<4x6xcomplex<f64>>
  return %0 : tensor<4x6xcomplex<f64>>
}

// -----

// JAX's transform of axis 0 (transpose, fft, transpose): the untransposed operand
// and result, read and written along their columns (6 lines 8 bytes apart,
// elements 48 bytes apart); no transpose is left.
// CHECK-LABEL: func.func @axis0
// CHECK-NOT: stablehlo.transpose
// CHECK: call @xhlo_fft0(%{{.*}}, %{{.*}}) : (memref<512x6xcomplex<f32>>, memref<512x6xcomplex<f32>>) -> ()
// CHECK-NOT: stablehlo.transpose
// CHECK: func.call @xhlo_pocketfft_lines(%c0_i64, %c1_i8, %{{.*}}, %{{.*}}, %{{.*}}, %c512_i64, %c512_i64, %c8_i64, %c8_i64, %c48_i64, %c48_i64, %{{.*}})
func.func @axis0(%y: tensor<512x6xcomplex<f32>>) -> tensor<512x6xcomplex<f32>> {
  %yt = stablehlo.transpose %y, dims = [1, 0] : (tensor<512x6xcomplex<f32>>) -> tensor<6x512xcomplex<f32>>
  %f = stablehlo.fft %yt, type = FFT, length = [512] : (tensor<6x512xcomplex<f32>>) -> tensor<6x512xcomplex<f32>>
  %ft = stablehlo.transpose %f, dims = [1, 0] : (tensor<6x512xcomplex<f32>>) -> tensor<512x6xcomplex<f32>>
  return %ft : tensor<512x6xcomplex<f32>>
}

// -----

// IRFFT over two axes: the complex column transform (scaled by 1/3) into a scratch
// buffer (a third argument, allocated at the call site), then the real rows from it
// (entry 6, 5 -> 8 points, lines 40 and 32 bytes apart, scaled by 1/8).
// CHECK-LABEL: func.func @irfft2
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x8xf32>
// CHECK: %[[SCRATCH:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x5xcomplex<f32>>
// CHECK: call @xhlo_fft0(%{{.*}}, %[[OUT]], %[[SCRATCH]])
// CHECK: func.func private @xhlo_fft0(%arg0: memref<3x5xcomplex<f32>>, %arg1: memref<3x8xf32>, %arg2: memref<3x5xcomplex<f32>>)
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: memref.extract_aligned_pointer_as_index %arg2
// CHECK: arith.constant 0.33333333333333331 : f64
// CHECK: func.call @xhlo_pocketfft_lines(%c0_i64, %c0_i8, %{{.*}}, %{{.*}}, %{{.*}}, %c3_i64, %c3_i64, %c8_i64, %c8_i64, %c40_i64, %c40_i64,
// CHECK: memref.extract_aligned_pointer_as_index %arg1
// CHECK: arith.constant 1.250000e-01 : f64
// CHECK: func.call @xhlo_pocketfft_lines(%c6_i64, %c0_i8, %{{.*}}, %{{.*}}, %{{.*}}, %c5_i64, %c8_i64, %c40_i64, %c32_i64, %c8_i64, %c4_i64,
func.func @irfft2(%x: tensor<3x5xcomplex<f32>>) -> tensor<3x8xf32> {
  %0 = stablehlo.fft %x, type = IRFFT, length = [3, 8] : (tensor<3x5xcomplex<f32>>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// One complex line longer than long-length: split four-step into [256, 512]; the
// 512 columns transformed (read through strides, written transposed), a twiddle
// multiply on the real and imaginary parts, the 256 rows transformed. A real one is
// first a complex line of half the length (even samples as real parts, odd ones as
// imaginary parts), untangled after: 65536 points, which pocketfft takes as they are.
// CHECK-LABEL: func.func @long
// CHECK: %[[SPLIT:.*]] = stablehlo.reshape %{{.*}} : (tensor<131072xcomplex<f32>>) -> tensor<256x512xcomplex<f32>>
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[SPLIT]] read_only
// CHECK: %[[COLUMNS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<512x256xcomplex<f32>>
// CHECK: call @xhlo_fft0(%[[IN]], %[[COLUMNS]])
// CHECK: stablehlo.multiply
// CHECK: %[[TWIDDLED:.*]] = stablehlo.complex
// CHECK: %[[ROWS_IN:.*]] = bufferization.to_buffer %[[TWIDDLED]] read_only
// CHECK: call @xhlo_fft1(%[[ROWS_IN]], %{{.*}})
// CHECK: stablehlo.reshape %{{.*}} : (tensor<512x256xcomplex<f32>>) -> tensor<131072xcomplex<f32>>
// CHECK-NOT: stablehlo.transpose
// CHECK-LABEL: func.func @long_real
// CHECK: %[[PAIRS:.*]] = stablehlo.reshape %{{.*}} : (tensor<131072xf32>) -> tensor<65536x2xf32>
// CHECK: %[[HALF:.*]] = stablehlo.complex %{{.*}}, %{{.*}} : tensor<65536xcomplex<f32>>
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[HALF]] read_only
// CHECK: call @xhlo_fft2(%[[IN]], %{{.*}}) : (memref<65536xcomplex<f32>>, memref<65536xcomplex<f32>>) -> ()
// CHECK: stablehlo.reverse %{{.*}}, dims = [0] : tensor<65537xf32>
// CHECK: stablehlo.complex %{{.*}}, %{{.*}} : tensor<65537xcomplex<f32>>
// CHECK-NOT: stablehlo.fft
// CHECK: func.func private @xhlo_fft0
// CHECK: } {xhlo.parallel_loop
// CHECK: func.func private @xhlo_fft1
// CHECK: } {xhlo.parallel_loop
// CHECK: func.func private @xhlo_fft2(%arg0: memref<65536xcomplex<f32>>, %arg1: memref<65536xcomplex<f32>>)
func.func @long(%x: tensor<131072xcomplex<f32>>) -> tensor<131072xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [131072] : (tensor<131072xcomplex<f32>>) -> tensor<131072xcomplex<f32>>
  return %0 : tensor<131072xcomplex<f32>>
}
func.func @long_real(%x: tensor<131072xf32>) -> tensor<65537xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = RFFT, length = [131072] : (tensor<131072xf32>) -> tensor<65537xcomplex<f32>>
  return %0 : tensor<65537xcomplex<f32>>
}

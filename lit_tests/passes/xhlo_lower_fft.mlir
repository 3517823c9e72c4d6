// RUN: xhlo-opt %s --xhlo-lower-fft --split-input-file --verify-diagnostics | FileCheck %s
// RUN: xhlo-opt %s --xhlo-lower-fft="direct-limit=2" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=SPLIT

// FFT on the last axis: real and imaginary parts times the real and imaginary
// parts of the DFT matrix (four real dot_generals), rebuilt as complex.
// Quarter-turn twiddles are exact: 0, 1 and -1.

// CHECK-LABEL: func.func @fft_1d
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<3x4xcomplex<f32>>
// CHECK: %[[RE:.*]] = stablehlo.real %[[X]] : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
// CHECK: %[[IM:.*]] = stablehlo.imag %[[X]] : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
// CHECK: %[[COS:.*]] = stablehlo.constant dense<{{\[}}[1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], [1.000000e+00, 0.000000e+00, -1.000000e+00, 0.000000e+00], [1.000000e+00, -1.000000e+00, 1.000000e+00, -1.000000e+00], [1.000000e+00, 0.000000e+00, -1.000000e+00, 0.000000e+00]]> : tensor<4x4xf32>
// CHECK: %[[SIN:.*]] = stablehlo.constant dense<{{\[}}[-0.000000e+00, -0.000000e+00, -0.000000e+00, -0.000000e+00], [-0.000000e+00, -1.000000e+00, -0.000000e+00, 1.000000e+00], [-0.000000e+00, -0.000000e+00, -0.000000e+00, -0.000000e+00], [-0.000000e+00, 1.000000e+00, -0.000000e+00, -1.000000e+00]]> : tensor<4x4xf32>
// CHECK: %[[RR:.*]] = stablehlo.dot_general %[[RE]], %[[COS]], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
// CHECK: %[[RI:.*]] = stablehlo.dot_general %[[RE]], %[[SIN]], contracting_dims = [1] x [0]
// CHECK: %[[IS:.*]] = stablehlo.dot_general %[[IM]], %[[SIN]], contracting_dims = [1] x [0]
// CHECK: %[[OUT_RE:.*]] = stablehlo.subtract %[[RR]], %[[IS]] : tensor<3x4xf32>
// CHECK: %[[IC:.*]] = stablehlo.dot_general %[[IM]], %[[COS]], contracting_dims = [1] x [0]
// CHECK: %[[OUT_IM:.*]] = stablehlo.add %[[RI]], %[[IC]] : tensor<3x4xf32>
// CHECK: %[[OUT:.*]] = stablehlo.complex %[[OUT_RE]], %[[OUT_IM]] : tensor<3x4xcomplex<f32>>
// CHECK: return %[[OUT]]
// CHECK-NOT: stablehlo.fft
func.func @fft_1d(%x: tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [4] : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
  return %0 : tensor<3x4xcomplex<f32>>
}

// -----

// IFFT over two axes: contracting the outer transformed axis appends its
// result last, so doing it twice restores the order without transposes. The
// inverse matrices carry the 1/n scale.

// CHECK-LABEL: func.func @ifft_2d
// CHECK: %[[COS3:.*]] = stablehlo.constant dense<{{\[}}[0.33333333333333331, {{.*}} : tensor<3x3xf64>
// CHECK: %[[A:.*]] = stablehlo.dot_general %{{.*}}, %[[COS3]], contracting_dims = [1] x [0] : (tensor<2x3x4xf64>, tensor<3x3xf64>) -> tensor<2x4x3xf64>
// CHECK: %[[COS4:.*]] = stablehlo.constant dense<{{\[}}[2.500000e-01, {{.*}} : tensor<4x4xf64>
// CHECK: stablehlo.dot_general %{{.*}}, %[[COS4]], contracting_dims = [1] x [0] : (tensor<2x4x3xf64>, tensor<4x4xf64>) -> tensor<2x3x4xf64>
// CHECK-NOT: stablehlo.transpose
// CHECK: stablehlo.complex {{.*}} : tensor<2x3x4xcomplex<f64>>
func.func @ifft_2d(%x: tensor<2x3x4xcomplex<f64>>) -> tensor<2x3x4xcomplex<f64>> {
  %0 = stablehlo.fft %x, type = IFFT, length = [3, 4] : (tensor<2x3x4xcomplex<f64>>) -> tensor<2x3x4xcomplex<f64>>
  return %0 : tensor<2x3x4xcomplex<f64>>
}

// -----

// RFFT: the real input is transformed on its last axis first with the
// n//2+1 = 5 kept columns (two dots, no imaginary input), then the outer axis,
// which leads: its (transposed) DFT matrix is the left operand, one product
// over the whole tensor, and no transpose is needed.

// CHECK-LABEL: func.func @rfft_2d
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<3x8xf32>
// CHECK: %[[RE:.*]] = stablehlo.dot_general %[[X]], %{{.*}}, contracting_dims = [1] x [0] : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
// CHECK: %[[IM:.*]] = stablehlo.dot_general %[[X]], %{{.*}}, contracting_dims = [1] x [0] : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
// CHECK: stablehlo.dot_general %{{.*}}, %[[RE]], contracting_dims = [1] x [0] : (tensor<3x3xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NOT: stablehlo.transpose
// CHECK: %[[C:.*]] = stablehlo.complex %{{.*}}, %{{.*}} : tensor<3x5xcomplex<f32>>
// CHECK: return %[[C]]
func.func @rfft_2d(%x: tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = RFFT, length = [3, 8] : (tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>>
  return %0 : tensor<3x5xcomplex<f32>>
}

// -----

// IRFFT: n = 5 real outputs from 3 terms; terms 1 and 2 count twice (their
// mirror images), the DC term once and only by its real part.

// CHECK-LABEL: func.func @irfft_1d
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<2x3xcomplex<f32>>
// CHECK: %[[RE:.*]] = stablehlo.real %[[X]]
// CHECK: %[[IM:.*]] = stablehlo.imag %[[X]]
// CHECK: %[[A:.*]] = stablehlo.constant dense<{{\[}}[2.000000e-01, 2.000000e-01, 2.000000e-01, 2.000000e-01, 2.000000e-01], [4.000000e-01, {{.*}} : tensor<3x5xf32>
// CHECK: %[[FROM_RE:.*]] = stablehlo.dot_general %[[RE]], %[[A]], contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
// CHECK: %[[B:.*]] = stablehlo.constant dense<{{\[}}[0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], {{.*}} : tensor<3x5xf32>
// CHECK: %[[FROM_IM:.*]] = stablehlo.dot_general %[[IM]], %[[B]], contracting_dims = [1] x [0]
// CHECK: %[[OUT:.*]] = stablehlo.add %[[FROM_RE]], %[[FROM_IM]] : tensor<2x5xf32>
// CHECK: return %[[OUT]]
func.func @irfft_1d(%x: tensor<2x3xcomplex<f32>>) -> tensor<2x5xf32> {
  %0 = stablehlo.fft %x, type = IRFFT, length = [5] : (tensor<2x3xcomplex<f32>>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// JAX's transform of another axis than the last: transpose, fft, transpose. The
// transform reads the untransposed parts (its axis leads there) and ends in
// the final order, so no transpose of complex data is left.

// CHECK-LABEL: func.func @fft_axis0
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xcomplex<f32>>
// CHECK-NOT: stablehlo.transpose
// CHECK: %[[RE:.*]] = stablehlo.real %[[X]] : (tensor<4x3xcomplex<f32>>) -> tensor<4x3xf32>
// CHECK: stablehlo.dot_general %{{.*}}, %[[RE]], contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NOT: stablehlo.transpose
// CHECK: %[[C:.*]] = stablehlo.complex %{{.*}}, %{{.*}} : tensor<4x3xcomplex<f32>>
// CHECK: return %[[C]]
func.func @fft_axis0(%x: tensor<4x3xcomplex<f32>>) -> tensor<4x3xcomplex<f32>> {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x3xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
  %f = stablehlo.fft %t, type = FFT, length = [4] : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
  %b = stablehlo.transpose %f, dims = [1, 0] : (tensor<3x4xcomplex<f32>>) -> tensor<4x3xcomplex<f32>>
  return %b : tensor<4x3xcomplex<f32>>
}

// -----

// Nothing to transform: an empty constant.

// CHECK-LABEL: func.func @empty
// CHECK-NEXT: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4x0x32xf32>
// CHECK-NEXT: return %[[Z]]
func.func @empty(%x: tensor<4x0x17xcomplex<f32>>) -> tensor<4x0x32xf32> {
  %0 = stablehlo.fft %x, type = IRFFT, length = [32] : (tensor<4x0x17xcomplex<f32>>) -> tensor<4x0x32xf32>
  return %0 : tensor<4x0x32xf32>
}

// -----

// Past direct-limit a composite length n = n1 * n2 is split: reshape to
// [n1, n2], length-n1 DFTs on the leading dim (the transposed DFT matrix on the
// left), twiddles exp(-2 pi i k1 j2 / n), a swap of the two leading dims,
// length-n2 DFTs, and [k2, k1] -> k1 + n1 * k2 by a reshape.

// CHECK-LABEL: func.func @split
// CHECK: tensor<6x6xf32>
// SPLIT-LABEL: func.func @split
// SPLIT-NOT: tensor<6x6xf32>
// SPLIT: %[[RE:.*]] = stablehlo.reshape %{{.*}} : (tensor<6xf32>) -> tensor<2x3xf32>
// SPLIT: stablehlo.dot_general %{{.*}}, %[[RE]], contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// SPLIT: %[[TW:.*]] = stablehlo.constant dense<{{\[}}[1.000000e+00, 1.000000e+00, 1.000000e+00], [1.000000e+00, 5.000000e-01, -5.000000e-01]]> : tensor<2x3xf32>
// SPLIT: stablehlo.multiply %{{.*}}, %{{.*}} : tensor<2x3xf32>
// SPLIT: %[[T:.*]] = stablehlo.transpose %{{.*}}, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
// SPLIT: stablehlo.dot_general %{{.*}}, %[[T]], contracting_dims = [1] x [0] : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
// SPLIT: stablehlo.reshape %{{.*}} : (tensor<3x2xf32>) -> tensor<6xf32>
// SPLIT: stablehlo.complex {{.*}} : tensor<6xcomplex<f32>>
func.func @split(%x: tensor<6xcomplex<f32>>) -> tensor<6xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [6] : (tensor<6xcomplex<f32>>) -> tensor<6xcomplex<f32>>
  return %0 : tensor<6xcomplex<f32>>
}

// -----

func.func @length_mismatch(%x: tensor<4x6xcomplex<f32>>) -> tensor<4x6xcomplex<f32>> {
  // expected-error@+1 {{xhlo-lower-fft: operand dims [6] do not match FFT with fft_length [5]}}
  %0 = stablehlo.fft %x, type = FFT, length = [5] : (tensor<4x6xcomplex<f32>>) -> tensor<4x6xcomplex<f32>>
  return %0 : tensor<4x6xcomplex<f32>>
}

// -----

func.func @dynamic(%x: tensor<?x4xcomplex<f32>>) -> tensor<?x4xcomplex<f32>> {
  // expected-error@+1 {{xhlo-lower-fft: 'stablehlo.fft' needs static shapes, got tensor<?x4xcomplex<f32>>}}
  %0 = stablehlo.fft %x, type = FFT, length = [4] : (tensor<?x4xcomplex<f32>>) -> tensor<?x4xcomplex<f32>>
  return %0 : tensor<?x4xcomplex<f32>>
}

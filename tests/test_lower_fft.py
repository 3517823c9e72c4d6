"""stablehlo.fft, checked against numpy.fft in float64, both ways xhlo computes it:
calling numpy's pocketfft (``xhlo-fft-to-pocketfft``, the default) and in
StableHLO (``xhlo-lower-fft``, the fallback and the path of long single lines).

Tolerances: the transform is separable, each axis a length-n dot product whose
rounding error, relative to the largest output of random data, is typically
about sqrt(n) * eps (eps of the element type). We allow ``8 * sqrt(N) * eps``
with N = prod(fft_length), which covers the sum of the per-axis errors with
margin (measured: about 1-2 eps), while a wrong twiddle, sign, scale or axis
order gives errors of order 1.
"""

from __future__ import annotations

import numpy as np
import pytest

import xhlo
from xhlo.passes.lower_fft import dft_matrix, irfft_matrices

COMPLEX = {np.complex64: "complex<f32>", np.complex128: "complex<f64>"}
REAL = {np.complex64: np.float32, np.complex128: np.float64}
REAL_NAME = {np.float32: "f32", np.float64: "f64"}


def tensor(shape, elem: str) -> str:
    return "tensor<" + "".join(f"{n}x" for n in shape) + elem + ">"


def fft_module(kind: str, in_shape, in_elem: str, out_shape, out_elem: str, lengths) -> str:
    t_in, t_out = tensor(in_shape, in_elem), tensor(out_shape, out_elem)
    return f"""func.func @main(%x: {t_in}) -> {t_out} {{
  %0 = stablehlo.fft %x, type = {kind}, length = [{", ".join(map(str, lengths))}] : ({t_in}) -> {t_out}
  return %0 : {t_out}
}}"""


def random_complex(shape, dtype, rng):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def assert_close(got, expected, lengths, dtype):
    """Error relative to the largest output, within 8 * sqrt(N) * eps (see module docstring)."""
    assert got.dtype == dtype
    assert got.shape == expected.shape
    eps = np.finfo(dtype).eps
    bound = 8 * np.sqrt(np.prod(lengths)) * eps
    error = np.max(np.abs(got - expected)) / np.max(np.abs(expected))
    assert error <= bound, f"relative error {error:.3g} > {bound:.3g}"


LOWERINGS = ["pocketfft", "stablehlo"]


def compile_fft(src: str, lowering: str):
    """``src`` compiled with its transforms calling pocketfft or lowered by xhlo-lower-fft first."""
    if lowering == "stablehlo":
        src = lower_with(src, "builtin.module(xhlo-lower-fft)")
    exe = xhlo.compile(src)
    assert ("xhlo_pocketfft_lines" in exe.ir("xhlo-stablehlo-prepare")) == (lowering == "pocketfft")
    return exe


# 1, 2 and 3 transformed axes; odd, even and prime lengths; one or no batch dim.
CASES = [
    ((16,), 1),
    ((3, 7), 1),
    ((2, 5, 6), 2),
    ((4, 8), 2),
    ((2, 3, 4, 5), 3),
    ((6, 5, 4), 3),
]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape, axes_count", CASES)
@pytest.mark.parametrize("kind", ["FFT", "IFFT"])
@pytest.mark.parametrize("lowering", LOWERINGS)
def test_complex_to_complex(kind, shape, axes_count, dtype, lowering):
    rng = np.random.default_rng(len(shape) * 10 + axes_count)
    x = random_complex(shape, dtype, rng)
    lengths = list(shape[-axes_count:])
    axes = list(range(-axes_count, 0))
    src = fft_module(kind, shape, COMPLEX[dtype], shape, COMPLEX[dtype], lengths)
    got = compile_fft(src, lowering)(x)
    oracle = np.fft.fftn if kind == "FFT" else np.fft.ifftn
    assert_close(got, oracle(x.astype(np.complex128), axes=axes), lengths, dtype)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape, axes_count", CASES)
@pytest.mark.parametrize("lowering", LOWERINGS)
def test_rfft(shape, axes_count, dtype, lowering):
    rng = np.random.default_rng(7 + axes_count)
    real = REAL[dtype]
    x = rng.standard_normal(shape).astype(real)
    lengths = list(shape[-axes_count:])
    out_shape = list(shape[:-1]) + [shape[-1] // 2 + 1]
    src = fft_module("RFFT", shape, REAL_NAME[real], out_shape, COMPLEX[dtype], lengths)
    got = compile_fft(src, lowering)(x)
    expected = np.fft.rfftn(x.astype(np.float64), axes=list(range(-axes_count, 0)))
    assert_close(got, expected, lengths, dtype)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape, axes_count", CASES)
@pytest.mark.parametrize("lowering", LOWERINGS)
def test_irfft(shape, axes_count, dtype, lowering):
    """Arbitrary (non-Hermitian) input: numpy's convention, imag of DC/Nyquist ignored."""
    rng = np.random.default_rng(3 + axes_count)
    real = REAL[dtype]
    lengths = list(shape[-axes_count:])
    in_shape = list(shape[:-1]) + [shape[-1] // 2 + 1]
    x = random_complex(in_shape, dtype, rng)
    src = fft_module("IRFFT", in_shape, COMPLEX[dtype], shape, REAL_NAME[real], lengths)
    got = compile_fft(src, lowering)(x)
    expected = np.fft.irfftn(x.astype(np.complex128), s=lengths, axes=list(range(-axes_count, 0)))
    assert_close(got, expected, lengths, real)


@pytest.mark.parametrize("n", [7, 8])
def test_irfft_inverts_rfft(n):
    """IRFFT(RFFT(x)) == x for odd and even lengths (the Nyquist term appears once)."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal((3, n))
    m = n // 2 + 1
    src = f"""func.func @main(%x: tensor<3x{n}xf64>) -> tensor<3x{n}xf64> {{
  %0 = stablehlo.fft %x, type = RFFT, length = [{n}] : (tensor<3x{n}xf64>) -> tensor<3x{m}xcomplex<f64>>
  %1 = stablehlo.fft %0, type = IRFFT, length = [{n}] : (tensor<3x{m}xcomplex<f64>>) -> tensor<3x{n}xf64>
  return %1 : tensor<3x{n}xf64>
}}"""
    np.testing.assert_allclose(xhlo.compile(src)(x), x, rtol=0, atol=1e-14)


def test_unit_impulse_gives_twiddle_row():
    """FFT of e_1 is exp(-2 pi i k / n): checks sign and orientation of the matrix."""
    n = 5
    x = np.zeros(n, np.complex128)
    x[1] = 1
    got = xhlo.compile(fft_module("FFT", (n,), "complex<f64>", (n,), "complex<f64>", [n]))(x)
    np.testing.assert_allclose(got, np.exp(-2j * np.pi * np.arange(n) / n), rtol=0, atol=1e-15)


def test_zero_size_batch():
    """The conformance shape 14x15x0x17: nothing to transform, an empty result."""
    src = fft_module("IRFFT", (2, 0, 5), "complex<f32>", (2, 0, 8), "f32", [8])
    got = xhlo.compile(src)(np.zeros((2, 0, 5), np.complex64))
    assert got.shape == (2, 0, 8) and got.dtype == np.float32


def test_matrices_in_float64():
    """The numpy matrices themselves reproduce numpy.fft in float64."""
    rng = np.random.default_rng(0)
    x = random_complex((6,), np.complex128, rng)
    np.testing.assert_allclose(x @ dft_matrix(6), np.fft.fft(x), atol=1e-13)
    np.testing.assert_allclose(x @ dft_matrix(6, inverse=True), np.fft.ifft(x), atol=1e-14)
    for n in (6, 7):
        half = x[: n // 2 + 1]
        cos_part, sin_part = irfft_matrices(n)
        np.testing.assert_allclose(
            half.real @ cos_part + half.imag @ sin_part, np.fft.irfft(half, n), atol=1e-14
        )


def test_lowered_to_dot_general():
    src = fft_module("FFT", (4,), "complex<f32>", (4,), "complex<f32>", [4])
    lowered = lower_with(src, "builtin.module(xhlo-lower-fft)")
    assert "stablehlo.fft" not in lowered
    assert "stablehlo.dot_general" in lowered


# -- Cooley-Tukey splitting of long axes -------------------------------------------------


def lower_with(src: str, pipeline: str) -> str:
    """``src`` after ``pipeline`` (so a pass can run with non-default options)."""
    from xhlo._mlir import ir, new_context
    from xhlo.pipeline import build_pass_manager

    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(src)
        build_pass_manager(pipeline).run(module.operation)
        return str(module)


def transform_case(kind: str, shape, axes_count: int, dtype, rng):
    """(input, module, numpy's float64 result, lengths) of one transform of the last
    ``axes_count`` dims of ``shape`` (the real signal's shape for RFFT/IRFFT)."""
    lengths = list(shape[-axes_count:])
    axes = list(range(-axes_count, 0))
    half = list(shape[:-1]) + [shape[-1] // 2 + 1]
    real = REAL[dtype]
    complex_name, real_name = COMPLEX[dtype], REAL_NAME[real]
    if kind in ("FFT", "IFFT"):
        x = random_complex(shape, dtype, rng)
        src = fft_module(kind, shape, complex_name, shape, complex_name, lengths)
        expected = (np.fft.fftn if kind == "FFT" else np.fft.ifftn)(x.astype(np.complex128), axes=axes)
    elif kind == "RFFT":
        x = rng.standard_normal(shape).astype(real)
        src = fft_module(kind, shape, real_name, half, complex_name, lengths)
        expected = np.fft.rfftn(x.astype(np.float64), axes=axes)
    else:
        x = random_complex(half, dtype, rng)
        src = fft_module(kind, half, complex_name, shape, real_name, lengths)
        expected = np.fft.irfftn(x.astype(np.complex128), s=lengths, axes=axes)
    return x, src, expected, lengths


@pytest.mark.parametrize("direct_limit", [2, 4])
@pytest.mark.parametrize(
    "kind, shape, axes_count",
    [
        ("FFT", (3, 12), 1),
        ("IFFT", (8,), 1),
        ("FFT", (4, 6, 9), 3),
        ("RFFT", (2, 12), 1),
        ("RFFT", (6, 8), 2),
        ("IRFFT", (2, 12), 1),
        ("IRFFT", (3, 15), 1),
        ("IRFFT", (4, 6, 8), 2),
    ],
)
def test_split_axes(kind, shape, axes_count, direct_limit):
    """Small direct_limit forces the split path (recursively) on small shapes."""
    rng = np.random.default_rng(direct_limit + len(shape))
    x, src, expected, lengths = transform_case(kind, shape, axes_count, np.complex128, rng)
    lowered = lower_with(src, f"builtin.module(xhlo-lower-fft{{direct-limit={direct_limit}}})")
    assert "stablehlo.fft" not in lowered and "stablehlo.transpose" in lowered
    got = xhlo.compile(lowered)(x)
    assert_close(got, expected, lengths, got.dtype)


@pytest.mark.parametrize("n", [256, 200])
def test_long_axis_default_split(n):
    """n > 64 composite: split by default; constants stay O(n) instead of O(n^2)."""
    rng = np.random.default_rng(n)
    x = random_complex((2, n), np.complex64, rng)
    src = fft_module("FFT", (2, n), "complex<f32>", (2, n), "complex<f32>", [n])
    exe = compile_fft(src, "stablehlo")
    assert f"tensor<{n}x{n}xf32>" not in exe.ir("xhlo-stablehlo-prepare")
    assert_close(exe(x), np.fft.fft(x.astype(np.complex128)), [n], np.complex64)
    m = n // 2 + 1
    half = random_complex((2, m), np.complex64, rng)
    src = fft_module("IRFFT", (2, m), "complex<f32>", (2, n), "f32", [n])
    assert_close(
        compile_fft(src, "stablehlo")(half), np.fft.irfft(half.astype(np.complex128), n), [n], np.float32
    )


LONG_CASES = [
    ("FFT", (3, 1024), 1),  # last axis split in place (n1 = 32)
    ("FFT", (4096,), 1),  # rank 1: the axis is both first and last
    ("IFFT", (5, 1000), 1),  # n1 = 25: moved to the front
    ("RFFT", (130, 128), 2),  # rows and columns at the front
    ("IFFT", (2, 96, 128), 2),
    ("IRFFT", (6, 128, 128), 2),
    ("IRFFT", (3, 1000), 1),
    ("FFT", (1 << 17,), 1),  # its twiddle table is a product of two smaller ones
    ("RFFT", (3, 512), 1),  # split in place, 257 = 16 rows of 16 outputs and one more
    ("RFFT", (1 << 17,), 1),  # its untangling table is a product of two smaller ones
    ("IRFFT", (1 << 17,), 1),  # ... and so is its tangling table
]


@pytest.mark.parametrize("lowering", LOWERINGS)
@pytest.mark.parametrize("kind, shape, axes_count", LONG_CASES)
def test_long_axes_each_strategy(kind, shape, axes_count, lowering):
    """Lengths past direct-limit, in the layouts that pick each strategy, against numpy."""
    rng = np.random.default_rng(sum(shape))
    x, src, expected, lengths = transform_case(kind, shape, axes_count, np.complex64, rng)
    got = compile_fft(src, lowering)(x)
    assert_close(got, expected, lengths, got.dtype)


TRANSPOSED = """func.func @main(%x: tensor<64x4x6xf32>, %y: tensor<512x6xcomplex<f32>>)
    -> (tensor<33x4x6xcomplex<f32>>, tensor<512x6xcomplex<f32>>, tensor<4x6x64xf32>) {
  %xt = stablehlo.transpose %x, dims = [1, 2, 0] : (tensor<64x4x6xf32>) -> tensor<4x6x64xf32>
  %r = stablehlo.fft %xt, type = RFFT, length = [64] : (tensor<4x6x64xf32>) -> tensor<4x6x33xcomplex<f32>>
  %rt = stablehlo.transpose %r, dims = [2, 0, 1] : (tensor<4x6x33xcomplex<f32>>) -> tensor<33x4x6xcomplex<f32>>
  %yt = stablehlo.transpose %y, dims = [1, 0] : (tensor<512x6xcomplex<f32>>) -> tensor<6x512xcomplex<f32>>
  %f = stablehlo.fft %yt, type = FFT, length = [512] : (tensor<6x512xcomplex<f32>>) -> tensor<6x512xcomplex<f32>>
  %ft = stablehlo.transpose %f, dims = [1, 0] : (tensor<6x512xcomplex<f32>>) -> tensor<512x6xcomplex<f32>>
  return %rt, %ft, %xt : tensor<33x4x6xcomplex<f32>>, tensor<512x6xcomplex<f32>>, tensor<4x6x64xf32>
}"""


@pytest.mark.parametrize("lowering", LOWERINGS)
def test_transposes_around_the_transform_are_folded(lowering):
    """JAX transforms another axis than the last as transpose, fft, transpose: the
    transform starts from the untransposed data and ends in the final order, so no
    transpose of complex data is left (the input transpose stays for its other use)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 4, 6)).astype(np.float32)
    y = random_complex((512, 6), np.complex64, rng)
    exe = compile_fft(TRANSPOSED, lowering)
    spectrum, along_rows, xt = exe(x, y)
    assert_close(spectrum, np.fft.rfft(x.astype(np.float64), axis=0), [64], np.complex64)
    assert_close(along_rows, np.fft.fft(y.astype(np.complex128), axis=0), [512], np.complex64)
    np.testing.assert_array_equal(xt, x.transpose(1, 2, 0))
    prepared = exe.ir("xhlo-stablehlo-prepare")
    transposes = [line for line in prepared.splitlines() if "stablehlo.transpose" in line]
    assert not any("complex" in line for line in transposes), transposes


def test_a_transform_feeding_another_leaves_the_transpose_between_to_it():
    """fft(rfft(x), axis=0): the transpose between the two is the second one's to fold;
    none of the whole [128, 49] array is left."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((128, 96)).astype(np.float32)
    src = """func.func @main(%x: tensor<128x96xf32>) -> tensor<128x49xcomplex<f32>> {
  %r = stablehlo.fft %x, type = RFFT, length = [96] : (tensor<128x96xf32>) -> tensor<128x49xcomplex<f32>>
  %t = stablehlo.transpose %r, dims = [1, 0] : (tensor<128x49xcomplex<f32>>) -> tensor<49x128xcomplex<f32>>
  %f = stablehlo.fft %t, type = FFT, length = [128] : (tensor<49x128xcomplex<f32>>) -> tensor<49x128xcomplex<f32>>
  %b = stablehlo.transpose %f, dims = [1, 0] : (tensor<49x128xcomplex<f32>>) -> tensor<128x49xcomplex<f32>>
  return %b : tensor<128x49xcomplex<f32>>
}"""
    exe = compile_fft(src, "stablehlo")
    assert_close(exe(x), np.fft.rfft2(x.astype(np.float64)), [128, 96], np.complex64)
    transposes = [line for line in exe.ir("xhlo-stablehlo-prepare").splitlines() if "stablehlo.transpose" in line]
    assert transposes  # the splits' own swaps of two dims
    assert not any(shape in line for line in transposes for shape in ("128x49", "49x128", "complex")), transposes

"""xhlo-lower-direct-convolutions: convolutions of up to 128 channels, checked against JAX.

Each case is exported with ``jax.export`` as JAX emits it (padding, strides,
dilations) and compared with ``jax.jit``; the IR shows that the convolution
took the direct loops and not an im2col matrix for BLAS.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

jax = pytest.importorskip("jax")
from jax import export

RNG = np.random.default_rng(0)


def _conv(strides, padding, dilation=(1, 1)):
    def conv(image, kernel):
        return jax.lax.conv_general_dilated(image, kernel, strides, padding, rhs_dilation=dilation,
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return conv


# image shape, kernel shape, strides, padding, dilation
CASES = {
    "rgb stem 7x7 stride 2": ((2, 64, 64, 3), (7, 7, 3, 64), (2, 2), "SAME", (1, 1)),
    "one channel, 16 features": ((3, 12, 13, 1), (3, 3, 1, 16), (1, 1), "VALID", (1, 1)),
    "80 features: 4 vectors and 1": ((2, 20, 21, 3), (3, 3, 3, 80), (1, 2), "SAME", (2, 1)),
    "48 features, uneven strides, explicit padding": ((1, 30, 31, 4), (5, 3, 4, 48), (2, 1),
                                                      ((1, 2), (0, 3)), (1, 1)),
    "rows not a multiple of the block": ((2, 15, 15, 2), (3, 3, 2, 32), (1, 1), "SAME", (1, 1)),
    "64 channels (a loop over them)": ((2, 14, 14, 64), (3, 3, 64, 64), (1, 1), "SAME", (1, 1)),
    # vectors of neighbouring pixels: rows of 100 = a block of 64, two vectors, 4 single pixels
    "one channel, one feature": ((2, 60, 100, 1), (3, 5, 1, 1), (2, 1), "SAME", (1, 2)),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_jax(name):
    shape, kernel_shape, strides, padding, dilation = CASES[name]
    image = RNG.standard_normal(shape).astype(np.float32)
    kernel = RNG.standard_normal(kernel_shape).astype(np.float32)
    conv = _conv(strides, padding, dilation)
    exe = xhlo.compile(export.export(jax.jit(conv), platforms=["cpu"])(image, kernel))
    assert "xhlo.direct_conv" in exe.ir("xhlo-fuse-and-vectorize")
    assert "linalg.conv_2d_nhwc_hwcf" not in exe.ir("xhlo-lower-to-loops")
    if name.startswith("rgb stem"):  # enough work for the thread pool
        assert "xhlo_parallel_for" in exe.ir("xhlo-lower-to-loops")
    expected = np.asarray(jax.jit(conv)(image, kernel))
    got = exe(image, kernel)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


# accumulators, pixels a block: the defaults on AVX-512 and on AVX2
HOSTS = {"avx512": (24, 4), "avx2": (6, 6)}


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("name", ["80 features: 4 vectors and 1", "64 channels (a loop over them)",
                                  "rows not a multiple of the block"])
def test_blocks_of_either_host(monkeypatch, host, name):
    """Both hosts' blocks on this one: 4 vectors x 4 pixels, or chunks of 1 vector x 6 pixels."""
    from xhlo.passes.lower_direct_convolutions import LowerDirectConvolutions

    accumulators, max_pixels = HOSTS[host]
    run = LowerDirectConvolutions.run

    def run_as_host(self, module):  # the pass manager keeps its instance: set back after
        defaults = self.accumulators, self.max_pixels
        object.__setattr__(self, "accumulators", accumulators)  # a frozen dataclass
        object.__setattr__(self, "max_pixels", max_pixels)
        try:
            run(self, module)
        finally:
            object.__setattr__(self, "accumulators", defaults[0])
            object.__setattr__(self, "max_pixels", defaults[1])

    monkeypatch.setattr(LowerDirectConvolutions, "run", run_as_host)
    shape, kernel_shape, strides, padding, dilation = CASES[name]
    image = RNG.standard_normal(shape).astype(np.float32)
    kernel = RNG.standard_normal(kernel_shape).astype(np.float32)
    conv = _conv(strides, padding, dilation)
    exe = xhlo.compile(export.export(jax.jit(conv), platforms=["cpu"])(image, kernel), cache=False)
    expected = np.asarray(jax.jit(conv)(image, kernel))
    np.testing.assert_allclose(exe(image, kernel), expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_vectors_per_block():
    """The most pixels a block, then the most vectors of features."""
    from xhlo.passes.lower_direct_convolutions import vectors_per_block

    assert vectors_per_block(4, 56, 24, 4) == 4  # AVX-512: 4 x 4
    assert vectors_per_block(8, 56, 24, 4) == 4  # 128 features: two chunks of 4 vectors
    assert vectors_per_block(4, 56, 6, 6) == 1  # AVX2: 1 x 6, not 4 x 1
    assert vectors_per_block(2, 56, 6, 6) == 1
    assert vectors_per_block(4, 1, 6, 6) == 4  # one pixel a row: every feature at once


def test_many_input_channels_keep_im2col():
    """256 input channels: the im2col product runs on BLAS."""
    image = RNG.standard_normal((1, 10, 10, 256)).astype(np.float32)
    kernel = RNG.standard_normal((3, 3, 256, 32)).astype(np.float32)
    conv = _conv((1, 1), "VALID")
    exe = xhlo.compile(export.export(jax.jit(conv), platforms=["cpu"])(image, kernel))
    assert "xhlo.direct_conv" not in exe.ir("xhlo-fuse-and-vectorize")
    expected = np.asarray(jax.jit(conv)(image, kernel))
    # sums of 2304 products of ~N(0, 1): f32 rounding of either order is ~1e-6 of the largest output
    np.testing.assert_allclose(exe(image, kernel), expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_gradients_of_a_stem_convolution():
    """The gradients' convolutions (other layouts, canonicalized) beside the forward one."""
    image = RNG.standard_normal((2, 32, 32, 3)).astype(np.float32)
    kernel = RNG.standard_normal((7, 7, 3, 32)).astype(np.float32) / 8
    conv = _conv((2, 2), "SAME")

    def loss(x, k):
        return (conv(x, k) ** 2).sum()

    grad = jax.grad(loss, argnums=(0, 1))
    exe = xhlo.compile(export.export(jax.jit(grad), platforms=["cpu"])(image, kernel))
    for got, expected in zip(exe(image, kernel), jax.jit(grad)(image, kernel)):
        expected = np.asarray(expected)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_numpy_style_convolve(mode):
    """jnp.convolve: one channel, one feature, one long row, against numpy in float64."""
    import jax.numpy as jnp

    signal = RNG.standard_normal(5000).astype(np.float32)
    taps = RNG.standard_normal(61).astype(np.float32)
    fn = jax.jit(lambda a, k: jnp.convolve(a, k, mode=mode))
    exe = xhlo.compile(export.export(fn, platforms=["cpu"])(signal, taps))
    assert "xhlo.direct_conv" in exe.ir("xhlo-fuse-and-vectorize")
    expected = np.convolve(signal.astype(np.float64), taps.astype(np.float64), mode=mode)
    np.testing.assert_allclose(exe(signal, taps), expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_one_channel_one_feature_added_to_an_output():
    """A linalg convolution into a given output (no zero fill): the sums start from it,
    for the blocks, the single vectors and the last pixels alike (rows of 116 = 64 + 48 + 4)."""
    src = """func.func @main(%img: tensor<2x40x120x1xf32>, %f: tensor<3x5x1x1xf32>, %init: tensor<2x38x116x1xf32>)
    -> tensor<2x38x116x1xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%img, %f : tensor<2x40x120x1xf32>, tensor<3x5x1x1xf32>) outs(%init : tensor<2x38x116x1xf32>)
    -> tensor<2x38x116x1xf32>
  return %0 : tensor<2x38x116x1xf32>
}"""
    image = RNG.standard_normal((2, 40, 120, 1)).astype(np.float32)
    kernel = RNG.standard_normal((3, 5, 1, 1)).astype(np.float32)
    init = RNG.standard_normal((2, 38, 116, 1)).astype(np.float32)
    exe = xhlo.compile(src, cache=False)
    assert "xhlo.direct_conv" in exe.ir("xhlo-fuse-and-vectorize")
    expected = init.astype(np.float64)
    for i in range(3):
        for j in range(5):
            expected[..., 0] += image[:, i:i + 38, j:j + 116, 0] * kernel[i, j, 0, 0]
    np.testing.assert_allclose(exe(image, kernel, init), expected, rtol=1e-5, atol=1e-5)

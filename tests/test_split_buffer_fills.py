"""xhlo-split-buffer-fills: the fills and copies bufferization writes (a padded input)
run as loops over slices, on the thread pool when large. Oracles: numpy and JAX."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from jax import export, lax


def _compile(fn, *args) -> xhlo.Executable:
    return xhlo.compile(export.export(jax.jit(fn), platforms=["cpu"])(*args), keep_ir=True)


@pytest.mark.parametrize("shape,pads", [
    ((8, 40, 40, 48), ((0, 0), (1, 2), (3, 1), (0, 0))),
    ((1, 64, 64, 32), ((0, 0), (1, 1), (1, 1), (0, 0))),  # the outer dimension is 1: split the next
    ((300000,), ((5, 7),)),
])
def test_constant_pads_match_numpy(shape, pads):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    exe = _compile(lambda x: jnp.pad(x, pads, constant_values=1.5) * 2.0, x)
    np.testing.assert_array_equal(exe(x), np.pad(x, pads, constant_values=1.5) * 2.0)


def test_same_convolution_pads_on_the_pool():
    """A 3x3 "SAME" convolution: its padded input is filled and copied in slices that the
    thread pool runs (parallel bodies besides the convolution's), and matches JAX."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 56, 56, 16)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 16, 16)) * 0.1).astype(np.float32)

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    exe = _compile(conv, x, w)
    np.testing.assert_allclose(exe(x, w), np.asarray(jax.jit(conv)(x, w)), rtol=1e-4, atol=1e-4)
    loops = exe.ir("xhlo-lower-to-loops")
    assert loops.count("call @xhlo_parallel_for") >= 3  # fill, copy, convolution


@pytest.mark.parametrize("dtype", [np.int8, np.bool_, np.float16, np.complex64, np.uint16])
@pytest.mark.parametrize("shape", [(3, 40, 50, 7), (2, 5, 70)])  # split into slices / whole ops
def test_fills_and_copies_on_flat_views(dtype, shape):
    """Pads of every element width: the fill runs on flat views, the copy is memcpy of
    contiguous blocks (rows of 50x7 or 70 elements; not for i1, whose bytes are padded),
    and both match numpy."""
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(shape) * 50).astype(dtype)
    pads = [(0, 0)] * (len(shape) - 2) + [(1, 2), (0, 0)]
    fill = np.array(3, dtype)
    exe = _compile(lambda x: jnp.pad(x, pads, constant_values=fill), x)
    np.testing.assert_array_equal(exe(x), np.pad(x, pads, constant_values=fill))
    loops = exe.ir("xhlo-lower-to-loops")
    assert ("memref.copy" in loops) == (dtype != np.bool_)

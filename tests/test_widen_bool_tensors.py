"""xhlo-widen-bool-tensors: masks between linalg ops stored as bytes, so their producers and
readers vectorize. Checked against numpy, with the stage IR showing the i8 mask."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from jax import export


def _compile(fn, *args) -> xhlo.Executable:
    return xhlo.compile(export.export(jax.jit(fn), platforms=["cpu"])(*args))


def test_mask_read_by_several_ops():
    def f(x, y):
        mask = (x > 0) & (y < 0.5)
        return jnp.where(mask, x, 0.0), jnp.where(mask, y, 1.0), mask.sum()

    rng = np.random.default_rng(0)
    x = rng.standard_normal(4099).astype(np.float32)
    y = np.concatenate([[np.nan], rng.standard_normal(4098)]).astype(np.float32)
    exe = _compile(f, x, y)
    mask = (x > 0) & (y < 0.5)
    got = exe(x, y)
    np.testing.assert_array_equal(got[0], np.where(mask, x, 0.0))
    np.testing.assert_array_equal(got[1], np.where(mask, y, 1.0))
    assert int(got[2]) == int(mask.sum())
    vectorized = exe.ir("xhlo-fuse-and-vectorize")
    assert "tensor<4099xi1>" not in vectorized and "tensor<4099xi8>" in vectorized
    assert "vector<16xi8>" in vectorized


def test_mask_through_a_reshape_and_returned_masks():
    def f(x):
        mask = (x > 0.25).reshape(8, 16)
        return jnp.where(mask, 1.0, -1.0), jnp.where(mask, 2, 3), x.reshape(8, 16) > 0.75

    x = np.linspace(-1, 1, 128, dtype=np.float32)
    got = _compile(f, x)(x)
    mask = (x > 0.25).reshape(8, 16)
    np.testing.assert_array_equal(got[0], np.where(mask, 1.0, -1.0))
    np.testing.assert_array_equal(got[1], np.where(mask, 2, 3))
    np.testing.assert_array_equal(got[2], x.reshape(8, 16) > 0.75)

"""xhlo-unroll-strided-transfers: argmax/argmin over the contiguous axis (each vector
lane walks its own row) read the rows with one load per lane, and match numpy."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import xhlo
from jax import export

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("reduce", [jnp.argmax, jnp.argmin])
@pytest.mark.parametrize("shape", [(64, 100), (3, 16, 37), (256, 16)])
def test_arg_reductions_over_the_last_axis_match_numpy(reduce, shape):
    x = RNG.integers(-4, 5, size=shape).astype(np.float32)  # many ties: the first index wins
    x.reshape(-1)[::97] = np.nan  # NaN wins, the first one
    fn = jax.jit(lambda a: reduce(a, axis=-1))
    exe = xhlo.compile(export.export(fn, platforms=["cpu"])(x), keep_ir=True)
    expected = np.argmax(x, axis=-1) if reduce is jnp.argmax else np.argmin(x, axis=-1)
    np.testing.assert_array_equal(exe(x), expected)
    np.testing.assert_array_equal(exe(x), np.asarray(fn(x)))


def test_the_rows_are_read_by_unrolled_loads():
    x = RNG.standard_normal((64, 256)).astype(np.float32)
    fn = jax.jit(lambda a: jnp.argmax(a, axis=-1))
    exe = xhlo.compile(export.export(fn, platforms=["cpu"])(x), keep_ir=True)
    loops = exe.ir("xhlo-lower-to-loops")
    assert "vector.from_elements" in loops
    assert "strided<[256]" in loops
    np.testing.assert_array_equal(exe(x), np.argmax(x, axis=-1))

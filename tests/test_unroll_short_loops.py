"""xhlo-unroll-short-loops: short counted loops over large arrays are unrolled, so
fusion makes their steps one kernel. Checked bitwise against JAX's threefry and
against numpy, with the stage IR showing no loop left."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from jax import export


def _compile(fn, *args) -> xhlo.Executable:
    return xhlo.compile(export.export(jax.jit(fn), platforms=["cpu"])(*args))


def _loops(exe: xhlo.Executable) -> int:
    text = exe.ir("xhlo-stablehlo-to-linalg")
    return text.count("scf.for") + text.count("scf.while")


def test_threefry_rounds_unrolled_and_bitwise_equal():
    def uniform(seed):
        return jax.random.uniform(jax.random.key(seed), (1 << 17,))

    seed = np.uint32(42)
    exe = _compile(uniform, seed)
    np.testing.assert_array_equal(exe(seed), np.asarray(uniform(seed)))
    assert _loops(exe) == 0


def test_fori_loop_reading_its_counter():
    def steps(x):
        return jax.lax.fori_loop(0, 4, lambda i, v: v * 0.5 + i.astype(jnp.float32), x)

    x = np.random.default_rng(0).standard_normal(1 << 16).astype(np.float32)
    expected = x.astype(np.float64)
    for i in range(4):
        expected = expected * 0.5 + i
    exe = _compile(steps, x)
    np.testing.assert_allclose(exe(x), expected, rtol=1e-6, atol=1e-6)
    assert _loops(exe) == 0


def test_small_state_and_long_loops_stay_loops():
    def small(x):
        return jax.lax.fori_loop(0, 4, lambda i, v: v * 0.5 + 1.0, x)

    def long(x):
        return jax.lax.fori_loop(0, 64, lambda i, v: v * 0.5 + 1.0, x)

    x_small = np.ones(16, np.float32)
    x_large = np.ones(1 << 16, np.float32)
    for fn, x, steps in ((small, x_small, 4), (long, x_large, 64)):
        expected = x.astype(np.float64)
        for _ in range(steps):
            expected = expected * 0.5 + 1.0
        exe = _compile(fn, x)
        np.testing.assert_allclose(exe(x), expected, rtol=1e-6)
        assert _loops(exe) > 0

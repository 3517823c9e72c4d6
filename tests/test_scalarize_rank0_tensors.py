"""Rank-0 loop state and one-element scatter windows as scalars (xhlo-scalarize-rank0-tensors).

Each program is checked against numpy; the structural checks make sure the
values the pass is for no longer go through rank-0 tensors in the loops.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import xhlo

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from jax import export, lax

RANK0 = re.compile(r"tensor<[a-z]\w*>")


def _compile(fn, *args) -> xhlo.Executable:
    return xhlo.compile(export.export(jax.jit(fn), platforms=["cpu"])(*args))


def _loop_state_types(exe: xhlo.Executable) -> list[str]:
    """The carried types of every scf.for/scf.while on linalg (after the pass)."""
    text = exe.ir("xhlo-stablehlo-to-linalg")
    return [line for line in text.splitlines() if ("scf.for" in line and "iter_args" in line) or "scf.while" in line]


def test_segment_sum_with_duplicates_matches_numpy():
    rng = np.random.default_rng(0)
    data = rng.standard_normal(5000).astype(np.float32)
    segments = rng.integers(0, 37, 5000).astype(np.int32)
    exe = _compile(lambda d, s: jax.ops.segment_sum(d, s, 37), data, segments)
    want = np.zeros(37, np.float64)
    np.add.at(want, segments, data.astype(np.float64))
    np.testing.assert_allclose(exe(data, segments), want, rtol=1e-4, atol=1e-4)
    loops = _loop_state_types(exe)
    assert loops and not any(RANK0.search(line) for line in loops), loops


def test_bincount_and_out_of_range_segments():
    rng = np.random.default_rng(1)
    values = rng.integers(-3, 70, 4000).astype(np.int32)  # some outside [0, 64): dropped
    exe = _compile(lambda s: jax.ops.segment_sum(jnp.ones_like(s), s, 64), values)
    inside = values[(values >= 0) & (values < 64)]
    np.testing.assert_array_equal(exe(values), np.bincount(inside, minlength=64))


def test_scatter_multiply_of_single_elements():
    rng = np.random.default_rng(2)
    x = rng.uniform(0.5, 1.5, (6, 5)).astype(np.float32)
    rows = rng.integers(0, 6, 40).astype(np.int32)
    cols = rng.integers(0, 5, 40).astype(np.int32)
    factors = rng.uniform(0.9, 1.1, 40).astype(np.float32)
    exe = _compile(lambda x, r, c, f: x.at[r, c].multiply(f), x, rows, cols, factors)
    want = x.astype(np.float64)
    np.multiply.at(want, (rows, cols), factors.astype(np.float64))
    np.testing.assert_allclose(exe(x, rows, cols, factors), want, rtol=1e-5)


def test_while_loop_with_scalar_state():
    def collatz_steps(n):
        def body(state):
            value, steps, total = state
            value = jnp.where(value % 2 == 0, value // 2, 3 * value + 1)
            return value, steps + 1, total + value.astype(jnp.float32) * 0.5

        return lax.while_loop(lambda s: s[0] != 1, body, (n, jnp.int32(0), jnp.float32(0)))

    exe = _compile(collatz_steps, np.int32(27))
    value, steps, total = 27, 0, 0.0
    while value != 1:
        value = value // 2 if value % 2 == 0 else 3 * value + 1
        steps, total = steps + 1, total + value * 0.5
    got = exe(np.int32(27))
    assert (int(got[0]), int(got[1])) == (1, steps)
    np.testing.assert_allclose(got[2], total, rtol=1e-6)
    assert not any(RANK0.search(line) for line in _loop_state_types(exe))


def test_branch_results_in_counted_loop():
    def f(x):
        def body(i, acc):
            acc = lax.cond(i % 2 == 0, lambda a: a * 2.0, lambda a: a - 1.0, acc)
            return lax.switch(i % 3, [lambda a: a * 0.5, lambda a: a + 1.0, lambda a: -a], acc) + x[i]

        return lax.fori_loop(0, x.shape[0], body, jnp.float32(1))

    x = np.linspace(-1, 1, 11).astype(np.float32)
    acc = np.float32(1)
    for i in range(11):
        acc = np.float32(acc * 2 if i % 2 == 0 else acc - 1)
        acc = np.float32([acc * 0.5, acc + 1, -acc][i % 3] + x[i])
    exe = _compile(f, x)
    np.testing.assert_allclose(exe(x), acc, rtol=1e-6)
    branches = [line for line in exe.ir("xhlo-stablehlo-to-linalg").splitlines() if "scf.index_switch" in line]
    assert branches and all(line.rstrip().endswith("-> f32") for line in branches), branches


ONE_ELEMENT = re.compile(r"tensor<(1x)*1x[a-z]\w*>")


@pytest.mark.parametrize("a,x", [(2.5, 1.7), (0.3, 0.2), (30.0, 20.0), (3.4e38, 3.4e38)])
def test_loops_over_one_element_carry_scalars(a, x):
    """JAX on one element carries tensor<1xT> state: gammainc's series and continued-fraction
    loops (fifteen values) run on scalars, not on heap buffers each iteration (3.4e38 runs
    its loop to the limit: 825 ms before, XLA 81 ms), and match JAX."""
    fn = jax.scipy.special.gammainc
    args = (np.array([a], np.float32), np.array([x], np.float32))
    exe = _compile(fn, *args)
    np.testing.assert_allclose(exe(*args), np.asarray(jax.jit(fn)(*args)), rtol=2e-6)
    states = _loop_state_types(exe)
    assert states and not any(ONE_ELEMENT.search(line) or RANK0.search(line) for line in states), states


def test_one_element_generics_with_index_and_reduction():
    """A one-element iota (linalg.index), a reduction over one element and a broadcast to
    [1, 1], each inside a loop, computed on scalars."""
    def f(x):
        def body(i, acc):
            iota = lax.broadcasted_iota(jnp.float32, (1,), 0) + i.astype(jnp.float32)
            return (acc + jnp.sum(acc * iota, axis=0, keepdims=True)[None, :][0]) * 0.5

        return lax.fori_loop(0, 6, body, x)

    x = np.array([1.5], np.float32)
    acc = x.copy()
    for i in range(6):
        acc = np.float32((acc + acc * i) * 0.5)
    exe = _compile(f, x)
    np.testing.assert_allclose(exe(x), acc, rtol=1e-6)
    assert not any(ONE_ELEMENT.search(line) for line in _loop_state_types(exe))

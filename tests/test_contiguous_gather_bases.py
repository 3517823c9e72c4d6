"""xhlo-contiguous-gather-bases: gathers from slices and strided views read the right elements.

A vectorized gather's indices are row-major positions; on a strided view
(``a[..., :1]``, ``a[..., ::2]``) they had read the wrong elements, or failed to lower.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import export  # noqa: E402

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
ROWS = np.array([[1, 0, 2, 3], [2, 0, 1, 1], [3, 3, 0, 1]], np.int32)

CASES = {
    "take_along_axis of a[..., :1]": lambda m, i: jnp.take_along_axis(m[..., :1], i[..., None], axis=1),
    "take_along_axis of a[..., 1:4]": lambda m, i: jnp.take_along_axis(m[..., 1:4], i[..., None], axis=1),
    "take_along_axis of a[..., ::2]": lambda m, i: jnp.take_along_axis(
        m[..., ::2], jnp.broadcast_to(i[..., None], (3, 4, 3)), axis=1),
    "vmap of r[j] over a[:, :, 0]": lambda m, i: jax.vmap(lambda r, j: r[j])(m[:, :, 0], i),
    "vmap of r[argsort(-r)] over a[:, :, 2]": lambda m, i: jax.vmap(lambda r: r[jnp.argsort(-r)])(m[:, :, 2]),
    "take_along_axis of a transposed slice": lambda m, i: jnp.take_along_axis(
        jnp.swapaxes(m, 1, 2)[:, :4, :4], i[:, None, :], axis=2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_batched_gathers_of_views_match_jax(name):
    f = CASES[name]
    exe = xhlo.compile(export.export(jax.jit(f), platforms=["cpu"])(A, ROWS))
    np.testing.assert_array_equal(exe(A, ROWS), np.asarray(jax.jit(f)(A, ROWS)))  # gathers: exact


def test_batched_solve_of_a_slice_of_the_matrix():
    """``solve`` permutes the right-hand side with such a gather: a[..., :1] had come out wrong."""
    a = np.random.default_rng(0).standard_normal((2, 3, 3)).astype(np.float32)
    f = lambda m: jnp.linalg.solve(m, m[..., :1])  # noqa: E731
    got = xhlo.compile(export.export(jax.jit(f), platforms=["cpu"])(a))(a)
    np.testing.assert_allclose(got[..., 0], np.tile([1.0, 0.0, 0.0], (2, 1)), atol=1e-5)  # A x = A e1

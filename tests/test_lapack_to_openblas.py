"""jnp.linalg through OpenBLAS's LAPACK (xhlo-lapack-to-openblas), against jax.jit.

The routine-level conventions (ipiv, info, reflectors, untouched triangles) are
checked against numpy in test_legalize_lapack_custom_calls.py, once per provider;
here whole JAX programs, batched, run through the OpenBLAS calls.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jsl = pytest.importorskip("jax.scipy.linalg")
from jax import export

RNG = np.random.default_rng(0)


def _batch(*shape, dtype=np.float32):
    x = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _spd(*shape, dtype=np.float32):
    x = _batch(*shape, dtype=dtype)
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


PROGRAMS = {
    "solve": (lambda a, b: jnp.linalg.solve(a, b), lambda: (_batch(3, 24, 24), _batch(3, 24, 5))),
    "inv_det": (lambda a: (jnp.linalg.inv(a), jnp.linalg.det(a)), lambda: (_batch(2, 16, 16),)),
    "lu": (lambda a: jsl.lu(a), lambda: (_batch(20, 13),)),
    "cholesky_solve": (
        lambda a, b: jsl.cho_solve(jsl.cho_factor(a, lower=True), b),
        lambda: (_spd(2, 32, 32), _batch(2, 32, 3)),
    ),
    "cholesky_complex": (lambda a: jnp.linalg.cholesky(a), lambda: (_spd(2, 9, 9, dtype=np.complex64),)),
    "triangular": (
        lambda a, b: jsl.solve_triangular(a, b, lower=False, trans=1),
        lambda: (np.triu(_batch(17, 17)) + 17 * np.eye(17, dtype=np.float32), _batch(17, 4)),
    ),
    "qr": (lambda a: jnp.linalg.qr(a), lambda: (_batch(2, 30, 12),)),
    "eigh": (lambda a: jnp.linalg.eigvalsh(a), lambda: (_spd(3, 20, 20),)),
    "svd": (lambda a: jnp.linalg.svd(a, compute_uv=False), lambda: (_batch(2, 14, 22),)),
    "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], lambda: (_batch(40, 6), _batch(40, 2))),
    "pinv": (lambda a: jnp.linalg.pinv(a), lambda: (_batch(12, 7),)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_matches_jax(name):
    fn, make = PROGRAMS[name]
    args = make()
    exported = export.export(jax.jit(fn), platforms=["cpu"])(*args)
    exe = xhlo.compile(exported)
    assert "scipy_LAPACKE_" in exe.ir("xhlo-stablehlo-prepare") or "scipy_cblas_" in exe.ir(
        "xhlo-stablehlo-prepare"
    ), "the program should call OpenBLAS"
    got = jax.tree_util.tree_leaves(exe(*args))
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    for g, w in zip(got, want):
        w = np.asarray(w)
        np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-3 * max(1.0, np.abs(w).max()))


def test_singular_matrix_info_as_jax():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], np.float32)

    def f(a):
        lu, pivots, permutation = jax.lax.linalg.lu(a)
        return lu, pivots, permutation, jnp.linalg.det(a)

    exe = xhlo.compile(export.export(jax.jit(f), platforms=["cpu"])(a))
    for g, w in zip(exe(a), jax.jit(f)(a)):
        np.testing.assert_allclose(g, np.asarray(w), atol=1e-6)


def test_the_call_site_and_body():
    a = _batch(4, 8, 8)
    exe = xhlo.compile(export.export(jax.jit(jsl.lu_factor), platforms=["cpu"])(a))
    text = exe.ir("xhlo-stablehlo-prepare")
    assert "call @scipy_LAPACKE_sgetrf" in text
    assert "bufferization.to_buffer" in text and "bufferization.to_tensor" in text
    assert "stablehlo.custom_call @lapack" not in text

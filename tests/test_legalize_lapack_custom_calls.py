"""JAX's lapack_*_ffi custom calls, against numpy, both ways xhlo computes them:
OpenBLAS's LAPACK (xhlo-lapack-to-openblas) and the StableHLO loops of
xhlo-legalize-lapack-custom-calls (without the wheel, and for geev/gees).

Modules are written by hand with the operand/result layout and backend_config
of JAX's CPU exports (no JAX needed). Oracles: numpy's LAPACK (``np.linalg``,
including ``qr(mode='raw')`` for geqrf's reflectors), a few lines of textbook
partial-pivoting LU, and reconstructions/invariants for eigh and svd (their
vector signs are not unique). Tolerances are relative to the largest input
entry: 1e-5 for f32/complex64 and 1e-12 for f64/complex128 (a few n*eps of
backward error of the factorization); LAPACK-convention outputs that are exact
decisions (ipiv, info, permutations) must match exactly.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import xhlo
from xhlo.passes.lapack_to_openblas import LapackToOpenblas

ELEM = {
    np.float32: "f32",
    np.float64: "f64",
    np.complex64: "complex<f32>",
    np.complex128: "complex<f64>",
}
PREFIX = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}
TOLERANCE = {np.float32: 1e-5, np.float64: 1e-12, np.complex64: 1e-5, np.complex128: 1e-12}
REAL = {
    np.float32: np.float32,
    np.float64: np.float64,
    np.complex64: np.float32,
    np.complex128: np.float64,
}


@pytest.fixture(autouse=True, params=["openblas", "loops"])
def lapack_provider(request, monkeypatch):
    """Each test once per provider; "loops" turns the OpenBLAS pass off. Compiles skip the
    in-memory cache, which would hand the second run the first one's executable."""
    if request.param == "loops":
        monkeypatch.setattr(LapackToOpenblas, "run", lambda self, module: None)
    monkeypatch.setattr(xhlo, "compile", functools.partial(xhlo.compile, cache=False))
    return request.param


def tensor(shape, elem: str) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{elem}>"


def lapack_module(routine: str, dtype, operands, results, config: str = "") -> str:
    """@main(operands...) returning every result of one ``lapack_<t><routine>_ffi`` call."""
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operands))
    names = ", ".join(f"%a{i}" for i in range(len(operands)))
    result_list = ", ".join(results)
    count = f":{len(results)}" if len(results) > 1 else ""
    values = ", ".join(f"%0#{i}" for i in range(len(results))) if len(results) > 1 else "%0"
    return f"""func.func @main({args}) -> ({result_list}) {{
  %0{count} = stablehlo.custom_call @lapack_{PREFIX[dtype]}{routine}_ffi({names}) {{mhlo.backend_config = {{{config}}}, mhlo.frontend_attributes = {{num_batch_dims = "0"}}}} : ({", ".join(operands)}) -> ({result_list})
  return {values} : {result_list}
}}"""


def random_matrix(shape, dtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


def assert_close(actual, expected, dtype, scale=None):
    scale = scale if scale is not None else max(np.abs(expected).max(), 1.0)
    assert np.abs(actual - expected).max() <= TOLERANCE[dtype] * scale, np.abs(
        actual - expected
    ).max()


ALL_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


# -- potrf ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_potrf_factor_and_untouched_triangle(dtype, uplo):
    b = random_matrix((2, 5, 5), dtype)
    a = (b @ adjoint(b) + 5 * np.eye(5)).astype(dtype)
    t, info = tensor((2, 5, 5), ELEM[dtype]), tensor((2,), "i32")
    module = lapack_module("potrf", dtype, [t], [t, info], f"uplo = {ord(uplo)} : ui8")
    factor, info = xhlo.compile(module)(a)
    lower = np.linalg.cholesky(a)
    expected = lower if uplo == "L" else adjoint(lower)
    mask = np.tril(np.ones((5, 5), bool)) if uplo == "L" else np.triu(np.ones((5, 5), bool))
    assert_close(np.where(mask, factor, 0), expected, dtype)
    np.testing.assert_array_equal(
        np.where(mask, 0, factor), np.where(mask, 0, a)
    )  # LAPACK keeps it
    np.testing.assert_array_equal(info, [0, 0])


def test_potrf_info_names_the_first_failing_minor():
    a = np.diag([4.0, 1.0, -1.0, 2.0]).astype(np.float64)
    t = tensor((4, 4), "f64")
    module = lapack_module("potrf", np.float64, [t], [t, "tensor<i32>"], "uplo = 76 : ui8")
    _, info = xhlo.compile(module)(a)
    assert int(info) == 3


# -- trsm ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("side", ["L", "R"])
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("trans", ["N", "T", "C"])
@pytest.mark.parametrize("diag", ["N", "U"])
def test_trsm(dtype, side, uplo, trans, diag):
    n, k = 4, 3
    a = random_matrix((n, n), dtype) + 4 * np.eye(n, dtype=dtype)  # the other triangle is garbage
    b = random_matrix((n, k) if side == "L" else (k, n), dtype, seed=1)
    config = f"diag = {ord(diag)} : ui8, side = {ord(side)} : ui8, trans_x = {ord(trans)} : ui8, uplo = {ord(uplo)} : ui8"
    ta, tb = tensor(a.shape, ELEM[dtype]), tensor(b.shape, ELEM[dtype])
    x = xhlo.compile(lapack_module("trsm", dtype, [ta, tb], [tb], config))(a, b)
    m = np.tril(a) if uplo == "L" else np.triu(a)
    if diag == "U":
        np.fill_diagonal(m, 1)
    op = {"N": m, "T": m.T, "C": m.conj().T}[trans]
    expected = np.linalg.solve(op, b) if side == "L" else np.linalg.solve(op.T, b.T).T
    assert_close(x, expected, dtype, scale=np.abs(expected).max())


# -- getrf ---------------------------------------------------------------------------------


def textbook_lu(a: np.ndarray):
    """Right-looking LU with partial pivoting (first largest |x|, |re|+|im| if complex)."""
    lu = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64).copy()
    m, n = lu.shape
    ipiv, info = [], 0
    for k in range(min(m, n)):
        column = lu[k:, k]
        magnitude = (
            np.abs(column.real) + np.abs(column.imag) if np.iscomplexobj(a) else np.abs(column)
        )
        p = k + int(np.argmax(magnitude))
        ipiv.append(p + 1)
        lu[[k, p]] = lu[[p, k]]
        if lu[k, k] != 0:
            lu[k + 1 :, k] /= lu[k, k]
            lu[k + 1 :, k + 1 :] -= np.outer(lu[k + 1 :, k], lu[k, k + 1 :])
        elif info == 0:
            info = k + 1
    return lu, np.array(ipiv, np.int32), info


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (6, 4), (3, 5)])
def test_getrf_matches_partial_pivoting(dtype, shape):
    a = random_matrix(shape, dtype)
    k = min(shape)
    ta = tensor(shape, ELEM[dtype])
    module = lapack_module("getrf", dtype, [ta], [ta, tensor((k,), "i32"), "tensor<i32>"])
    lu, ipiv, info = xhlo.compile(module)(a)
    expected_lu, expected_ipiv, expected_info = textbook_lu(a)
    np.testing.assert_array_equal(ipiv, expected_ipiv)
    assert int(info) == expected_info == 0
    assert_close(lu, expected_lu, dtype, scale=np.abs(a).max())


def test_getrf_batched_pivots_differ_per_matrix_and_info_flags_singular():
    a = np.stack([random_matrix((4, 4), np.float64, seed=s) for s in range(3)])
    a[2, :, 1] = 2 * a[2, :, 0]  # singular: the second pivot of U is exactly 0 after elimination
    a[2] = np.round(a[2] * 4) / 4  # exact arithmetic on quarter-integers keeps it exactly 0
    a[2, :, 1] = 2 * a[2, :, 0]
    ta = tensor((3, 4, 4), "f64")
    module = lapack_module(
        "getrf", np.float64, [ta], [ta, tensor((3, 4), "i32"), tensor((3,), "i32")]
    )
    lu, ipiv, info = xhlo.compile(module)(a)
    for i in range(3):
        expected_lu, expected_ipiv, expected_info = textbook_lu(a[i])
        np.testing.assert_array_equal(ipiv[i], expected_ipiv)
        assert info[i] == expected_info
        assert_close(lu[i], expected_lu, np.float64, scale=np.abs(a[i]).max())
    assert info[2] == 2


# -- gtsv ----------------------------------------------------------------------------------


def gtsv_case(dtype, batch, n, nrhs, seed=0):
    """JAX's operands: dl[..., 0] and du[..., n-1] lie outside the matrix (nonzero here, to
    show they are ignored); diagonals of like size, so rows swap often."""
    dl, d, du = (random_matrix((*batch, n), dtype, seed + i) for i in range(3))
    b = random_matrix((*batch, n, nrhs), dtype, seed + 3)
    shapes = [tensor((*batch, n), ELEM[dtype])] * 3 + [tensor((*batch, n, nrhs), ELEM[dtype])]
    module = lapack_module("gtsv", dtype, shapes, [*shapes, tensor(batch, "i32")])
    return module, (dl, d, du, b)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gtsv_matches_lapack(dtype):
    """Every output against LAPACK's own ?gtsv (scipy), matrix by matrix: the solution,
    the factor's diagonals (which show the same rows were swapped) and info."""
    lapack = pytest.importorskip("scipy.linalg.lapack")
    module, (dl, d, du, b) = gtsv_case(dtype, (3,), 7, 2)
    out_dl, out_d, out_du, x, info = xhlo.compile(module)(dl, d, du, b)
    routine = getattr(lapack, PREFIX[dtype] + "gtsv")
    for i in range(3):
        du2, e_d, e_du, e_x, e_info = routine(dl[i, 1:], d[i], du[i, :-1], b[i])
        assert info[i] == e_info == 0
        assert_close(x[i], e_x, dtype)
        assert_close(out_d[i], e_d, dtype)
        assert_close(out_du[i, :-1], e_du, dtype)
        assert_close(out_dl[i, 1:-1], du2[:-1], dtype)  # the fill of the swaps
        assert out_dl[i, 0] == dl[i, 0] and out_du[i, -1] == du[i, -1]


def test_gtsv_info_flags_the_first_zero_pivot():
    """A zero first column (d[0] = 0 and the entry below it 0): info = 1 for that system
    only; a zero last pivot gives info = n."""
    module, (dl, d, du, b) = gtsv_case(np.float64, (3,), 5, 1, seed=4)
    d[1, 0], dl[1, 1] = 0.0, 0.0
    d[2, -1], dl[2, -1], du[2, -2] = 0.0, 0.0, 0.0
    _, _, _, x, info = xhlo.compile(module)(dl, d, du, b)
    np.testing.assert_array_equal(info, [0, 1, 5])
    dense = np.diag(d[0]) + np.diag(dl[0, 1:], -1) + np.diag(du[0, :-1], 1)
    assert_close(x[0], np.linalg.solve(dense, b[0]), np.float64)


# -- geqrf, orgqr --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_geqrf_matches_lapack_reflectors(dtype, shape):
    a = random_matrix(shape, dtype)
    k = min(shape)
    ta = tensor(shape, ELEM[dtype])
    module = lapack_module("geqrf", dtype, [ta], [ta, tensor((k,), ELEM[dtype])])
    qr, tau = xhlo.compile(module)(a)
    expected_h, expected_tau = np.linalg.qr(a, mode="raw")  # LAPACK ?geqrf, h transposed
    assert_close(qr, expected_h.T, dtype, scale=np.abs(a).max())
    assert_close(tau, expected_tau, dtype, scale=1.0)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("q_shape,k", [((5, 3), 3), ((5, 5), 3), ((4, 4), 4), ((5, 3), 2)])
def test_orgqr_multiplies_out_the_reflectors(dtype, q_shape, k):
    m, n = q_shape
    a = random_matrix((m, k), dtype)
    h, tau = np.linalg.qr(a, mode="raw")
    reflectors = np.zeros(q_shape, dtype)
    reflectors[:, :k] = h.T[:, :k]
    routine = "ungqr" if np.issubdtype(dtype, np.complexfloating) else "orgqr"
    tq, tt = tensor(q_shape, ELEM[dtype]), tensor((k,), ELEM[dtype])
    q = xhlo.compile(lapack_module(routine, dtype, [tq, tt], [tq]))(reflectors, tau.astype(dtype))
    # Q = H_0 ... H_{k-1} (first n columns), H_i = I - tau_i v_i v_i^H
    full = np.eye(m, dtype=np.complex128)
    for i in range(k):
        v = np.zeros(m, np.complex128)
        v[i], v[i + 1 :] = 1, reflectors[i + 1 :, i]
        full = full @ (np.eye(m) - tau[i] * np.outer(v, v.conj()))
    assert_close(q, full[:, :n], dtype, scale=1.0)


# -- syevd / heevd ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_syevd_reads_one_triangle(dtype, uplo):
    n = 6
    b = random_matrix((2, n, n), dtype)
    hermitian = b + adjoint(b)
    noise = random_matrix((2, n, n), dtype, seed=9)
    keep = np.tril(np.ones((n, n), bool)) if uplo == "L" else np.triu(np.ones((n, n), bool))
    a = np.where(keep, hermitian, noise)  # the other triangle must not be read
    routine = "heevd" if np.issubdtype(dtype, np.complexfloating) else "syevd"
    t = tensor((2, n, n), ELEM[dtype])
    module = lapack_module(
        routine,
        dtype,
        [t],
        [t, tensor((2, n), ELEM[REAL[dtype]]), tensor((2,), "i32")],
        f"mode = 86 : ui8, uplo = {ord(uplo)} : ui8",
    )
    vectors, values, info = xhlo.compile(module)(a)
    assert_close(values, np.linalg.eigvalsh(hermitian), dtype, scale=np.abs(hermitian).max())
    assert np.all(np.diff(values, axis=-1) >= 0)
    assert_close(vectors @ (values[..., None] * adjoint(vectors)), hermitian, dtype)
    assert_close(
        adjoint(vectors) @ vectors, np.broadcast_to(np.eye(n), (2, n, n)), dtype, scale=1.0
    )
    np.testing.assert_array_equal(info, [0, 0])


def test_syevd_repeated_eigenvalues():
    q, _ = np.linalg.qr(random_matrix((5, 5), np.float64))
    a = q @ np.diag([1.0, 1.0, 1.0, 3.0, -2.0]) @ q.T
    t = tensor((5, 5), "f64")
    module = lapack_module(
        "syevd",
        np.float64,
        [t],
        [t, tensor((5,), "f64"), "tensor<i32>"],
        "mode = 86 : ui8, uplo = 76 : ui8",
    )
    vectors, values, _ = xhlo.compile(module)(a)
    np.testing.assert_allclose(values, [-2, 1, 1, 1, 3], atol=1e-12)
    assert_close(vectors @ np.diag(values) @ vectors.T, a, np.float64)


# -- gesdd ---------------------------------------------------------------------------------


def svd_results(shape, dtype, mode):
    *batch, m, n = shape
    k = min(m, n)
    elem = ELEM[dtype]
    u_cols, vt_rows = (m, n) if mode in "AN" else (k, k)
    return [
        tensor(shape, elem),
        tensor((*batch, k), ELEM[REAL[dtype]]),
        tensor((*batch, m, u_cols), elem),
        tensor((*batch, vt_rows, n), elem),
        tensor(batch, "i32"),
    ]


@pytest.mark.parametrize(
    "dtype,shape,mode",
    [
        (np.float32, (6, 4), "A"),
        (np.float64, (3, 5), "S"),
        (np.float64, (2, 4, 4), "S"),
        (np.complex64, (2, 4, 4), "A"),
        (np.complex64, (3, 5), "A"),
        (np.complex128, (5, 3), "S"),
    ],
)
def test_gesdd(dtype, shape, mode):
    a = random_matrix(shape, dtype)
    module = lapack_module(
        "gesdd",
        dtype,
        [tensor(shape, ELEM[dtype])],
        svd_results(shape, dtype, mode),
        f"mode = {ord(mode)} : ui8",
    )
    _, s, u, vt, info = xhlo.compile(module)(a)
    k = min(shape[-2:])
    assert_close(s, np.linalg.svd(a, compute_uv=False), dtype, scale=np.abs(a).max())
    reconstruction = (u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :]
    assert_close(reconstruction, a, dtype)
    assert_close(
        adjoint(u) @ u,
        np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2),
        dtype,
        scale=1.0,
    )
    assert_close(
        vt @ adjoint(vt),
        np.broadcast_to(np.eye(vt.shape[-2]), vt.shape[:-2] + (vt.shape[-2],) * 2),
        dtype,
        scale=1.0,
    )
    assert np.all(info == 0)


def test_gesdd_rank_deficient_still_gives_unitary_factors():
    a = np.outer(np.arange(1.0, 6.0), np.arange(1.0, 4.0))  # rank 1
    module = lapack_module(
        "gesdd",
        np.float64,
        [tensor((5, 3), "f64")],
        svd_results((5, 3), np.float64, "A"),
        "mode = 65 : ui8",
    )
    _, s, u, vt, _ = xhlo.compile(module)(a)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose(u.T @ u, np.eye(5), atol=1e-12)
    np.testing.assert_allclose(vt @ vt.T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose((u[:, :3] * s) @ vt, a, atol=1e-12)


def test_gesdd_values_only():
    a = random_matrix((3, 5), np.float32)
    module = lapack_module(
        "gesdd",
        np.float32,
        [tensor((3, 5), "f32")],
        svd_results((3, 5), np.float32, "N"),
        "mode = 78 : ui8",
    )
    _, s, _, _, info = xhlo.compile(module)(a)
    assert_close(s, np.linalg.svd(a, compute_uv=False), np.float32, scale=np.abs(a).max())
    assert int(info) == 0


# -- geev ----------------------------------------------------------------------------------


def matched(values, expected):
    """``values`` reordered to the nearest of ``expected`` (the order is unspecified)."""
    remaining = list(expected)
    order = []
    for value in values:
        nearest = min(range(len(remaining)), key=lambda i: abs(remaining[i] - value))
        order.append(remaining.pop(nearest))
    return np.array(order)


def geev_module(dtype, n, left: bool, right: bool) -> str:
    elem = ELEM[dtype]
    complex_elem = elem if np.issubdtype(dtype, np.complexfloating) else f"complex<{elem}>"
    vectors = [tensor((n, n), complex_elem)] * 2
    values = (
        [tensor((n,), complex_elem)]
        if np.issubdtype(dtype, np.complexfloating)
        else [tensor((n,), elem)] * 2
    )
    config = f"compute_left = {ord('V' if left else 'N')} : ui8, compute_right = {ord('V' if right else 'N')} : ui8"
    return lapack_module(
        "geev", dtype, [tensor((n, n), elem)], [*values, *vectors, "tensor<i32>"], config
    )


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_geev_eigenpairs(dtype):
    n = 5
    a = random_matrix((n, n), dtype)
    results = xhlo.compile(geev_module(dtype, n, left=True, right=True))(a)
    if np.issubdtype(dtype, np.complexfloating):
        values, left, right, info = results
    else:
        real, imag, left, right, info = results
        values = real + 1j * imag
    scale = np.abs(a).max()
    expected = np.linalg.eigvals(a.astype(np.complex128))
    assert_close(values, matched(values, expected), dtype, scale=scale)
    assert_close(a @ right, right * values, dtype, scale=scale)  # A v = lambda v
    assert_close(
        adjoint(left) @ a, values[:, None] * adjoint(left), dtype, scale=scale
    )  # u^H A = lambda u^H
    for vectors in (left, right):  # unit norm, largest component real (LAPACK's normalization)
        assert_close(np.linalg.norm(vectors, axis=0), np.ones(n), dtype, scale=1.0)
        largest = vectors[np.argmax(np.abs(vectors), axis=0), np.arange(n)]
        assert_close(largest.imag, np.zeros(n), dtype, scale=1.0)
    assert int(info) == 0


@pytest.mark.parametrize(
    "matrix",
    [
        [[0.0, -1.0], [1.0, 0.0]],  # a rotation: +-i
        [[2.0, 1.0], [0.0, 2.0]],  # defective (a Jordan block)
        [[1.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 2.0]],  # already triangular
    ],
)
def test_geev_special_matrices(matrix):
    a = np.array(matrix)
    n = len(a)
    real, imag, _, right, info = xhlo.compile(geev_module(np.float64, n, left=False, right=True))(a)
    values = real + 1j * imag
    np.testing.assert_allclose(values, matched(values, np.linalg.eigvals(a)), atol=1e-12)
    np.testing.assert_allclose(a @ right, right * values, atol=1e-12)
    assert int(info) == 0


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_gees_schur_form(dtype):
    a = random_matrix((2, 4, 4), dtype)
    t, c, v, i = (
        tensor((2, 4, 4), ELEM[dtype]),
        tensor((2, 4), ELEM[dtype]),
        "tensor<2xi32>",
        "tensor<2xi32>",
    )
    module = lapack_module("gees", dtype, [t], [t, t, c, v, i], "mode = 86 : ui8, sort = 78 : ui8")
    schur, vectors, values, sdim, info = xhlo.compile(module)(a)
    identity = np.broadcast_to(np.eye(4), (2, 4, 4))
    np.testing.assert_array_equal(np.tril(schur, -1), 0)
    assert_close(vectors @ schur @ adjoint(vectors), a, dtype)
    assert_close(adjoint(vectors) @ vectors, identity, dtype, scale=1.0)
    assert_close(values, np.diagonal(schur, axis1=-2, axis2=-1), dtype)
    np.testing.assert_array_equal(sdim, 0)
    np.testing.assert_array_equal(info, 0)


def test_real_gees_is_a_compile_error():
    t, c = tensor((3, 3), "f32"), tensor((3,), "f32")
    module = lapack_module(
        "gees",
        np.float32,
        [t],
        [t, t, c, c, "tensor<i32>", "tensor<i32>"],
        "mode = 86 : ui8, sort = 78 : ui8",
    )
    with pytest.raises(xhlo.CompilerError, match="real Schur form"):
        xhlo.compile(module)


def test_empty_matrices_return_at_once():
    """A batch of 0x0 matrices (jnp.linalg on empty input): LAPACK returns at once with
    info 0, so every result is empty or zero."""
    t = "tensor<3x0x0xf32>"
    module = f"""func.func @main(%a: {t}) -> ({t}, tensor<3xi32>) {{
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {{mhlo.backend_config = {{uplo = 76 : ui8}}, mhlo.frontend_attributes = {{num_batch_dims = "1"}}}} : ({t}) -> ({t}, tensor<3xi32>)
  return %0#0, %0#1 : {t}, tensor<3xi32>
}}"""
    factor, info = xhlo.compile(module)(np.zeros((3, 0, 0), np.float32))
    assert factor.shape == (3, 0, 0)
    np.testing.assert_array_equal(info, np.zeros(3, np.int32))


# -- errors --------------------------------------------------------------------------------


def test_vector_operand_is_a_compile_error():
    module = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>)
  return %0#0 : tensor<4xf32>
}"""
    with pytest.raises(
        xhlo.CompilerError, match="'lapack_spotrf_ffi' needs a matrix operand"
    ) as info:
        xhlo.compile(module, filename="chol.mlir")
    assert "chol.mlir:2:" in str(info.value)

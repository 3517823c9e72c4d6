"""stablehlo.cholesky expanded by xhlo-expand-cholesky, against np.linalg.cholesky.

Inputs are A = B B^H + n I (well conditioned). Tolerances (max abs error over
max |L|): 1e-5 for f32/complex64, 1e-12 for f64/complex128, 2e-2 for f16/bf16.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xhlo

DTYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "complex<f32>": np.complex64,
    "complex<f64>": np.complex128,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
}
TOLERANCE = {
    "f32": 1e-5,
    "f64": 1e-12,
    "complex<f32>": 1e-5,
    "complex<f64>": 1e-12,
    "f16": 2e-2,
    "bf16": 2e-2,
}


def cholesky_module(shape, elem: str, lower: bool) -> str:
    t = f"tensor<{''.join(f'{d}x' for d in shape)}{elem}>"
    return f"""func.func @main(%a: {t}) -> {t} {{
  %0 = stablehlo.cholesky %a, lower = {str(lower).lower()} : {t}
  return %0 : {t}
}}"""


def positive_definite(shape, dtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = shape[-1]
    b = rng.normal(size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        b = b + 1j * rng.normal(size=shape)
    return b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n)


def adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


def expected_factor(a: np.ndarray, lower: bool) -> np.ndarray:
    factor = np.linalg.cholesky(a)  # lower, a = L L^H
    return factor if lower else adjoint(factor)  # upper: a = U^H U


def run(shape, elem, lower, a):
    return xhlo.compile(cholesky_module(shape, elem, lower))(a.astype(DTYPES[elem]))


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 5, 5)])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("elem", ["f32", "f64", "complex<f32>", "complex<f64>"])
def test_matches_numpy(shape, lower, elem):
    a = positive_definite(shape, DTYPES[elem])
    got = run(shape, elem, lower, a)
    expected = expected_factor(a, lower)
    assert got.dtype == DTYPES[elem]
    tolerance = TOLERANCE[elem] * np.abs(expected).max()
    np.testing.assert_allclose(got, expected, rtol=0, atol=tolerance)
    # the other triangle is zero (implementation-defined in the spec; xhlo's choice)
    other = np.triu(got, 1) if lower else np.tril(got, -1)
    assert not other.any()
    product = got @ adjoint(got) if lower else adjoint(got) @ got
    np.testing.assert_allclose(product, a, rtol=0, atol=TOLERANCE[elem] * 10 * np.abs(a).max())


@pytest.mark.parametrize("lower", [True, False])
def test_reads_only_the_selected_triangle(lower):
    n = 6
    a = positive_definite((n, n), np.float64, seed=1)
    garbage = a.copy()
    unused = np.triu_indices(n, 1) if lower else np.tril_indices(n, -1)
    garbage[unused] = np.nan
    got = run((n, n), "f64", lower, garbage)
    np.testing.assert_allclose(got, expected_factor(a, lower), rtol=0, atol=1e-12 * np.abs(a).max())


@pytest.mark.parametrize("elem", ["f16", "bf16"])
def test_low_precision_is_computed_in_f32(elem):
    shape = (2, 4, 4)
    a = positive_definite(shape, np.float32, seed=2).astype(DTYPES[elem]).astype(np.float64)
    got = run(shape, elem, True, a)
    assert got.dtype == DTYPES[elem]
    expected = expected_factor(a, True)
    tolerance = TOLERANCE[elem] * np.abs(expected).max()
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=0, atol=tolerance)


def test_not_positive_definite_gives_nan():
    a = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1
    got = run((2, 2), "f64", True, a)
    assert got[0, 0] == 1.0 and got[1, 0] == 2.0 and np.isnan(got[1, 1])


def test_large_matrix_loop_does_not_unroll():
    n = 48
    a = positive_definite((n, n), np.float64, seed=4)
    exe = xhlo.compile(cholesky_module((n, n), "f64", True))
    assert exe.ir("xhlo-stablehlo-prepare").count("stablehlo.dynamic_update_slice") == 1
    np.testing.assert_allclose(exe(a), np.linalg.cholesky(a), rtol=0, atol=1e-11 * np.abs(a).max())


def test_dynamic_operand_is_a_compile_error():
    src = """func.func @main(%a: tensor<?x4x4xf32>) -> tensor<?x4x4xf32> {
  %0 = stablehlo.cholesky %a, lower = true : tensor<?x4x4xf32>
  return %0 : tensor<?x4x4xf32>
}"""
    expected = "xhlo-expand-cholesky: .*statically shaped"
    with pytest.raises(xhlo.CompilerError, match=expected) as info:
        xhlo.compile(src, filename="chol.mlir")
    assert "chol.mlir:2:" in str(info.value)

"""stablehlo.triangular_solve expanded by xhlo-expand-triangular-solve, against numpy.

The oracle masks ``a`` to the selected triangle (ones on the diagonal when
unit), applies op(a) and calls np.linalg.solve (right side: on the transposed
system). Matrices are diagonally dominant (well conditioned). Tolerances (max
abs error over max |x|): 1e-5 for f32/complex64, 1e-12 for f64/complex128.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import xhlo

DTYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "complex<f32>": np.complex64,
    "complex<f64>": np.complex128,
}
TOLERANCE = {"f32": 1e-5, "f64": 1e-12, "complex<f32>": 1e-5, "complex<f64>": 1e-12}
MODES = ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]


def tensor(shape, elem):
    return f"tensor<{''.join(f'{d}x' for d in shape)}{elem}>"


def solve_module(a_shape, b_shape, elem, left_side, lower, unit_diagonal, mode) -> str:
    a, b = tensor(a_shape, elem), tensor(b_shape, elem)
    values = {"left_side": left_side, "lower": lower, "unit_diagonal": unit_diagonal}
    flags = ", ".join(f"{name} = {str(value).lower()}" for name, value in values.items())
    return f"""func.func @main(%a: {a}, %b: {b}) -> {b} {{
  %0 = "stablehlo.triangular_solve"(%a, %b) {{{flags}, transpose_a = #stablehlo<transpose {mode}>}}
      : ({a}, {b}) -> {b}
  return %0 : {b}
}}"""


def random_system(batch, n, k, left_side, dtype, seed=0):
    rng = np.random.default_rng(seed)
    complex_ = np.issubdtype(dtype, np.complexfloating)

    def sample(shape):
        values = rng.normal(size=shape)
        return values + 1j * rng.normal(size=shape) if complex_ else values

    a = sample((*batch, n, n)) + 2 * n * np.eye(n)
    b = sample((*batch, n, k) if left_side else (*batch, k, n))
    return a.astype(dtype), b.astype(dtype)


def oracle(a, b, left_side, lower, unit_diagonal, mode):
    triangle = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        triangle = triangle.copy()
        triangle[..., range(n), range(n)] = 1
    swap = lambda x: np.swapaxes(x, -1, -2)  # noqa: E731
    op_a = {
        "NO_TRANSPOSE": triangle,
        "TRANSPOSE": swap(triangle),
        "ADJOINT": np.conj(swap(triangle)),
    }[mode]
    a64, b64 = op_a.astype(np.complex128), b.astype(np.complex128)
    if left_side:
        return np.linalg.solve(a64, b64)
    return swap(np.linalg.solve(swap(a64), swap(b64)))  # x op(a) = b  <=>  op(a)^T x^T = b^T


def check(batch, n, k, elem, left_side, lower, unit_diagonal, mode, a=None, b=None):
    if a is None:
        a, b = random_system(batch, n, k, left_side, DTYPES[elem])
    src = solve_module(a.shape, b.shape, elem, left_side, lower, unit_diagonal, mode)
    got = xhlo.compile(src)(a, b)
    expected = oracle(a, b, left_side, lower, unit_diagonal, mode)
    assert got.dtype == DTYPES[elem] and got.shape == b.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOLERANCE[elem] * np.abs(expected).max())


OPTIONS = list(itertools.product([True, False], [True, False], [True, False], MODES))


@pytest.mark.parametrize("left_side,lower,unit_diagonal,mode", OPTIONS)
@pytest.mark.parametrize("elem", list(DTYPES))
def test_every_option_combination(elem, left_side, lower, unit_diagonal, mode):
    check((2,), 5, 3, elem, left_side, lower, unit_diagonal, mode)


@pytest.mark.parametrize("batch,n,k", [((), 1, 1), ((), 4, 7), ((2, 3), 6, 2), ((1,), 3, 1)])
@pytest.mark.parametrize("left_side", [True, False])
def test_shapes(batch, n, k, left_side):
    check(batch, n, k, "f64", left_side, True, False, "NO_TRANSPOSE")


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("mode", MODES)
def test_reads_only_the_selected_triangle(lower, mode):
    """NaN in the other triangle and on a unit diagonal must not reach the result."""
    n = 5
    a, b = random_system((2,), n, 3, True, np.float64, seed=7)
    garbage = a.copy()
    unused = np.triu_indices(n, 1) if lower else np.tril_indices(n, -1)
    garbage[..., unused[0], unused[1]] = np.nan
    garbage[..., range(n), range(n)] = np.nan
    src = solve_module(a.shape, b.shape, "f64", True, lower, True, mode)
    got = xhlo.compile(src)(garbage, b)
    expected = oracle(a, b, True, lower, True, mode)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * np.abs(expected).max())


def test_empty_right_hand_side_returns_b():
    a, _ = random_system((), 3, 1, True, np.float32)
    b = np.zeros((3, 0), np.float32)
    src = solve_module(a.shape, b.shape, "f32", True, True, False, "NO_TRANSPOSE")
    got = xhlo.compile(src)(a, b)
    assert got.shape == (3, 0)


def test_dynamic_shape_is_a_compile_error():
    src = """func.func @main(%a: tensor<?x4x4xf32>, %b: tensor<?x4x2xf32>) -> tensor<?x4x2xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
      transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<?x4x4xf32>, tensor<?x4x2xf32>) -> tensor<?x4x2xf32>
  return %0 : tensor<?x4x2xf32>
}"""
    expected = "xhlo-expand-triangular-solve: .*static shapes"
    with pytest.raises(xhlo.CompilerError, match=expected) as info:
        xhlo.compile(src, filename="trsm.mlir")
    assert "trsm.mlir:2:" in str(info.value)

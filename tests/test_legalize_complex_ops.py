"""Complex ops the upstream lowering crashes on (bitcast_convert), orders wrongly (maximum,
minimum) or lacks (cbrt), against numpy."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo


def _bitcast(shape_in: str, elem_in: str, shape_out: str, elem_out: str) -> str:
    t_in, t_out = f"tensor<{shape_in}x{elem_in}>", f"tensor<{shape_out}x{elem_out}>"
    return f"""func.func @main(%a: {t_in}) -> {t_out} {{
  %0 = stablehlo.bitcast_convert %a : ({t_in}) -> {t_out}
  return %0 : {t_out}
}}"""


def _complex(shape: tuple[int, ...], dtype) -> np.ndarray:
    rng = np.random.default_rng(7)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("elem,dtype", [("complex<f32>", np.complex64), ("complex<f64>", np.complex128)])
def test_same_type_is_the_identity(elem, dtype):
    a = _complex((2, 3), dtype)
    got = xhlo.compile(_bitcast("2x3", elem, "2x3", elem))(a)
    np.testing.assert_array_equal(got, a)


def test_complex128_to_pairs_of_complex64():
    a = _complex((4, 3), np.complex128)
    got = xhlo.compile(_bitcast("4x3", "complex<f64>", "4x3x2", "complex<f32>"))(a)
    assert got.shape == (4, 3, 2)
    np.testing.assert_array_equal(got.view(np.uint32), a.view(np.complex64).reshape(4, 3, 2).view(np.uint32))


def test_pairs_of_complex64_to_complex128():
    a = _complex((5, 2), np.complex64)
    got = xhlo.compile(_bitcast("5x2", "complex<f32>", "5", "complex<f64>"))(a)
    assert got.shape == (5,)
    np.testing.assert_array_equal(got.view(np.uint64), a.view(np.complex128).reshape(5).view(np.uint64))


def _binary(op: str, elem: str) -> str:
    t = f"tensor<6x{elem}>"
    return f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = stablehlo.{op} %a, %b : {t}
  return %0 : {t}
}}"""


@pytest.mark.parametrize("op,oracle", [("maximum", np.maximum), ("minimum", np.minimum)])
def test_min_max_order_by_real_then_imaginary(op, oracle):
    # equal real parts (including -0 against +0) are decided by the imaginary parts
    a = np.array([1.5 + 2.5j, 1.5 + 7.5j, 0 + 1.5j, 0 + 1.5j, -3 + 0j, 2 - 1j], np.complex64)
    b = np.array([7.5 + 1.5j, 1.5 + 2.5j, complex(-0.0, 2.5), 0 + 1.5j, -3 + 1j, 1 + 9j], np.complex64)
    got = xhlo.compile(_binary(op, "complex<f32>"))(a, b)
    np.testing.assert_array_equal(got, oracle(a, b))


def test_cbrt_is_the_principal_root():
    z = np.array([[3 + 4j, -8 + 0j, 0j, 1e-3 - 2j], [-1 - 1j, 27j, 5.5 + 0.25j, -0.5 + 3j]], np.complex128)
    t = "tensor<2x4xcomplex<f64>>"
    src = f"""func.func @main(%a: {t}) -> {t} {{
  %0 = stablehlo.cbrt %a : {t}
  return %0 : {t}
}}"""
    np.testing.assert_allclose(xhlo.compile(src)(z), np.power(z, 1 / 3), rtol=1e-13, atol=1e-15)

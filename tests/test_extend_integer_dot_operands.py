"""Integer dots and convolutions with a wider result extend unsigned operands with zeros."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo import dtypes

RANGES = {"i2": (-2, 1), "ui2": (0, 3), "i4": (-8, 7), "ui4": (0, 15), "i8": (-128, 127), "ui8": (0, 255), "ui16": (0, 65535)}

DOT = """func.func @main(%a: tensor<3x4x{a}>, %b: tensor<4x5x{b}>) -> tensor<3x5x{r}> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x4x{a}>, tensor<4x5x{b}>) -> tensor<3x5x{r}>
  return %0 : tensor<3x5x{r}>
}}"""


def _operand(elem: str, shape, rng) -> tuple[np.ndarray, np.ndarray]:
    """(values as int64, the same values in ``elem``), including both ends of the range."""
    lo, hi = RANGES[elem]
    values = rng.integers(lo, hi, shape, endpoint=True)
    values.flat[:2] = [lo, hi]
    return values, values.astype(dtypes.to_numpy_dtype(elem))


@pytest.mark.parametrize(
    "a,b,result",
    [
        ("ui8", "ui8", "ui32"),
        ("ui8", "ui8", "i32"),
        ("ui8", "i8", "i32"),
        ("ui16", "ui16", "ui64"),
        ("ui4", "ui4", "i32"),
        ("ui2", "i2", "i16"),
        ("i8", "i8", "i32"),
        ("ui8", "ui8", "f32"),
        ("ui8", "ui8", "ui8"),
    ],
)
def test_dot_general_extends_by_operand_signedness(a, b, result):
    rng = np.random.default_rng(0)
    (x, x_typed), (y, y_typed) = _operand(a, (3, 4), rng), _operand(b, (4, 5), rng)
    got = xhlo.compile(DOT.format(a=a, b=b, r=result))(x_typed, y_typed)
    result_dtype = dtypes.to_numpy_dtype(result)
    exact = x @ y
    want = exact.astype(result_dtype)  # integers wrap modulo 2^width, as the dot does
    np.testing.assert_array_equal(got, want)


CONV = """func.func @main(%a: tensor<1x6x1xui8>, %k: tensor<3x1x1xui8>) -> tensor<1x4x1xui32> {
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x1xui8>, tensor<3x1x1xui8>) -> tensor<1x4x1xui32>
  return %0 : tensor<1x4x1xui32>
}"""


def test_convolution_extends_unsigned_operands():
    a = np.array([200, 255, 1, 130, 7, 250], np.uint8)
    k = np.array([255, 2, 128], np.uint8)
    got = xhlo.compile(CONV)(a.reshape(1, 6, 1), k.reshape(3, 1, 1))
    want = np.correlate(a.astype(np.int64), k.astype(np.int64), "valid")
    np.testing.assert_array_equal(got.ravel(), want)

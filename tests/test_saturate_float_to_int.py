"""xhlo-saturate-float-to-int: float -> integer conversions of NaN and out-of-range values.

The oracle is the StableHLO reference interpreter, which converts NaN to 0 and
saturates values beyond the integer range; inputs cover the edges of every
integer type (powers of two, one ulp inside and outside) in f32 and f64, in
vectorized and scalar code alike.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import xhlo
from xhlo import reference

INT_TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
             "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64}
FLOAT_TYPES = {"f32": np.float32, "f64": np.float64}


def _edges(int_dtype, float_dtype) -> np.ndarray:
    info = np.iinfo(int_dtype)
    points = [float(info.min), float(info.max) + 1.0, float(info.max), float(info.min) - 1.0]
    values = [np.nan, np.inf, -np.inf, 0.0, -0.0, -0.5, 0.5, -0.99, 1.5, -1.5, 1e30, -1e30, 3.0, -3.0]
    for p in points:
        f = float_dtype(p)
        values += [f, np.nextafter(f, float_dtype(np.inf)), np.nextafter(f, float_dtype(-np.inf))]
    return np.array(values, float_dtype)


def convert(n: int, src: str, dst: str) -> str:
    return f"""func.func @main(%a: tensor<{n}x{src}>) -> tensor<{n}x{dst}> {{
  %0 = stablehlo.convert %a : (tensor<{n}x{src}>) -> tensor<{n}x{dst}>
  return %0 : tensor<{n}x{dst}>
}}"""


@pytest.mark.parametrize("dst", sorted(INT_TYPES))
@pytest.mark.parametrize("src", sorted(FLOAT_TYPES))
def test_matches_the_reference_interpreter(src, dst):
    x = _edges(INT_TYPES[dst], FLOAT_TYPES[src])
    module = convert(len(x), src, dst)
    got = xhlo.compile(module)(x)
    (expected,) = reference.evaluate(module, x)
    np.testing.assert_array_equal(got, expected)


def test_scalar_loop_and_vector_code_agree():
    """A 0-d conversion stays scalar, a long one is vectorized: same answers."""
    values = np.array([np.nan, 300.0, -300.0, 1e10, 2.5], np.float32)
    scalar = xhlo.compile(convert(1, "f32", "i8").replace("tensor<1x", "tensor<"))
    vector = xhlo.compile(convert(64, "f32", "i8"))
    wide = vector(np.resize(values, 64))
    for i, v in enumerate(values):
        assert scalar(np.array(v, np.float32)) == wide[i]
    np.testing.assert_array_equal(wide[:5], [0, 127, -128, 127, 2])


def test_in_range_values_truncate_toward_zero():
    x = np.linspace(-1000.7, 1000.7, 64).astype(np.float32)
    got = xhlo.compile(convert(64, "f32", "i32"))(x)
    np.testing.assert_array_equal(got, np.trunc(x).astype(np.int32))


@pytest.mark.parametrize("dst", ["i32", "i64", "ui64"])
@pytest.mark.parametrize("src", ["bf16", "f16"])
def test_half_floats_saturate_as_their_f32_values(src, dst):
    """A 64-bit range bound overflows f16 and rounds in bf16 (2**63 is exact); the
    oracle converts the same values from f32, where they are exact."""
    dtype = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}[src]
    with np.errstate(over="ignore"):
        x = _edges(INT_TYPES[dst], np.float32).astype(dtype)
    got = xhlo.compile(convert(len(x), src, dst))(x)
    (expected,) = reference.evaluate(convert(len(x), "f32", dst), x.astype(np.float32))
    np.testing.assert_array_equal(got, expected)

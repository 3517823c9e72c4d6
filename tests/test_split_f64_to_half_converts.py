"""f64 -> f16/bf16 conversions: they link (no compiler-rt call) and round once, not twice."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import xhlo


def _convert(n: int, target: str) -> str:
    return f"""func.func @main(%a: tensor<{n}xf64>) -> tensor<{n}x{target}> {{
  %0 = stablehlo.convert %a : (tensor<{n}xf64>) -> tensor<{n}x{target}>
  return %0 : tensor<{n}x{target}>
}}"""


def _bf16_nearest_even(x: np.ndarray) -> np.ndarray:
    """Correctly rounded f64 -> bf16 bits for normal bf16 values, by integer rounding of the f64 bits."""
    bits = x.view(np.uint64)
    shift = np.uint64(52 - 7)
    kept, rest = bits >> shift, bits & ((np.uint64(1) << shift) - np.uint64(1))
    half = np.uint64(1) << (shift - np.uint64(1))
    up = (rest > half) | ((rest == half) & ((kept & np.uint64(1)) == 1))
    kept = kept + up.astype(np.uint64)
    sign = (kept >> np.uint64(63 - 45)) & np.uint64(1)
    exponent = ((kept >> np.uint64(7)) & np.uint64(0x7FF)).astype(np.int64) - 1023 + 127
    mantissa = kept & np.uint64(0x7F)
    return ((sign << np.uint64(15)) | (exponent.astype(np.uint64) << np.uint64(7)) | mantissa).astype(np.uint16)


def _double_rounding_traps(spacing_bits: int) -> np.ndarray:
    """Values just off a tie of the target type that f32 rounding would move onto the tie."""
    rng = np.random.default_rng(5)
    base = rng.uniform(1, 2, 300)
    ulp = 2.0 ** -spacing_bits
    ties = np.floor(base / ulp) * ulp + ulp / 2
    nudge = 2.0 ** -40
    values = np.concatenate([ties + nudge, ties - nudge, ties, base, -(ties + nudge)])
    return np.concatenate([values * 2.0 ** e for e in (-20, -3, 0, 5, 14)])


def test_bf16_rounds_once():
    x = _double_rounding_traps(7)
    got = xhlo.compile(_convert(x.size, "bf16"))(x)
    want = _bf16_nearest_even(x)
    twice = x.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
    assert np.any(twice != want)  # the inputs do catch double rounding
    np.testing.assert_array_equal(got.view(np.uint16), want)


def test_f16_matches_numpy_including_overflow_and_specials():
    x = np.concatenate([
        _double_rounding_traps(10),
        [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65520.0, 1e6, -1e300, 2.0**-24, 2.0**-26, 3e-8, 1e-300],
    ])
    got = xhlo.compile(_convert(x.size, "f16"))(x)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(got.view(np.uint16)[finite], want.view(np.uint16)[finite])


def test_jax_f64_program_with_half_precision():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import export

    with jax.enable_x64(True):
        x = np.linspace(-3, 3, 64)

        def f(v):
            return (v.astype(jnp.bfloat16) * 3).astype(jnp.float64) + v.astype(jnp.float16).astype(jnp.float64)

        exported = export.export(jax.jit(f), platforms=["cpu"])(x)
        np.testing.assert_array_equal(xhlo.compile(exported)(x), np.asarray(jax.jit(f)(x)))

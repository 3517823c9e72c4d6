"""xhlo-bf16-conversions: bf16 <-> f32 conversions, and bf16 maximum/minimum of any width.

Conversions: against ml_dtypes' round-to-nearest-even, for every width; vectors
of 8, 16, 32, ... lanes use the CPU's vcvtneps2bf16, which flushes subnormal
inputs and results to zero, as XLA:CPU's vectorized code does.

Min/max: LLVM once narrowed the widened f32 maximum back to a bf16 one and
aborted the process on 9- and 17-lane vectors, so each case runs in a child
process: a regression is a failed test, not a dead test session. Oracle: numpy's
maximum/minimum on the same values in f32 (exact), NaN propagating, and IEEE's
order of signed zeros (maximum(-0, +0) = +0), which numpy leaves to operand order.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import xhlo

from .conftest import run_in_child

CHILD = """
import sys
import ml_dtypes, numpy as np, xhlo

op, n = sys.argv[1], int(sys.argv[2])
t = f"tensor<{n}xbf16>"
module = f'''func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = stablehlo.{op} %a, %b : {t}
  return %0 : {t}
}}'''
rng = np.random.default_rng(n)
a_special = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, 0.0, -0.0]
b_special = [1.5, 0.0, -0.0, -np.inf, np.inf, np.nan, 0.0, -0.0]
a = np.resize(np.concatenate([a_special, rng.standard_normal(n)]), n).astype(ml_dtypes.bfloat16)
b = np.resize(np.concatenate([b_special, rng.standard_normal(n)]), n).astype(ml_dtypes.bfloat16)
got = np.asarray(xhlo.compile(module, cache=False)(a, b)).astype(np.float32)
x, y = a.astype(np.float32), b.astype(np.float32)
want = getattr(np, op)(x, y)
zeros = (x == 0) & (y == 0)
negative = np.signbit(x) & np.signbit(y) if op == "maximum" else np.signbit(x) | np.signbit(y)
want[zeros] = np.where(negative[zeros], -0.0, 0.0)
np.testing.assert_array_equal(got, want)
np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
"""


@pytest.mark.parametrize("n", [3, 9, 17, 100])
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_bf16_min_max_compile_and_match_numpy(op, n):
    run_in_child(CHILD, op, str(n))


SPECIAL = np.array([1.0, np.nan, -np.nan, np.inf, -np.inf, -0.0, 3.4e38, 3.3961e38, 65504.0,
                    1.00390625, 1.01171875, 1.0039063, -2.9960938, 1e-40, -1e-40, 3e-39, 1e-45],
                   np.float32)


def _convert(n: int, source: str, target: str) -> str:
    return f"""func.func @main(%a: tensor<{n}x{source}>) -> tensor<{n}x{target}> {{
  %0 = stablehlo.convert %a : (tensor<{n}x{source}>) -> tensor<{n}x{target}>
  return %0 : tensor<{n}x{target}>
}}"""


@pytest.mark.parametrize("n", [1, 3, 9, 16, 32, 100])
def test_f32_to_bf16_rounds_to_nearest_even(n):
    x = np.resize(SPECIAL, n)
    got = np.asarray(xhlo.compile(_convert(n, "f32", "bf16"), cache=False)(x)).view(np.uint16)
    want = x.astype(ml_dtypes.bfloat16).view(np.uint16)  # NaNs keep their sign, quieted
    subnormal = (np.abs(x) < np.finfo(np.float32).tiny) & (x != 0)
    np.testing.assert_array_equal(got[~subnormal], want[~subnormal])
    if n in (1, 3, 9):  # scalar code, odd vectors: the integer rounding, exact
        np.testing.assert_array_equal(got, want)
    else:  # vectors of 2^k lanes (tiles of longer rows): exact, or flushed to a signed zero
        assert np.all((got[subnormal] == want[subnormal]) | (got[subnormal] == want[subnormal] & 0x8000))


@pytest.mark.parametrize("n", [1, 9, 16])
def test_bf16_to_f32_and_f64_are_exact(n):
    x = np.resize(SPECIAL, n).astype(ml_dtypes.bfloat16)
    for target, dtype in (("f32", np.float32), ("f64", np.float64)):
        got = np.asarray(xhlo.compile(_convert(n, "bf16", target), cache=False)(x))
        np.testing.assert_array_equal(got, x.astype(dtype))

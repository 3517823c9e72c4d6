"""xhlo-bf16-extf-as-shift: bf16 maximum/minimum of any vector width compile and are exact.

Before the pass LLVM narrowed the widened f32 maximum back to a bf16 one and
aborted the process on 9- and 17-lane vectors, so each case runs in a child
process: a regression is a failed test, not a dead test session. Oracle: numpy's
maximum/minimum on the same values in f32 (exact), NaN propagating, and IEEE's
order of signed zeros (maximum(-0, +0) = +0), which numpy leaves to operand order.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

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
    done = subprocess.run([sys.executable, "-c", CHILD, op, str(n)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]

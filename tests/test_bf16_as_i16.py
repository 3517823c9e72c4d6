"""xhlo-bf16-as-i16: bf16 arrays whose rows (or whole copies) are 8k+1 lanes.

LLVM aborted the process on loads, stores and phis of 9, 17, 25, ... bf16 lanes
(and on masked stores it split), so each case runs in a child process: a
regression is a failed test, not a dead session. Oracle: numpy on the same bf16
values (selects, copies, a constant and one exact doubling: no bf16 rounding).
"""

from __future__ import annotations

import pytest

from .conftest import run_in_child

CHILD = """
import sys
import ml_dtypes, numpy as np, xhlo

rows, cols = int(sys.argv[1]), int(sys.argv[2])
t, p = f"tensor<{rows}x{cols}xbf16>", f"tensor<{rows}x{cols}xi1>"
rng = np.random.default_rng(rows * cols)
k = (rng.integers(-8, 8, (rows, cols)) / 4).astype(np.float32)  # exact in bf16
constant = np.array2string(k, separator=", ", threshold=10**6).replace(chr(10), "")
module = f'''func.func @main(%a: {t}, %b: {t}) -> ({t}, {t}) {{
  %two = stablehlo.constant dense<2.0> : {t}
  %doubled = stablehlo.multiply %a, %two : {t}
  %p = stablehlo.compare GT, %b, %a : ({t}, {t}) -> {p}
  %k = stablehlo.constant dense<{constant}> : {t}
  %picked = stablehlo.select %p, %a, %doubled : {p}, {t}
  %0 = stablehlo.select %p, %picked, %k : {p}, {t}
  %1 = stablehlo.transpose %0, dims = [1, 0] : ({t}) -> tensor<{cols}x{rows}xbf16>
  %2 = stablehlo.reshape %1 : (tensor<{cols}x{rows}xbf16>) -> {t}
  return %0, %2 : {t}, {t}
}}'''
a, b = (rng.standard_normal((rows, cols)).astype(ml_dtypes.bfloat16) for _ in range(2))
selected, moved = xhlo.compile(module, cache=False)(a, b)
want = np.where(b > a, a.astype(np.float32), k)
np.testing.assert_array_equal(np.asarray(selected, np.float32), want)
np.testing.assert_array_equal(np.asarray(moved, np.float32), want.T.reshape(rows, cols))
"""


@pytest.mark.parametrize("rows,cols", [(9, 9), (2, 9), (17, 17), (1, 9), (9, 1), (33, 33), (4, 8), (3, 17)])
def test_bf16_rows_of_8k_plus_1_lanes(rows, cols):
    run_in_child(CHILD, str(rows), str(cols))

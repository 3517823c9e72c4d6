"""xhlo-fold-constant-atan2: atan2 of constants (a conformance program's inputs) as IEEE 754.

MLIR's math folder made atan2 of splat zeros NaN. Oracles: numpy's arctan2 in
float64 rounded once, and xhlo's own run-time atan2 on the same values given as
arguments (they must agree, signed zeros included).
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

Y = [0.0, -0.0, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.inf, np.nan, 0.0, 2.5]
X = [0.0, 0.0, -0.0, -0.0, 0.0, -0.0, np.inf, np.inf, -np.inf, 1.0, np.nan, -3.0]


def _literal(values, elem: str) -> str:
    bits = {"f16": np.uint16, "f32": np.uint32, "f64": np.uint64}[elem]
    dtype = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[elem]
    words = np.array(values, dtype).view(bits)
    return "[" + ", ".join(f"0x{int(w):0{2 * dtype().itemsize}X}" for w in words) + "]"


@pytest.mark.parametrize("elem,dtype", [("f16", np.float16), ("f32", np.float32), ("f64", np.float64)])
def test_constant_atan2_follows_ieee(elem, dtype):
    t = f"tensor<{len(Y)}x{elem}>"
    module = f"""func.func @main() -> {t} {{
  %y = stablehlo.constant dense<{_literal(Y, elem)}> : {t}
  %x = stablehlo.constant dense<{_literal(X, elem)}> : {t}
  %0 = stablehlo.atan2 %y, %x : {t}
  return %0 : {t}
}}"""
    folded = xhlo.compile(module, cache=False)()
    want = np.arctan2(np.array(Y, dtype).astype(np.float64), np.array(X, dtype).astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(folded, want)
    np.testing.assert_array_equal(np.signbit(folded), np.signbit(want))
    runtime = xhlo.compile(f"""func.func @main(%y: {t}, %x: {t}) -> {t} {{
  %0 = stablehlo.atan2 %y, %x : {t}
  return %0 : {t}
}}""", cache=False)(np.array(Y, dtype), np.array(X, dtype))
    np.testing.assert_array_equal(np.signbit(runtime), np.signbit(folded))
    np.testing.assert_allclose(runtime, folded, rtol=4e-3 if elem == "f16" else 1e-6)


@pytest.mark.parametrize("y,x,want", [(0.0, 0.0, 0.0), (-0.0, 0.0, -0.0), (0.0, -0.0, np.pi), (-0.0, -0.0, -np.pi)])
def test_splat_zeros(y, x, want):
    module = f"""func.func @main() -> tensor<2x2xf32> {{
  %y = stablehlo.constant dense<{y}> : tensor<2x2xf32>
  %x = stablehlo.constant dense<{x}> : tensor<2x2xf32>
  %0 = stablehlo.atan2 %y, %x : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}}"""
    result = xhlo.compile(module, cache=False)()
    np.testing.assert_array_equal(result, np.full((2, 2), want, np.float32))
    assert np.signbit(result).all() == np.signbit(want)

"""xhlo-extend-half-float-math: math ops on bf16/f16 in combiner bodies round after
each op. Oracles: the StableHLO reference interpreter and numpy rounding after
every op (upstream's extension had left exp's result unrounded for log1p)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import xhlo
from xhlo import reference

LOG_ADD_EXP = """
    %m = stablehlo.maximum %a, %b : tensor<{e}>
    %d = stablehlo.subtract %a, %b : tensor<{e}>
    %abs = stablehlo.abs %d : tensor<{e}>
    %neg = stablehlo.negate %abs : tensor<{e}>
    %x = stablehlo.exponential %neg : tensor<{e}>
    %l = stablehlo.log_plus_one %x : tensor<{e}>
    %r = stablehlo.add %m, %l : tensor<{e}>"""


def _pairwise_reduce(elem: str, n: int) -> str:
    """A reduce of n x 2 pairs by log-add-exp: one combination per pair (order-free)."""
    return f"""func.func @main(%p: tensor<{n}x2x{elem}>) -> tensor<{n}x{elem}> {{
  %init = stablehlo.constant dense<0xFC00> : tensor<f16>
  %i = stablehlo.convert %init : (tensor<f16>) -> tensor<{elem}>
  %0 = stablehlo.reduce(%p init: %i) across dimensions = [1] : (tensor<{n}x2x{elem}>, tensor<{elem}>) -> tensor<{n}x{elem}>
    reducer(%a: tensor<{elem}>, %b: tensor<{elem}>) {{{LOG_ADD_EXP.format(e=elem)}
      stablehlo.return %r : tensor<{elem}>
    }}
  return %0 : tensor<{n}x{elem}>
}}"""


def _per_op(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log-add-exp rounded to the inputs' type after every op (f32 math in between)."""
    t = a.dtype
    r = lambda v: np.asarray(v, np.float32).astype(t)
    f = lambda v: v.astype(np.float32)
    m, d = np.maximum(a, b), r(f(a) - f(b))
    x = r(np.exp(-np.abs(f(d))))
    return r(f(m) + f(r(np.log1p(f(x)))))


@pytest.mark.parametrize("elem,dtype", [("f16", np.float16), ("bf16", ml_dtypes.bfloat16)])
def test_log_add_exp_in_a_combiner_rounds_after_every_op(elem, dtype):
    rng = np.random.default_rng(0)
    pairs = rng.uniform(-3, 3, (4096, 2)).astype(dtype)
    got = xhlo.compile(_pairwise_reduce(elem, len(pairs)), cache=False)(pairs)
    want = _per_op(pairs[:, 0], pairs[:, 1])
    # exp and log1p of f32 may differ from numpy's by an f32 ulp, which moves a
    # rounding to the half type by one of its ulps at most, and rarely
    ulps = np.abs(got.astype(np.float32) - want.astype(np.float32)) / np.spacing(want.astype(dtype)).astype(np.float32)
    assert ulps.max() <= 1 and (ulps > 0).mean() < 0.01
    if elem == "f16":  # the interpreter evaluates f16 (not bf16) arguments
        np.testing.assert_array_equal(got, reference.evaluate(_pairwise_reduce(elem, len(pairs)), pairs)[0])

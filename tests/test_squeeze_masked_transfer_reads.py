"""xhlo-squeeze-masked-transfer-reads: column sums of 3-D arrays whose rows need a masked tile.

Such a sum, fused with a second reduction, once failed to compile (the
unrolled masked read got a mask of the wrong type). Oracle: numpy in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo


def _module(a: int, b: int, c: int) -> str:
    return f"""func.func @main(%x: tensor<{a}x{b}x{c}xf32>) -> (tensor<{c}xf32>, tensor<{b}x{c}xf32>) {{
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0]
       : (tensor<{a}x{b}x{c}xf32>, tensor<f32>) -> tensor<{b}x{c}xf32>
  %1 = stablehlo.reduce(%0 init: %zero) applies stablehlo.add across dimensions = [0]
       : (tensor<{b}x{c}xf32>, tensor<f32>) -> tensor<{c}xf32>
  return %1, %0 : tensor<{c}xf32>, tensor<{b}x{c}xf32>
}}"""


@pytest.mark.parametrize("shape", [(5, 7, 100), (3, 5, 33), (2, 3, 17), (4, 2, 64)])
def test_outer_sums_of_3d_arrays(shape):
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    total, partial = xhlo.compile(_module(*shape), cache=False)(x)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(partial, x64.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(total, x64.sum((0, 1)), rtol=1e-5, atol=1e-5)

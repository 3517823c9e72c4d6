"""xhlo-outline-serial-loops: serial loop nests run from their own functions, results unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import xhlo
from xhlo.passes import partition_codegen

SORT = """
func.func @main(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %0 = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<65536xf32>) -> tensor<65536xf32>
  return %0 : tensor<65536xf32>
}
"""

@pytest.mark.parametrize("cores", [1, 2])
def test_sort_runs_from_outlined_merge_passes(monkeypatch, cores):
    monkeypatch.setattr(partition_codegen, "available_cores", lambda: cores)
    exe = xhlo.compile(SORT, cache=False, keep_ir=True)
    assert "@main_serial_0" in exe.ir("xhlo-lower-to-loops")
    x = np.random.default_rng(0).standard_normal(65536).astype(np.float32)
    x[::97] = -0.0
    np.testing.assert_array_equal(exe(x), np.sort(x, kind="stable"))

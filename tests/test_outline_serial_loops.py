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


def _many_small_loops(count: int) -> str:
    """``count`` results, each a short serial loop of its own (below min-ops)."""
    results = ", ".join(["tensor<100xf32>"] * count)
    lines = [f"func.func @main(%x: tensor<{count}x100xf32>) -> ({results}) {{"]
    for i in range(count):
        lines += [
            f"  %s{i} = stablehlo.slice %x [{i}:{i + 1}, 0:100] : (tensor<{count}x100xf32>) -> tensor<1x100xf32>",
            f"  %r{i} = stablehlo.reshape %s{i} : (tensor<1x100xf32>) -> tensor<100xf32>",
            f"  %c{i} = stablehlo.constant dense<{i}.0> : tensor<100xf32>",
            f"  %m{i} = stablehlo.multiply %r{i}, %c{i} : tensor<100xf32>",
            f"  %y{i} = stablehlo.sine %m{i} : tensor<100xf32>",
        ]
    lines += [f"  return {', '.join(f'%y{i}' for i in range(count))} : {results}", "}"]
    return "\n".join(lines)


@pytest.mark.parametrize("cores", [1, 2])
def test_small_loops_outlined_to_balance_parts(monkeypatch, cores):
    """A public function with most of the program's work gives away small nests on 2 cores."""
    monkeypatch.setattr(partition_codegen, "available_cores", lambda: cores)
    exe = xhlo.compile(_many_small_loops(48), cache=False, keep_ir=True)
    outlined = exe.ir("xhlo-lower-to-loops").count("func.func private @main_serial_")
    assert (outlined > 0) == (cores == 2)
    x = np.random.default_rng(1).standard_normal((48, 100)).astype(np.float32)
    for i, y in enumerate(exe(x)):
        np.testing.assert_allclose(y, np.sin(x[i] * np.float32(i)), rtol=2e-6, atol=2e-6)

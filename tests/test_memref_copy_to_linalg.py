"""xhlo-memref-copy-to-linalg on loop-carried slices, whose buffers have run-time strides.

A ``while`` loop that carries a slice copies it into a fresh buffer each step;
the copy is a memcpy when the slice is contiguous at run time and an element
loop when it is strided. Both are checked against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

N = 8192  # above MIN_VERSIONED_ELEMENTS


def carried_slice_loop(start: int, stride: int, steps: int = 3) -> str:
    """``steps`` times: x -> concatenate(x, x + 1)[start : start + stride * N : stride]."""
    t, wide = f"tensor<{N}xf32>", f"tensor<{2 * N}xf32>"
    return f"""func.func @main(%x0: {t}) -> {t} {{
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %k = stablehlo.constant dense<{steps}> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %x = %x0) : tensor<i32>, {t}
  cond {{
    %c = stablehlo.compare LT, %i, %k : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }} do {{
    %f = stablehlo.constant dense<1.0> : {t}
    %x1 = stablehlo.add %x, %f : {t}
    %g = stablehlo.concatenate %x, %x1, dim = 0 : ({t}, {t}) -> {wide}
    %y = stablehlo.slice %g [{start}:{start + stride * (N - 1) + 1}:{stride}] : ({wide}) -> {t}
    %n = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %n, %y : tensor<i32>, {t}
  }}
  return %r#1 : {t}
}}"""


def numpy_loop(x: np.ndarray, start: int, stride: int, steps: int = 3) -> np.ndarray:
    for _ in range(steps):
        x = np.concatenate([x, x + 1])[start : start + stride * (N - 1) + 1 : stride]
    return x


@pytest.mark.parametrize("start,stride", [(5, 1), (1, 2)], ids=["contiguous", "strided"])
def test_carried_slice(start, stride):
    exe = xhlo.compile(carried_slice_loop(start, stride))
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    np.testing.assert_array_equal(exe(x), numpy_loop(x, start, stride))


def test_contiguous_copy_becomes_memcpy():
    exe = xhlo.compile(carried_slice_loop(5, 1))
    assert "scf.if" in exe.ir("xhlo-bufferize") and "llvm.intr.memcpy" in exe.ir("xhlo-lower-to-llvm")

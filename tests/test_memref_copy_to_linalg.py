"""xhlo-memref-copy-to-linalg on loop-carried slices, whose buffers have run-time strides.

A ``while`` loop that carries a slice copies it into a fresh buffer each step;
the copy is a memcpy when the slice is contiguous at run time and an element
loop when it is strided. Both are checked against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

from .conftest import counted_loop_body

N = 8192  # above MIN_VERSIONED_ELEMENTS


def carried_slice_loop(start: int, stride: int, steps: int = 3) -> str:
    """``steps`` times: x -> concatenate(x, x + 1)[start : start + stride * N : stride]."""
    t, wide = f"tensor<{N}xf32>", f"tensor<{2 * N}xf32>"
    body = f"""    %f = stablehlo.constant dense<1.0> : {t}
    %x1 = stablehlo.add %v, %f : {t}
    %g = stablehlo.concatenate %v, %x1, dim = 0 : ({t}, {t}) -> {wide}
    %y = stablehlo.slice %g [{start}:{start + stride * (N - 1) + 1}:{stride}] : ({wide}) -> {t}"""
    return f"func.func @main(%x: {t}) -> {t} {{\n{counted_loop_body(t, steps, body)}\n}}"


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

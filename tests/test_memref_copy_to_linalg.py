"""xhlo-memref-copy-to-linalg on loop-carried slices, whose buffers have run-time strides,
and on loop results copied into the function's out-parameter.

A ``while`` loop that carries a slice copies it into a fresh buffer each step;
the copy is a memcpy when the slice is contiguous at run time and an element
loop when it is strided. A loop's result is copied into the out-parameter by
a memcpy, in parallel chunks when large. All are checked against numpy.
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


@pytest.mark.parametrize("dtype", ["f32", "i8", "f64", "bf16"])
def test_large_result_copy_in_parallel_chunks(dtype):
    """A loop result of more than 1 MiB (not a whole number of chunks) reaches the
    out-parameter through the chunked copy, on the thread pool. (9 steps: up to 8,
    xhlo-unroll-short-loops would unroll the loop and leave no loop result.)"""
    n = (1 << 20) + 12345
    t = f"tensor<{n}x{dtype}>"
    body = f"""    %one = stablehlo.constant dense<{"1" if dtype.startswith("i") else "1.0"}> : {t}
    %y = stablehlo.add %v, %one : {t}"""
    exe = xhlo.compile(f"func.func @main(%x: {t}) -> {t} {{\n{counted_loop_body(t, 9, body)}\n}}")
    numpy_dtype = xhlo.dtypes.to_numpy_dtype(dtype)
    x = (np.arange(n) % 100).astype(numpy_dtype)
    np.testing.assert_array_equal(exe(x), x + numpy_dtype.type(9))
    functions = exe.ir("xhlo-lower-to-loops").split("func.func ")
    assert any("xhlo.parallel_body" in f and "memref.copy" in f for f in functions)

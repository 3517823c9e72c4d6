"""xhlo-elide-loop-init-copies: loops that only read their starting argument read it in place.

Checked against numpy: the results, the caller's argument left untouched, and
repeated calls (a loop that freed the caller's array would crash or corrupt
the heap). Loops that write their value in place, or may not run, keep the copy.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

from .conftest import counted_loop_body
from .test_memref_copy_to_linalg import N as SLICE_N
from .test_memref_copy_to_linalg import carried_slice_loop, numpy_loop

N = 4096
T = f"tensor<{N}xf32>"


def loop_module(steps: int, body: str) -> str:
    return f"func.func @main(%x: {T}) -> {T} {{\n{counted_loop_body(T, steps, body)}\n}}"


def copies_of_the_argument(exe: xhlo.Executable) -> int:
    """Element-loop copies of %arg0, plus memcpys of it (a flat view made from its metadata)."""
    ir_text = exe.ir("xhlo-bufferize")
    return ir_text.count("ins(%arg0 : memref") + ir_text.count("memref.extract_strided_metadata %arg0 ")


def sine_steps(x: np.ndarray, steps: int) -> np.ndarray:
    for _ in range(steps):
        x = np.sin(x) + x
    return x


READS = f"""    %s = stablehlo.sine %v : {T}
    %y = stablehlo.add %s, %v : {T}"""
# the step writes one element of its carried value: bufferization updates it in place
UPDATES = f"""    %u = stablehlo.constant dense<7.0> : tensor<1xf32>
    %y = stablehlo.dynamic_update_slice %v, %u, %i : ({T}, tensor<1xf32>, tensor<i32>) -> {T}"""


def test_a_loop_that_reads_its_argument_starts_from_it():
    exe = xhlo.compile(loop_module(5, READS))
    assert copies_of_the_argument(exe) == 0
    x = np.linspace(-2, 2, N, dtype=np.float32)
    kept = x.copy()
    for _ in range(50):
        np.testing.assert_allclose(exe(x), sine_steps(kept, 5), rtol=1e-5)
    np.testing.assert_array_equal(x, kept)


def test_a_loop_carrying_a_slice_starts_from_its_argument():
    """The carried value has a dynamic layout (a slice of each step's concatenation): the
    argument enters the loop through a memref.cast."""
    exe = xhlo.compile(carried_slice_loop(5, 1))
    assert copies_of_the_argument(exe) == 0
    x = np.random.default_rng(0).standard_normal(SLICE_N).astype(np.float32)
    kept = x.copy()
    for _ in range(50):
        np.testing.assert_array_equal(exe(x), numpy_loop(kept, 5, 1))
    np.testing.assert_array_equal(x, kept)


@pytest.mark.parametrize("steps,body", [(5, UPDATES), (0, READS)], ids=["writes-in-place", "no-trip"])
def test_the_copy_stays_when_needed(steps, body):
    exe = xhlo.compile(loop_module(steps, body))
    assert copies_of_the_argument(exe) == 1
    x = np.linspace(-2, 2, N, dtype=np.float32)
    kept = x.copy()
    want = kept.copy()
    if body is UPDATES:
        want[:steps] = 7.0
    for _ in range(50):
        np.testing.assert_array_equal(exe(x), want)
    np.testing.assert_array_equal(x, kept)

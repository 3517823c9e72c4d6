"""The Executable's call path: argument blocks built once and refilled per call.

Every call must see its own arrays' addresses, whatever the arrays are:
views, read-only or empty arrays, 0-d values, Python scalars, and calls
alternating between functions and threads.
"""

from __future__ import annotations

import threading

import numpy as np
import xhlo

ADD = """func.func @main(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = stablehlo.add %a, %b : tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
func.func public @scale(%a: tensor<f64>, %b: tensor<5xf64>) -> tensor<5xf64> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f64>) -> tensor<5xf64>
  %1 = stablehlo.multiply %0, %b : tensor<5xf64>
  return %1 : tensor<5xf64>
}"""


def test_each_call_reads_its_own_arrays():
    exe = xhlo.compile(ADD)
    for k in range(5):
        a = np.full((3, 4), k, np.float32)
        b = np.arange(12, dtype=np.float32).reshape(3, 4)
        np.testing.assert_array_equal(exe(a, b), a + b)


def test_views_readonly_and_scalars():
    exe = xhlo.compile(ADD)
    big = np.arange(48, dtype=np.float32).reshape(6, 8)
    view = big[::2, 1:5]  # not contiguous: copied
    frozen = np.ones((3, 4), np.float32)
    frozen.setflags(write=False)
    np.testing.assert_array_equal(exe(view, frozen), view + 1)
    np.testing.assert_array_equal(exe.call_function("scale", 2.5, np.arange(5.0)), 2.5 * np.arange(5.0))
    np.testing.assert_array_equal(exe.call_function("scale", np.float64(-1), np.ones(5)), -np.ones(5))


def test_empty_arrays():
    exe = xhlo.compile("""func.func @main(%a: tensor<0x3xf32>) -> tensor<0x3xf32> {
  %0 = stablehlo.negate %a : tensor<0x3xf32>
  return %0 : tensor<0x3xf32>
}""")
    assert exe(np.zeros((0, 3), np.float32)).shape == (0, 3)


def test_alternating_functions_and_threads():
    exe = xhlo.compile(ADD)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
            s, v = rng.standard_normal(), rng.standard_normal(5)
            if not np.array_equal(exe(a, b), a + b) or not np.allclose(exe.call_function("scale", s, v), s * v):
                errors.append(seed)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors

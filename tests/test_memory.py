"""Results own their buffers and repeated calls do not leak."""

from __future__ import annotations

import gc
import resource

import numpy as np

import xhlo

from .conftest import binary_module


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def test_ten_thousand_calls_grow_rss_less_than_10mb():
    exe = xhlo.compile(binary_module("add", "64x", "f32"))
    a = np.ones(64, np.float32)
    for _ in range(200):  # warm up caches and allocator pools
        exe(a, a)
    gc.collect()
    before = _rss_mb()
    for _ in range(10_000):
        exe(a, a)
    gc.collect()
    assert _rss_mb() - before < 10


def test_results_survive_the_executable():
    exe = xhlo.compile(binary_module("multiply", "8x", "f64"))
    a = np.arange(8, dtype=np.float64)
    out = exe(a, a)
    del exe
    gc.collect()
    np.testing.assert_array_equal(out, a * a)


def test_intermediates_and_loop_buffers_are_freed():
    """Buffers of intermediate values and of while-loop iterations are deallocated."""
    src = """func.func @main(%a: tensor<65536xf32>) -> tensor<65536xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %x = %a) : tensor<i32>, tensor<65536xf32>
  cond {
    %n = stablehlo.constant dense<20> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %e = stablehlo.sine %x : tensor<65536xf32>
    %y = stablehlo.add %e, %x : tensor<65536xf32>
    stablehlo.return %i2, %y : tensor<i32>, tensor<65536xf32>
  }
  %s = stablehlo.multiply %r#1, %r#1 : tensor<65536xf32>
  return %s : tensor<65536xf32>
}"""
    exe = xhlo.compile(src)
    a = np.linspace(0, 1, 65536, dtype=np.float32)
    expected = a.copy()
    for _ in range(20):
        expected = np.sin(expected) + expected
    np.testing.assert_allclose(exe(a), expected * expected, rtol=1e-5)
    gc.collect()
    before = _rss_mb()
    for _ in range(100):  # 100 calls x 21 buffers x 256 KiB = 525 MiB if leaked
        exe(a)
    gc.collect()
    assert _rss_mb() - before < 10


def test_arguments_are_not_modified():
    src = """func.func @main(%a: tensor<4xf32>, %u: tensor<1xf32>) -> tensor<4xf32> {
  %i = stablehlo.constant dense<2> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %a, %u, %i : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
    a, u = np.zeros(4, np.float32), np.ones(1, np.float32)
    np.testing.assert_array_equal(xhlo.compile(src)(a, u), [0, 0, 1, 0])
    np.testing.assert_array_equal(a, [0, 0, 0, 0])


def _data_address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


LARGE = 1 << 21  # f32 elements: 8 MiB, well above RECYCLE_MIN_BYTES


def test_a_dropped_large_result_lends_its_memory_to_the_next_call():
    exe = xhlo.compile(binary_module("add", f"{LARGE}x", "f32"))
    a = np.arange(LARGE, dtype=np.float32)
    first = exe(a, a)
    address = _data_address(first)
    del first
    second = exe(a, a)
    assert _data_address(second) == address
    np.testing.assert_array_equal(second, a + a)


def test_a_kept_view_of_a_dropped_result_is_never_reused():
    exe = xhlo.compile(binary_module("add", f"{LARGE}x", "f32"))
    a = np.arange(LARGE, dtype=np.float32)
    view = exe(a, a)[::2]  # the result itself is dropped at once
    for _ in range(3):
        other = exe(a, np.ones_like(a))
        assert not np.shares_memory(view, other)
    np.testing.assert_array_equal(view, (a + a)[::2])


def test_results_alive_together_never_share_memory():
    exe = xhlo.compile(binary_module("add", f"{LARGE}x", "f32"))
    a = np.arange(LARGE, dtype=np.float32)
    results = [exe(a, np.full_like(a, k)) for k in range(4)]
    for k, result in enumerate(results):
        np.testing.assert_array_equal(result, a + k)
    assert len({_data_address(r) for r in results}) == 4

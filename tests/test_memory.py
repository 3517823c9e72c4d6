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

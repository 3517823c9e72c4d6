"""xhlo-cache-large-allocations: loop buffers parked and reused, checked against numpy."""

from __future__ import annotations

import gc
import threading

import numpy as np

import xhlo
from xhlo.runtime.program import free_cached_blocks

# A while loop (not a counted one: the bound moves) whose body allocates two
# large buffers per step, of two sizes: they live on the heap, not in the arena.
LOOP = """func.func @main(%x: tensor<131072xf32>) -> (tensor<131072xf32>, tensor<f32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %steps = stablehlo.constant dense<6> : tensor<i32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %r:4 = stablehlo.while(%i = %zero, %n = %steps, %v = %x, %s = %init) : tensor<i32>, tensor<i32>, tensor<131072xf32>, tensor<f32>
  cond {
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %half = stablehlo.constant dense<0.5> : tensor<131072xf32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %n2 = stablehlo.add %n, %zero : tensor<i32>
    %w = stablehlo.multiply %v, %half : tensor<131072xf32>
    %u = stablehlo.add %w, %v : tensor<131072xf32>
    %wide = stablehlo.concatenate %u, %w, dim = 0 : (tensor<131072xf32>, tensor<131072xf32>) -> tensor<262144xf32>
    %total = stablehlo.reduce(%wide init: %init) applies stablehlo.add across dimensions = [0] : (tensor<262144xf32>, tensor<f32>) -> tensor<f32>
    %s2 = stablehlo.add %s, %total : tensor<f32>
    stablehlo.return %i2, %n2, %u, %s2 : tensor<i32>, tensor<i32>, tensor<131072xf32>, tensor<f32>
  }
  return %r#2, %r#3 : tensor<131072xf32>, tensor<f32>
}"""


def _expected(x: np.ndarray) -> tuple[np.ndarray, float]:
    v, s = x.astype(np.float64), 0.0
    for _ in range(6):
        w = v * 0.5
        v = w + v
        s += v.sum() + w.sum()
    return v, s


def _check(exe, x):
    v, s = exe(x)
    want_v, want_s = _expected(x)
    np.testing.assert_allclose(v, want_v, rtol=1e-6)
    np.testing.assert_allclose(s, want_s, rtol=1e-4)


def test_the_allocator_is_compiled_in():
    llvm = xhlo.compile(LOOP).ir("xhlo-lower-to-llvm")
    assert "llvm.func internal @_mlir_memref_to_llvm_alloc" in llvm
    assert "llvm.call @_mlir_memref_to_llvm_alloc" in llvm


def test_repeated_calls_reuse_parked_blocks_correctly():
    exe = xhlo.compile(LOOP, cache=False)
    rng = np.random.default_rng(0)
    for _ in range(5):  # later calls take the blocks earlier ones parked
        _check(exe, rng.standard_normal(131072).astype(np.float32))


def test_concurrent_callers_share_the_cache():
    exe = xhlo.compile(LOOP, cache=False)
    inputs = [np.full(131072, k + 1, np.float32) for k in range(4)]
    errors = []

    def call(x):
        try:
            for _ in range(10):
                _check(exe, x)
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=call, args=(x,)) for x in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_freeing_the_parked_blocks_keeps_the_program_working():
    exe = xhlo.compile(LOOP, cache=False)
    x = np.linspace(0.5, 1, 131072, dtype=np.float32)
    _check(exe, x)
    free_cached_blocks(exe._engine)
    free_cached_blocks(exe._engine)  # nothing parked: a no-op
    _check(exe, x)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def test_released_executables_return_their_blocks():
    """Each executable parks ~2.5 MiB; 40 of them compiled and dropped must not keep 100 MiB."""
    x = np.ones(131072, np.float32)
    exe = xhlo.compile(LOOP, cache=False)
    _check(exe, x)
    del exe
    gc.collect()
    before = _rss_mb()
    for _ in range(40):
        exe = xhlo.compile(LOOP, cache=False, keep_ir=False)
        exe(x)
        del exe
        gc.collect()
    assert _rss_mb() - before < 60

"""xhlo-internalize-functions: only the host's entry points stay external, and programs still run.

The lowered module may keep external only the ``_mlir_ciface_`` wrappers of
public functions and the functions ``xhlo.runtime`` looks up by name; every
public function must still be callable, parallel loops must still reach the
thread pool and the parked heap blocks must still be releasable.
"""

from __future__ import annotations

import re

import numpy as np
import xhlo
from xhlo.passes import partition_codegen
from xhlo.runtime import parallel
from xhlo.runtime.program import packed_function

from tests.test_cache_large_allocations import LOOP, _expected

RNG = np.random.default_rng(5)
N = 1 << 20  # large enough for xhlo-parallelize-loops

TWO_FUNCTIONS = f"""
func.func @main(%x: tensor<{N}xf32>) -> tensor<{N}xf32> {{
  %e = stablehlo.exponential %x : tensor<{N}xf32>
  %r = stablehlo.multiply %e, %x : tensor<{N}xf32>
  return %r : tensor<{N}xf32>
}}
func.func @other(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {{
  %s = func.call @helper(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}}
func.func private @helper(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {{
  %s = stablehlo.subtract %x, %y : tensor<8xf32>
  return %s : tensor<8xf32>
}}
"""


def _external_definitions(llvm: str) -> set[str]:
    """Names of the llvm.func definitions (not declarations) with the default linkage."""
    return set(re.findall(r"^  llvm\.func @([\w$.]+)\(.*\{$", llvm, re.MULTILINE))


def _internal_definitions(llvm: str) -> set[str]:
    return set(re.findall(r"^  llvm\.func internal @([\w$.]+)\(", llvm, re.MULTILINE))


def test_only_the_c_interface_and_runtime_lookups_stay_external(monkeypatch):
    # one core: xhlo-partition-codegen (which makes the bodies it moves external) stays out
    monkeypatch.setattr(partition_codegen, "available_cores", lambda: 1)
    llvm = xhlo.compile(TWO_FUNCTIONS, entry="main", cache=False).ir("xhlo-lower-to-llvm")
    assert _external_definitions(llvm) == {
        "_mlir_ciface_main", "_mlir_ciface_other", "xhlo_parallel_dispatch_slot",
    }
    assert {"main", "other", "xhlo_parallel_for", "main_parallel_0"} <= _internal_definitions(llvm)


def test_every_public_function_still_runs():
    exe = xhlo.compile(TWO_FUNCTIONS, entry="main")
    x = RNG.standard_normal(N).astype(np.float32)
    np.testing.assert_allclose(exe(x), np.exp(x) * x, rtol=2e-6, atol=1e-6)
    a, b = (RNG.standard_normal(8).astype(np.float32) for _ in range(2))
    np.testing.assert_array_equal(exe.call_function("other", a, b), a - b)


def test_parallel_loops_still_reach_the_pool():
    previous = parallel.set_num_threads(2)
    try:
        exe = xhlo.compile(TWO_FUNCTIONS, entry="main", cache=False)
        before = parallel.jobs_run()
        x = RNG.standard_normal(N).astype(np.float32)
        np.testing.assert_allclose(exe(x), np.exp(x) * x, rtol=2e-6, atol=1e-6)
        assert parallel.jobs_run() > before
    finally:
        parallel.set_num_threads(previous)


def test_parked_blocks_can_still_be_released():
    exe = xhlo.compile(LOOP, cache=False)
    assert "xhlo_free_cached_blocks" in _external_definitions(exe.ir("xhlo-lower-to-llvm"))
    assert packed_function(exe._engine, "xhlo_free_cached_blocks") != 0
    x = RNG.standard_normal(131072).astype(np.float32)
    v, s = exe(x)
    want_v, want_s = _expected(x)
    np.testing.assert_allclose(v, want_v, rtol=1e-6)
    np.testing.assert_allclose(s, want_s, rtol=1e-4)

"""xhlo-parallelize-loops and its native thread pool: large loops on all cores, same results.

Every program runs with the pool (2 and 3 threads) and serially (1 thread);
all must match numpy, and each other exactly (a chunk computes its iterations
as the serial loop does). The pool's job counter shows which runs really went
parallel: programs above the pass's ``min-work`` do, small ones do not, and a
call made while the pool is busy (another Python thread's loop, a loop body
calling a program) runs serially instead of waiting.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np
import pytest
import xhlo
from xhlo.passes.parallelize_loops import ParallelizeLoops
from xhlo.runtime import native_pool, parallel

from .conftest import load_from_disk_cache

RNG = np.random.default_rng(11)


def _elementwise(n: int) -> str:
    return f"""
func.func @main(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %t = stablehlo.tanh %x : tensor<{n}xf32>
  %xt = stablehlo.multiply %x, %t : tensor<{n}xf32>
  %sq = stablehlo.multiply %x, %x : tensor<{n}xf32>
  %neg = stablehlo.negate %sq : tensor<{n}xf32>
  %e = stablehlo.exponential %neg : tensor<{n}xf32>
  %r = stablehlo.add %xt, %e : tensor<{n}xf32>
  return %r : tensor<{n}xf32>
}}"""


def _elementwise_numpy(x):
    return x * np.tanh(x) + np.exp(-x * x)


def softmax_module(rows: int, cols: int) -> str:
    """Row-wise softmax of a rows x cols f32 matrix, as StableHLO."""
    t, r = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}xf32>"
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : ({t}, tensor<f32>) -> {r}
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : ({r}) -> {t}
  %d = stablehlo.subtract %x, %mb : {t}
  %e = stablehlo.exponential %d : {t}
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : ({t}, tensor<f32>) -> {r}
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : ({r}) -> {t}
  %y = stablehlo.divide %e, %sb : {t}
  return %y : {t}
}}"""


def _softmax_numpy(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _gather(vocab: int, width: int, lookups: int) -> str:
    return f"""
func.func @main(%table: tensor<{vocab}x{width}xf32>, %ids: tensor<{lookups}x1xi32>) -> tensor<{lookups}x{width}xf32> {{
  %rows = "stablehlo.gather"(%table, %ids) {{
    dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
                                          start_index_map = [0], index_vector_dim = 1>,
    slice_sizes = array<i64: 1, {width}>, indices_are_sorted = false
  }} : (tensor<{vocab}x{width}xf32>, tensor<{lookups}x1xi32>) -> tensor<{lookups}x{width}xf32>
  return %rows : tensor<{lookups}x{width}xf32>
}}"""


def _gather_args(vocab: int, width: int, lookups: int):
    table = RNG.standard_normal((vocab, width)).astype(np.float32)
    return table, RNG.integers(0, vocab, (lookups, 1)).astype(np.int32)


# name -> (program, inputs, numpy oracle, runs on the pool); the element
# counts straddle the default min-work (an element of _elementwise is ~22 ops)
CASES = {
    "elementwise_large": (_elementwise(1 << 20), lambda: (RNG.standard_normal(1 << 20).astype(np.float32),),
                          _elementwise_numpy, True),
    "elementwise_above_threshold": (_elementwise(1 << 14), lambda: (RNG.standard_normal(1 << 14).astype(np.float32),),
                                    _elementwise_numpy, True),
    "elementwise_below_threshold": (_elementwise(4096), lambda: (RNG.standard_normal(4096).astype(np.float32),),
                                    _elementwise_numpy, False),
    "softmax_large": (softmax_module(256, 4096), lambda: (RNG.standard_normal((256, 4096)).astype(np.float32),),
                      _softmax_numpy, True),
    "softmax_medium": (softmax_module(32, 1024), lambda: (RNG.standard_normal((32, 1024)).astype(np.float32),),
                       _softmax_numpy, True),
    "softmax_small": (softmax_module(8, 128), lambda: (RNG.standard_normal((8, 128)).astype(np.float32),),
                      _softmax_numpy, False),
    "gather_large": (_gather(8192, 256, 8192), lambda: _gather_args(8192, 256, 8192),
                     lambda table, ids: table[ids[:, 0]], True),
    "gather_small": (_gather(64, 32, 16), lambda: _gather_args(64, 32, 16),
                     lambda table, ids: table[ids[:, 0]], False),
}

_BODY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_DISPATCH = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)


class _Jobs:
    """Loops the pool ran on several threads since the fixture started."""

    def __init__(self):
        self._start = parallel.jobs_run()

    def __call__(self) -> int:
        return parallel.jobs_run() - self._start


@pytest.fixture
def jobs():
    """Counts the loops handed to the pool; restores the thread count afterwards."""
    previous = parallel.get_num_threads()
    yield _Jobs()
    parallel.set_num_threads(previous)


def _dispatch_python_body(body, begin: int, end: int, step: int) -> None:
    """Run ``body(begin, end)`` (a Python function) through the native dispatcher."""
    pool = native_pool.pool()
    assert pool is not None
    callback = _BODY(lambda _captures, b, e: body(b, e))
    _DISPATCH(pool.dispatch_address)(ctypes.cast(callback, ctypes.c_void_p), None, begin, end, step)


def _ranges_run(begin: int, end: int, step: int) -> list[tuple[int, int]]:
    """The sub-ranges the dispatcher hands to the body, in the order they started."""
    ranges, lock = [], threading.Lock()

    def body(b, e):
        with lock:
            ranges.append((b, e))

    _dispatch_python_body(body, begin, end, step)
    return ranges


def test_chunks_cover_the_range_once_on_the_step_grid():
    for begin, end, step, count in [(0, 1024, 16, 4), (3, 100, 7, 4), (0, 5, 1, 8), (10, 11, 4, 2), (0, 0, 1, 2)]:
        pieces = parallel.chunks(begin, end, step, count)
        assert len(pieces) <= count
        covered = [i for b, e in pieces for i in range(b, e, step)]
        assert covered == list(range(begin, end, step))
        assert all((b - begin) % step == 0 for b, _ in pieces)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_native_dispatcher_runs_every_chunk_once(threads, jobs):
    parallel.set_num_threads(threads)
    for begin, end, step in [(0, 1024, 16), (3, 100, 7), (0, 5, 1), (10, 11, 4), (-8, 40, 3), (0, 100_000, 1)]:
        ranges = _ranges_run(begin, end, step)
        iterations = -(-(end - begin) // step)
        if threads == 1 or iterations < 2:
            assert ranges == [(begin, end)]
        else:
            expected = parallel.chunks(begin, end, step, threads * native_pool.CHUNKS_PER_THREAD)
            assert sorted(ranges) == expected
    assert (jobs() > 0) == (threads > 1)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_threads_and_serial_match_numpy(name, threads, jobs):
    program, make_args, oracle, large = CASES[name]
    exe = xhlo.compile(program)
    assert ("xhlo_parallel_for" in exe.ir("xhlo-lower-to-loops")) == large
    args = make_args()
    parallel.set_num_threads(threads)
    threaded = exe(*args)
    assert (jobs() > 0) == large
    parallel.set_num_threads(1)
    before = jobs()
    serial = exe(*args)
    assert jobs() == before
    np.testing.assert_array_equal(threaded, serial)
    np.testing.assert_allclose(threaded, oracle(*args), rtol=2e-6, atol=1e-6)


def test_the_row_loop_of_a_softmax_is_outlined():
    loops = xhlo.compile(softmax_module(256, 4096)).ir("xhlo-lower-to-loops")
    # the max, the exponentials, the sum and the division share one loop over rows
    assert loops.count("call @xhlo_parallel_for") == 1
    assert "func.func private @main_parallel_0" in loops


def test_many_python_threads_call_one_program_at_once(jobs):
    parallel.set_num_threads(2)
    exe = xhlo.compile(_elementwise(1 << 20))
    inputs = [RNG.standard_normal(1 << 20).astype(np.float32) for _ in range(4)]
    results: dict[int, list] = {i: [] for i in range(4)}

    def caller(i):
        for _ in range(5):
            results[i].append(exe(inputs[i]))

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 1 <= jobs() <= 20  # a call finding the pool busy runs serially
    for i, x in enumerate(inputs):
        expected = _elementwise_numpy(x)
        for got in results[i]:
            np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6)


def test_a_program_called_inside_a_parallel_loop_runs_serially(jobs):
    """A loop body (on the caller and on a pool thread) calls a parallel program: no deadlock."""
    parallel.set_num_threads(2)
    exe = xhlo.compile(_elementwise(1 << 16))
    inputs = RNG.standard_normal((8, 1 << 16)).astype(np.float32)
    outputs: dict[int, np.ndarray] = {}

    def body(b, e):
        for i in range(b, e):
            outputs[i] = exe(inputs[i])

    _dispatch_python_body(body, 0, 8, 1)
    assert jobs() == 1  # the outer loop; the inner calls found the pool busy
    assert sorted(outputs) == list(range(8))
    for i, x in enumerate(inputs):
        np.testing.assert_allclose(outputs[i], _elementwise_numpy(x), rtol=2e-6, atol=1e-6)


def test_devices_of_a_replicated_run_compute_correctly(jobs):
    parallel.set_num_threads(2)
    exe = xhlo.compile(_elementwise(1 << 20), num_replicas=2)
    inputs = [RNG.standard_normal(1 << 20).astype(np.float32) for _ in range(2)]
    outputs = exe.run_replicated([(x,) for x in inputs])
    for x, out in zip(inputs, outputs):
        got = out[0] if isinstance(out, tuple) else out
        np.testing.assert_allclose(got, _elementwise_numpy(x), rtol=2e-6, atol=1e-6)


def test_program_from_the_disk_cache_uses_the_pool(tmp_path, jobs):
    parallel.set_num_threads(2)
    program = softmax_module(256, 4096)
    x = RNG.standard_normal((256, 4096)).astype(np.float32)
    loaded = load_from_disk_cache(program, tmp_path)
    got = loaded(x)
    assert jobs() > 0
    np.testing.assert_allclose(got, _softmax_numpy(x), rtol=2e-6, atol=1e-6)


def test_min_work_decides_which_loops_are_outlined():
    from xhlo._mlir import ir, new_context
    from xhlo.pipeline import STAGES, build_pass_manager

    assert ParallelizeLoops().min_work > 4096
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(_elementwise(4096))
        for stage in STAGES[:4]:
            build_pass_manager(stage.text).run(module.operation)
        build_pass_manager("xhlo-parallelize-loops").run(module.operation)
        assert "call @xhlo_parallel_for" not in str(module)
        build_pass_manager("xhlo-parallelize-loops{min-work=4096}").run(module.operation)
        assert "call @xhlo_parallel_for" in str(module)

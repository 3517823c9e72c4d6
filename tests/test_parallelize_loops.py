"""xhlo-parallelize-loops and its thread pool: large loops on all cores, same results.

Every program runs with the pool (2 threads) and serially (1 thread); both
must match numpy, and each other exactly (a chunk computes its iterations as
the serial loop does). Counting the jobs handed to the pool shows which runs
really went parallel: large programs do, small ones, device threads of a
multi-device run and nested calls do not.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import xhlo
from xhlo import cache
from xhlo.runtime import parallel

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


def _softmax(rows: int, cols: int) -> str:
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


# name -> (program, inputs, numpy oracle, runs on the pool)
CASES = {
    "elementwise_large": (_elementwise(1 << 20), lambda: (RNG.standard_normal(1 << 20).astype(np.float32),),
                          _elementwise_numpy, True),
    "elementwise_small": (_elementwise(4096), lambda: (RNG.standard_normal(4096).astype(np.float32),),
                          _elementwise_numpy, False),
    "softmax_large": (_softmax(512, 4096), lambda: (RNG.standard_normal((512, 4096)).astype(np.float32),),
                      _softmax_numpy, True),
    "softmax_small": (_softmax(8, 128), lambda: (RNG.standard_normal((8, 128)).astype(np.float32),),
                      _softmax_numpy, False),
    "gather_large": (_gather(8192, 256, 8192), lambda: _gather_args(8192, 256, 8192),
                     lambda table, ids: table[ids[:, 0]], True),
    "gather_small": (_gather(64, 32, 16), lambda: _gather_args(64, 32, 16),
                     lambda table, ids: table[ids[:, 0]], False),
}


@pytest.fixture
def jobs(monkeypatch):
    """Counts the loops handed to the pool; restores the thread count afterwards."""
    count = [0]
    share = parallel._Pool.share

    def counting_share(self, job, helpers):
        count[0] += 1
        share(self, job, helpers)

    monkeypatch.setattr(parallel._Pool, "share", counting_share)
    previous = parallel.get_num_threads()
    yield count
    parallel.set_num_threads(previous)


def test_chunks_cover_the_range_once_on_the_step_grid():
    for begin, end, step, count in [(0, 1024, 16, 4), (3, 100, 7, 4), (0, 5, 1, 8), (10, 11, 4, 2), (0, 0, 1, 2)]:
        pieces = parallel.chunks(begin, end, step, count)
        assert len(pieces) <= count
        covered = [i for b, e in pieces for i in range(b, e, step)]
        assert covered == list(range(begin, end, step))
        assert all((b - begin) % step == 0 for b, _ in pieces)


@pytest.mark.parametrize("name", sorted(CASES))
def test_threads_and_serial_match_numpy(name, jobs):
    program, make_args, oracle, large = CASES[name]
    exe = xhlo.compile(program)
    assert ("xhlo_parallel_for" in exe.ir("xhlo-lower-to-loops")) == large
    args = make_args()
    parallel.set_num_threads(2)
    threaded = exe(*args)
    assert (jobs[0] > 0) == large
    parallel.set_num_threads(1)
    before = jobs[0]
    serial = exe(*args)
    assert jobs[0] == before
    np.testing.assert_array_equal(threaded, serial)
    np.testing.assert_allclose(threaded, oracle(*args), rtol=2e-6, atol=1e-6)


def test_row_loops_of_a_softmax_are_outlined():
    exe = xhlo.compile(_softmax(512, 4096))
    loops = exe.ir("xhlo-lower-to-loops")
    assert loops.count("call @xhlo_parallel_for") >= 1
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
    assert jobs[0] == 20
    for i, x in enumerate(inputs):
        expected = _elementwise_numpy(x)
        for got in results[i]:
            np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6)


def test_devices_of_a_replicated_run_stay_serial(jobs):
    parallel.set_num_threads(2)
    exe = xhlo.compile(_elementwise(1 << 20), num_replicas=2)
    inputs = [RNG.standard_normal(1 << 20).astype(np.float32) for _ in range(2)]
    outputs = exe.run_replicated([(x,) for x in inputs])
    assert jobs[0] == 0
    for x, out in zip(inputs, outputs):
        got = out[0] if isinstance(out, tuple) else out
        np.testing.assert_allclose(got, _elementwise_numpy(x), rtol=2e-6, atol=1e-6)


def test_program_from_the_disk_cache_uses_the_pool(tmp_path, jobs):
    parallel.set_num_threads(2)
    program = _softmax(512, 4096)
    x = RNG.standard_normal((512, 4096)).astype(np.float32)
    cache.clear_memory()  # compile, so that the object code is stored
    xhlo.compile(program, cache_dir=str(tmp_path))
    if not list(tmp_path.glob("*.so")):
        pytest.skip("no linker: no disk cache")
    cache.clear_memory()
    loaded = xhlo.compile(program, cache_dir=str(tmp_path))
    assert type(loaded._engine).__name__ == "LoadedProgram"
    got = loaded(x)
    assert jobs[0] > 0
    np.testing.assert_allclose(got, _softmax_numpy(x), rtol=2e-6, atol=1e-6)


def test_small_min_work_parallelizes_small_loops_too():
    from xhlo._mlir import ir, new_context
    from xhlo.pipeline import STAGES, build_pass_manager

    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(_elementwise(4096))
        for stage in STAGES[:4]:
            build_pass_manager(stage.text).run(module.operation)
        build_pass_manager("xhlo-parallelize-loops{min-work=4096}").run(module.operation)
        assert "call @xhlo_parallel_for" in str(module)

"""Call overhead and compile caching of xhlo next to jax.jit, in one run.

    python benchmarks/bench_overhead.py [--calls 20000]

* call: one call of a tiny program (an add of two 4-element f32 arrays) with
  numpy inputs, xhlo's ``Executable.__call__`` against ``jax.jit``'s dispatch
  of the same function on numpy inputs (``block_until_ready`` included);
* compile: the same program exported with ``jax.export``: a cold xhlo compile,
  a repeated compile in the process (memory cache), a compile in a fresh
  process with ``XHLO_CACHE_DIR`` filled by a previous process (disk cache),
  and XLA's own ``jit(...).lower(...).compile()``;
* loop result: a ``fori_loop`` of 2 negations over 16 MiB, whose carried
  value becomes the result (xhlo copies it into the caller's array: the
  handoff a loop pays on top of its steps), against ``jax.jit`` on a device
  array.

Times are medians; the machine may be shared, so compare within one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

FRESH_PROCESS = """
import sys, time
import xhlo
artifact = open(sys.argv[1], "rb").read()
start = time.perf_counter()
xhlo.compile(artifact)
print(time.perf_counter() - start)
"""


def per_call(fn, calls: int) -> float:
    """Median seconds per call over 5 batches of ``calls`` calls."""
    fn()
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def median_time(fn, repeats: int = 5) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def fresh_process_compile(path: str, cache_dir: str) -> float:
    env = dict(os.environ, XHLO_CACHE_DIR=cache_dir)
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, path],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()

    import jax
    from jax import export

    import xhlo

    def add(a, b):
        return a + b

    x = np.arange(4, dtype=np.float32)
    y = np.ones(4, np.float32)
    jitted = jax.jit(add)
    exported = export.export(jitted)(x, y)
    artifact = exported.mlir_module_serialized  # a StableHLO portable artifact: no jax needed
    exe = xhlo.compile(artifact)
    np.testing.assert_array_equal(exe(x, y), np.asarray(jitted(x, y)))

    xhlo_call = per_call(lambda: exe(x, y), args.calls)
    jax_call = per_call(lambda: jitted(x, y).block_until_ready(), args.calls)
    print(
        f"call    xhlo {xhlo_call * 1e6:7.2f} us   jax.jit {jax_call * 1e6:7.2f} us   "
        f"ratio {xhlo_call / jax_call:.2f}"
    )

    cold = median_time(lambda: xhlo.compile(artifact, cache=False))
    warm = median_time(lambda: xhlo.compile(artifact))
    def xla_compile():
        jax.clear_caches()  # else jax returns its cached executable
        jax.jit(add).lower(x, y).compile()

    xla = median_time(xla_compile)
    with tempfile.TemporaryDirectory() as cache_dir:
        path = os.path.join(cache_dir, "add.bin")
        with open(path, "wb") as f:
            f.write(artifact)
        fresh_process_compile(path, cache_dir)  # fills the disk cache
        disk = statistics.median(fresh_process_compile(path, cache_dir) for _ in range(3))
    print(
        f"compile xhlo cold {cold * 1e3:7.1f} ms   XLA {xla * 1e3:7.1f} ms   ratio {cold / xla:.2f}"
    )
    print(f"cached  xhlo memory {warm * 1e3:6.1f} ms   disk (new process) {disk * 1e3:6.1f} ms")
    loop_result()


def loop_result() -> None:
    """A loop's large result handed to the caller, next to jax.jit."""
    import jax
    from jax import export

    import xhlo

    x = np.linspace(-1, 1, 1 << 22, dtype=np.float32)  # 16 MiB
    jitted = jax.jit(lambda v: jax.lax.fori_loop(0, 2, lambda i, w: -w, v))
    exe = xhlo.compile(export.export(jitted)(x))
    np.testing.assert_array_equal(exe(x), x)
    on_device = jax.device_put(x)
    xhlo_loop = per_call(lambda: exe(x), 20)
    jax_loop = per_call(lambda: jitted(on_device).block_until_ready(), 20)
    print(
        f"loop    xhlo {xhlo_loop * 1e3:7.2f} ms   jax.jit {jax_loop * 1e3:7.2f} ms   "
        f"ratio {xhlo_loop / jax_loop:.2f}  (fori_loop of 2 negations, 16 MiB)"
    )


if __name__ == "__main__":
    main()

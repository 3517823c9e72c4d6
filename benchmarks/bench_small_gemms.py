"""Few-row products: xhlo's register-blocked loops against its sgemm call and XLA.

    python benchmarks/bench_small_gemms.py [BxMxKxN ...] [--repeat 200]

For each shape (batch x rows x inner x columns; the default list spans the
cases ``xhlo-lower-small-gemms`` takes and the ones it leaves to BLAS) this
compiles one ``dot_general`` three ways in one process: with the pass (what
``xhlo.compile`` does), without it (the OpenBLAS call, as before the pass),
and with ``jax.jit``. It checks both xhlo results against numpy in float64
and prints the best of 5 means of ``--repeat`` calls each, and the ratios.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

DEFAULT_SHAPES = (
    "1x16x384x1024",  # an LSTM step (lstm_scan)
    "1x1x384x1024",
    "1x4x384x1024",
    "1x32x384x1024",
    "1x64x384x1024",  # more rows than max-rows: sgemm either way
    "1x16x1024x4096",  # a 16 MiB rhs: left to sgemm
    "8x8x256x512",
    "32x16x64x64",
)


def module(batch: int, m: int, k: int, n: int) -> str:
    ta, tb, to = f"tensor<{batch}x{m}x{k}xf32>", f"tensor<{batch}x{k}x{n}xf32>", f"tensor<{batch}x{m}x{n}xf32>"
    return f"""func.func @main(%a: {ta}, %b: {tb}) -> {to} {{
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : ({ta}, {tb}) -> {to}
  return %0 : {to}
}}"""


def best_mean(fn, args, repeat: int) -> float:
    fn(*args)
    means = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn(*args)
        means.append((time.perf_counter() - start) / repeat)
    return min(means)


def compile_without_kernel(source: str):
    """The program as it compiled before the pass: the pass does nothing for this compile."""
    import xhlo
    from xhlo.passes.lower_small_gemms import LowerSmallGemms

    run = LowerSmallGemms.run
    LowerSmallGemms.run = lambda self, module: None
    try:
        return xhlo.compile(source, cache=False)
    finally:
        LowerSmallGemms.run = run


def main() -> None:
    import jax
    import jax.numpy as jnp
    import xhlo

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shapes", nargs="*", default=DEFAULT_SHAPES, help="BxMxKxN")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    xla = jax.jit(jnp.matmul)
    print(f"{'shape':>16}  {'kernel us':>9}  {'sgemm us':>9}  {'XLA us':>8}  {'kernel/sgemm':>12}  {'kernel/XLA':>10}")
    for shape in args.shapes:
        batch, m, k, n = map(int, shape.split("x"))
        a = rng.standard_normal((batch, m, k), dtype=np.float32)
        b = rng.standard_normal((batch, k, n), dtype=np.float32)
        want = a.astype(np.float64) @ b
        source = module(batch, m, k, n)
        times = []
        for exe in (xhlo.compile(source, cache=False), compile_without_kernel(source)):
            np.testing.assert_allclose(exe(a, b), want, rtol=1e-4, atol=1e-4)
            times.append(best_mean(exe, (a, b), args.repeat))
        times.append(best_mean(lambda x, y: xla(x, y).block_until_ready(), (a, b), args.repeat))
        kernel, sgemm, xla_s = (t * 1e6 for t in times)
        print(f"{shape:>16}  {kernel:9.1f}  {sgemm:9.1f}  {xla_s:8.1f}  {kernel / sgemm:12.2f}  {kernel / xla_s:10.2f}")


if __name__ == "__main__":
    main()

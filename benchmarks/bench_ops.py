"""Common JAX operations outside the suite, xhlo beside jax.jit in one process.

    python benchmarks/bench_ops.py [--only SUBSTRING ...] [--repeat 15]

``run.py`` measures 17 workloads the issue names; this sweep measures the
everyday operations around them (linear algebra, scans and scatters, masks,
transcendental functions, quantized and transposed data), where session 16
found xhlo 2-150x behind XLA. Each function is exported with ``jax.export``,
compiled by xhlo and by ``jax.jit``, checked against JAX's result (with the
case's tolerance), and timed: the median of ``--repeat`` calls after one
warm-up. It prints both times, their ratio and both compile times. Nothing is
asserted about speed; a case that fails to compile or to match prints why.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections.abc import Callable

import ml_dtypes
import numpy as np

RNG = np.random.default_rng(0)


def _normal(*shape: int, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def _complex(*shape: int) -> np.ndarray:
    return (_normal(*shape) + 1j * _normal(*shape)).astype(np.complex64)


def _ints(low: int, high: int, *shape: int, dtype=np.int32) -> np.ndarray:
    return RNG.integers(low, high, shape).astype(dtype)


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    fn: Callable
    make_args: Callable[[], tuple]
    rtol: float = 1e-4
    atol: float = 1e-4


def _cases() -> list[Case]:
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    import jax.scipy.ndimage
    from jax import lax

    def spd(n):
        a = _normal(n, n)
        return (a @ a.T + n * np.eye(n)).astype(np.float32)

    def masks(x, y):
        mask = (x > 0) & (y < 0.5)
        return jnp.where(mask, x, 0.0), jnp.where(mask, y, 1.0), mask.sum()

    def int8_dense(x, w, scale):  # a quantized linear layer: int8 activations and weights, per-column scales
        return jnp.matmul(x, w.T, preferred_element_type=jnp.int32).astype(jnp.float32) * scale

    def clip_by_global_norm(*params):  # recomputes the norm per parameter, as written
        return [p * jnp.minimum(1.0, 1.0 / jnp.sqrt(sum((q * q).sum() for q in params))) for p in params]

    def key(seed):
        return jax.random.wrap_key_data(seed)

    def per_example_grads(w, xs, ys):  # vmap(grad): a batched outer product, transposed
        return jax.vmap(jax.grad(lambda w, x, y: ((jnp.tanh(x @ w) - y) ** 2).sum()), in_axes=(None, 0, 0))(w, xs, ys)

    def cross_entropy(logits, labels):  # reads 4096 of the log-probabilities
        return -jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], 1).mean()

    def layernorm_grad(x, g):  # x - mean and its scaled forms read by several reductions
        def layernorm(x):
            centred = x - x.mean(-1, keepdims=True)
            return (centred * lax.rsqrt(x.var(-1, keepdims=True) + 1e-5) * g).sum()
        return jax.grad(layernorm)(x)

    seed = np.array([0, 42], np.uint32)
    return [
        Case("lu_factor 256", lambda a: jsl.lu_factor(a)[0], lambda: (_normal(256, 256),), 1e-3, 1e-3),
        Case("solve 256", lambda a, b: jnp.linalg.solve(a + 256 * jnp.eye(256), b),
             lambda: (_normal(256, 256), _normal(256, 16))),
        Case("cholesky 512", jnp.linalg.cholesky, lambda: (spd(512),), 1e-3, 1e-3),
        Case("qr 256", lambda a: jnp.linalg.qr(a)[1], lambda: (_normal(256, 256),), 1e-3, 1e-3),
        Case("eigvalsh 64", jnp.linalg.eigvalsh, lambda: (spd(64),), 1e-3, 1e-3),
        Case("svd values 64", lambda a: jnp.linalg.svd(a, compute_uv=False), lambda: (_normal(64, 64),), 1e-3, 1e-3),
        Case("segment_sum 1M -> 1000", lambda d, s: jax.ops.segment_sum(d, s, 1000),
             lambda: (_normal(1 << 20), _ints(0, 1000, 1 << 20)), 1e-3, 1e-2),
        Case("bincount 1M", lambda s: jnp.bincount(s, length=1024), lambda: (_ints(0, 1024, 1 << 20),)),
        Case("while_loop scalar 100000",
             lambda x: lax.while_loop(lambda c: c[0] < 100000, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0), (0, x))[1],
             lambda: (np.float32(1),)),
        Case("cumsum axis 0 4096x1024", lambda x: jnp.cumsum(x, 0), lambda: (_normal(4096, 1024),), 1e-3, 1e-2),
        Case("searchsorted 1M in 4096", jnp.searchsorted, lambda: (np.sort(_normal(4096)), _normal(1 << 20))),
        Case("log1p 4M", jnp.log1p, lambda: (np.abs(_normal(1 << 22)),)),
        Case("expm1 4M", jnp.expm1, lambda: (_normal(1 << 22),)),
        Case("softplus 4M", jax.nn.softplus, lambda: (_normal(1 << 22),)),
        Case("log 4M", jnp.log, lambda: (np.abs(_normal(1 << 22)) + 0.1,)),
        Case("sin 4M", jnp.sin, lambda: (_normal(1 << 22),)),
        Case("arctan2 4M", jnp.arctan2, lambda: (_normal(1 << 22), _normal(1 << 22)), 1e-6, 1e-6),
        Case("masks read twice 4M", masks, lambda: (_normal(1 << 22), _normal(1 << 22))),
        Case("global-norm clip 16 x 256x256", clip_by_global_norm, lambda: tuple(_normal(256, 256) for _ in range(16))),
        Case("int8 matmul 512", lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.int32),
             lambda: (_ints(-128, 128, 512, 512, dtype=np.int8), _ints(-128, 128, 512, 512, dtype=np.int8)), 0, 0),
        Case("f32 decode step 1x4096 @ 4096x4096", jnp.matmul, lambda: (_normal(1, 4096), _normal(4096, 4096))),
        Case("bf16 decode step 4x4096 @ 4096x4096", lambda x, w: jnp.matmul(x, w, preferred_element_type=jnp.float32),
             lambda: (_normal(4, 4096, dtype=ml_dtypes.bfloat16), _normal(4096, 4096, dtype=ml_dtypes.bfloat16)),
             1e-3, 1e-3),
        Case("int8 decode step 1x4096 @ 4096x4096", lambda x, w: jnp.matmul(x, w, preferred_element_type=jnp.int32),
             lambda: (_ints(-128, 128, 1, 4096, dtype=np.int8), _ints(-128, 128, 4096, 4096, dtype=np.int8)), 0, 0),
        Case("int8 x @ w.T dequantized 1024x4096x1024", int8_dense,
             lambda: (_ints(-128, 128, 1024, 4096, dtype=np.int8), _ints(-128, 128, 1024, 4096, dtype=np.int8),
                      _normal(1024)), 1e-6, 1e-6),
        Case("transpose 2048x2048", lambda x: x.T + 1, lambda: (_normal(2048, 2048),), 0, 0),
        Case("transpose (2,1,0) 512x64x64", lambda x: jnp.transpose(x, (2, 1, 0)) * 2, lambda: (_normal(512, 64, 64),), 0, 0),
        Case("depthwise conv 3x3 8x56x56x128",
             lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                                   feature_group_count=128),
             lambda: (_normal(8, 56, 56, 128), _normal(3, 3, 1, 128)), 1e-3, 1e-3),
        Case("conv 7x7 stride 2 8x224x224x3->64",
             lambda x, w: lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
             lambda: (_normal(8, 224, 224, 3), _normal(7, 7, 3, 64)), 1e-3, 1e-3),
        Case("top_k 256 of 256x4096", lambda x: lax.top_k(x, 256)[0], lambda: (_normal(256, 4096),), 0, 0),
        Case("rfft2 512x512", jnp.fft.rfft2, lambda: (_normal(512, 512),), 1e-3, 1e-2),
        Case("fft rows 256x1024", jnp.fft.fft, lambda: (_complex(256, 1024),), 1e-3, 1e-2),
        Case("fft rows 64x1000", jnp.fft.fft, lambda: (_complex(64, 1000),), 1e-3, 1e-2),
        Case("fft 1M", jnp.fft.fft, lambda: (_complex(1 << 20),), 1e-3, 1e-1),
        Case("fft axis 0 of 512x257", lambda x: jnp.fft.fft(x, axis=0), lambda: (_complex(512, 257),), 1e-3, 1e-2),
        Case("irfft rows 512x257", lambda x: jnp.fft.irfft(x, 512), lambda: (_complex(512, 257),), 1e-3, 1e-2),
        Case("rfft 1M", jnp.fft.rfft, lambda: (_normal(1 << 20),), 1e-3, 1e-1),
        Case("irfft 1M", lambda x: jnp.fft.irfft(x, 1 << 20), lambda: (_complex((1 << 19) + 1),), 1e-3, 1e-1),
        Case("random uniform 4M", lambda s: jax.random.uniform(key(s), (1 << 22,)), lambda: (seed,), 0, 0),
        Case("random normal 4M", lambda s: jax.random.normal(key(s), (1 << 22,)), lambda: (seed,), 1e-5, 1e-6),
        Case("bf16 tanh 4M", jnp.tanh, lambda: (_normal(1 << 22, dtype=ml_dtypes.bfloat16),), 1e-2, 1e-2),
        Case("bf16 gelu 4M", jax.nn.gelu, lambda: (_normal(1 << 22, dtype=ml_dtypes.bfloat16),), 1e-2, 1e-2),
        Case("dropout 0.1 of 4M", lambda s, x: jnp.where(jax.random.bernoulli(key(s), 0.9, x.shape), x / 0.9, 0.0),
             lambda: (seed, _normal(1 << 22)), 1e-6, 1e-7),
        Case("concat rows 2x 2048x1024", lambda a, b: jnp.concatenate([a, b], 1),
             lambda: (_normal(2048, 1024), _normal(2048, 1024)), 0, 0),
        Case("flip + concat 4x1M", lambda a, b: jnp.concatenate([a[::-1], b, a, b[::-1]]),
             lambda: (_normal(1 << 20), _normal(1 << 20)), 0, 0),
        Case("take_along_axis 1024x1024", lambda x, i: jnp.take_along_axis(x, i, 1),
             lambda: (_normal(1024, 1024), _ints(0, 1024, 1024, 1024)), 0, 0),
        Case("complex matmul 256", lambda a, b: a @ b, lambda: (_complex(256, 256), _complex(256, 256)), 1e-3, 1e-3),
        Case("per-example grads 256 x 64x64", per_example_grads,
             lambda: (_normal(64, 64) * 0.1, _normal(256, 64), _normal(256, 64)), 1e-3, 1e-3),
        Case("grouped conv 4 x 16 channels 8x56x56x64",
             lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                                   feature_group_count=4),
             lambda: (_normal(8, 56, 56, 64), _normal(3, 3, 16, 64) * 0.05), 1e-3, 1e-3),
        Case("convolve 1M with 64", lambda a, k: jnp.convolve(a, k, mode="same"),
             lambda: (_normal(1 << 20), _normal(64)), 1e-3, 1e-3),
        Case("cumlogsumexp 1024x1024", lambda x: lax.cumlogsumexp(x, 1), lambda: (_normal(1024, 1024),), 1e-4, 1e-4),
        Case("cross-entropy int labels 4096x1000", cross_entropy,
             lambda: (_normal(4096, 1000), _ints(0, 1000, 4096)), 1e-4, 1e-4),
        Case("layernorm grad 4096x1024", layernorm_grad, lambda: (_normal(4096, 1024), _normal(1024)), 1e-3, 1e-3),
        Case("bf16 matmul f32 result 1024", lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float32),
             lambda: (_normal(1024, 1024, dtype=ml_dtypes.bfloat16), _normal(1024, 1024, dtype=ml_dtypes.bfloat16)),
             1e-2, 1e-2),
        Case("max of broadcast sum 4096", lambda a, b: (a[:, None] + b[None]).max(1),
             lambda: (_normal(4096), _normal(4096)), 0, 0),
        Case("pad reflect 8x256x256x3 by 16", lambda x: jnp.pad(x, ((0, 0), (16, 16), (16, 16), (0, 0)), mode="reflect"),
             lambda: (_normal(8, 256, 256, 3),), 0, 0),
        Case("conv1d NWC 8x4096x64 k5",
             lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")),
             lambda: (_normal(8, 4096, 64), _normal(5, 64, 64) * 0.05), 1e-3, 1e-3),
        Case("x[rows, cols] 1024x1024 at 1M", lambda x, r, c: x[r, c],
             lambda: (_normal(1024, 1024), _ints(-1100, 1100, 1 << 20), _ints(0, 1024, 1 << 20)), 0, 0),
        Case("map_coordinates 512x512 at 1M", lambda img, c: jax.scipy.ndimage.map_coordinates(img, c, order=1),
             lambda: (_normal(512, 512), RNG.uniform(0, 511, (2, 1 << 20)).astype(np.float32)), 1e-4, 1e-4),
        Case("random beta 1M", lambda s: jax.random.beta(key(s), 2.0, 3.0, (1 << 20,)), lambda: (seed,), 1e-4, 1e-4),
    ]


def _median_seconds(fn, args, repeat: int) -> float:
    fn(*args)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn(*args)
        for leaf in out if isinstance(out, (list, tuple)) else [out]:
            if hasattr(leaf, "block_until_ready"):
                leaf.block_until_ready()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _matches(got, want, case: Case) -> bool:
    got = got if isinstance(got, (list, tuple)) else [got]
    want = want if isinstance(want, (list, tuple)) else [want]
    return all(
        np.allclose(np.asarray(g).astype(complex), np.asarray(w).astype(complex), rtol=case.rtol, atol=case.atol)
        for g, w in zip(got, want)
    )


def run(case: Case, repeat: int) -> str:
    import jax
    import xhlo
    from jax import export

    args = case.make_args()
    jitted = jax.jit(case.fn)
    start = time.perf_counter()
    jitted.lower(*args).compile()
    xla_compile = time.perf_counter() - start
    exported = export.export(jitted, platforms=["cpu"])(*args)
    start = time.perf_counter()
    exe = xhlo.compile(exported)
    xhlo_compile = time.perf_counter() - start
    on_device = [jax.device_put(a) for a in args]  # XLA's inputs are its own buffers, as run.py's
    status = "ok" if _matches(exe(*args), jitted(*on_device), case) else "MISMATCH"
    xhlo_s, xla_s = _median_seconds(exe, args, repeat), _median_seconds(jitted, on_device, repeat)
    return (f"{case.name:36s} {xhlo_s * 1e3:9.3f} {xla_s * 1e3:9.3f} {xhlo_s / xla_s:7.2f} "
            f"{xhlo_compile * 1e3:8.0f} {xla_compile * 1e3:8.0f}  {status}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", default=[], help="cases whose name contains one of these")
    parser.add_argument("--repeat", type=int, default=15, help="timed calls per case (median)")
    args = parser.parse_args()
    from xhlo import blas

    print(f"OpenBLAS kernels: {blas.kernel_name()}", file=sys.stderr)
    print(f"{'case':36s} {'xhlo ms':>9s} {'XLA ms':>9s} {'ratio':>7s} {'xhlo c':>8s} {'XLA c':>8s}  check")
    return run_all(_cases(), run, args.only, args.repeat, 36)


def run_all(cases: list, run_one: Callable, only: list[str], repeat: int, width: int) -> int:
    """Print ``run_one(case, repeat)`` for each case named by ``only`` (all without it);
    1 if one failed to compile, run or match."""
    failed = False
    for case in cases:
        if only and not any(part in case.name for part in only):
            continue
        try:
            line = run_one(case, repeat)
        except Exception as err:  # noqa: BLE001  (a benchmark reports every case)
            line, failed = f"{case.name:{width}s} ERROR {type(err).__name__}: {str(err)[:200]}", True
        failed |= "MISMATCH" in line
        print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

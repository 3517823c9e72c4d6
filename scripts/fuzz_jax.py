"""Random JAX programs through xhlo, each compared with jax.jit: a bug-finding tool.

    python scripts/fuzz_jax.py [--seeds 0:400] [--constants] [--jobs 2]

Each seed builds one program of 2-8 steps over 1-3 arrays of one random shape
(dims 1-100, odd sizes on purpose) and dtype (f32, f64, bf16, f16, int8,
uint8, int32, int64, uint32): elementwise math, reductions, reshapes, slices,
pads and rolls, cumulative ops, dots and einsums, gathers and scatter-adds,
sorts and top_k, fori_loop/scan/cond, pooling, convolutions, complex numbers, FFTs.
The program is exported with ``jax.export`` (x64 on; ``--constants`` embeds the
inputs as constants, as StableHLO's conformance programs have them), compiled
by xhlo in a crash-isolated worker and compared with ``jax.jit``: integers
exactly, floats within a relative 2e-2 / 2e-4 / 1e-9 (16/32/64-bit) of
``max(1, |expected|)``. Prints the seeds that crash, fail to compile or
differ; ``--show SEED`` prints one program's StableHLO.

Not a test: a difference needs triage. Session 18's runs (3200 programs) found
7 bugs, since fixed; what remained were differences on JAX's side: XLA's
tanh rounds to 1.0 from 7.9 on (visible after a cast to int), its simplifier
turns ``abs(x*x)`` into ``x*x`` for wrapping int8, it keeps f32 precision
through a bf16 round trip inside a fused chain (``f32(bf16(atan2(a, b)))``,
seed 1; xhlo rounds, as StableHLO's ``convert`` says), f32 sums in another
order, and bf16 cumulative sums.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("JAX_ENABLE_X64", "1")

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import export, lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax_harnesses import drive

DIMS = [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 64, 100]
FLOATS = [np.float32, np.float32, np.float32, np.float64, ml_dtypes.bfloat16, np.float16]
INTS = [np.int32, np.int64, np.int8, np.uint8, np.uint32]


class Gen:
    def __init__(self, seed):
        self.r = np.random.default_rng(seed)
        self.seed = seed

    def choice(self, xs):
        return xs[self.r.integers(len(xs))]

    def shape(self, rank=None):
        rank = self.r.integers(0, 5) if rank is None else rank
        return tuple(int(self.choice(DIMS)) for _ in range(rank))

    def program(self):
        """(fn, args): fn builds a random expression DAG from the args."""
        dtype = self.choice(FLOATS) if self.r.random() < 0.75 else self.choice(INTS)
        base = self.shape(int(self.r.integers(1, 4)))
        n_args = int(self.r.integers(1, 4))
        args = []
        for _ in range(n_args):
            # broadcast-compatible shapes: drop leading dims or set some to 1
            s = list(base)
            if self.r.random() < 0.3 and s:
                s[self.r.integers(len(s))] = 1
            if self.r.random() < 0.2 and s:
                s = s[self.r.integers(len(s)):]
            args.append(self.array(tuple(s), dtype))
        steps = [self.step_spec() for _ in range(int(self.r.integers(2, 9)))]
        final = self.choice(["none", "sum", "max", "mean_axis", "none"])

        def fn(*xs):
            vals = list(xs)
            for spec in steps:
                try:
                    vals.append(apply(spec, vals))
                except (TypeError, ValueError, IndexError):
                    continue
            out = vals[-1]
            if final == "sum":
                out = jnp.sum(out.astype(jnp.float32) if out.dtype == jnp.bool_ else out)
            elif final == "max" and out.dtype != jnp.bool_ and out.size:
                out = jnp.max(out)
            elif final == "mean_axis" and out.ndim and jnp.issubdtype(out.dtype, jnp.floating):
                out = jnp.mean(out, axis=-1)
            return out, vals[len(xs):][:3]

        return fn, args

    def array(self, shape, dtype):
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            lo, hi = max(info.min, -50), min(info.max, 50)
            return self.r.integers(lo, hi + 1, shape).astype(dtype)
        return (self.r.standard_normal(shape) * 2).astype(dtype)

    def step_spec(self):
        kind = self.choice(["unary", "unary", "binary", "binary", "binary", "reduce", "shape", "shape",
                            "cumulative", "dot", "select", "convert", "index", "sort", "extra", "extra", "extra",
                            "fft"])
        return (kind, int(self.r.integers(0, 1 << 30)))


UNARY = ["neg", "abs", "exp_clip", "tanh", "sin", "sqrt_abs", "log1p_abs", "floor", "sign", "logistic",
         "square", "round", "rsqrt_abs1", "cos", "erf", "relu", "not_or_neg"]
BINARY = ["add", "sub", "mul", "max", "min", "div_safe", "pow_safe", "eq_select", "atan2", "rem_safe",
          "and_or_add", "lt_where"]


def pick_operands(vals, r, count):
    return [vals[int(r.integers(len(vals)))] for _ in range(count)]


def floating(x):
    return jnp.issubdtype(x.dtype, jnp.floating)


def along_axis(x, r, ops):
    """One of ``ops`` (functions of an array and an axis) on a random axis of x; an op
    that does not apply returns None, and the last one runs instead. A scalar stays."""
    if x.ndim == 0:
        return x
    axis = int(r.integers(x.ndim))
    op = ops[int(r.integers(len(ops)))]
    result = op(x, axis)
    return ops[-1](x, axis) if result is None else result


def apply(spec, vals):
    kind, seed = spec
    r = np.random.default_rng(seed)
    x, y = pick_operands(vals, r, 2)
    if kind == "unary":
        op = UNARY[int(r.integers(len(UNARY)))]
        if not floating(x) and op not in ("neg", "abs", "sign", "square", "relu", "not_or_neg"):
            x = x.astype(jnp.float32)
        return {
            "neg": lambda: -x, "abs": lambda: jnp.abs(x), "exp_clip": lambda: jnp.exp(jnp.clip(x, -10, 10)),
            "tanh": lambda: jnp.tanh(x), "sin": lambda: jnp.sin(x), "sqrt_abs": lambda: jnp.sqrt(jnp.abs(x)),
            "log1p_abs": lambda: jnp.log1p(jnp.abs(x)), "floor": lambda: jnp.floor(x), "sign": lambda: jnp.sign(x),
            "logistic": lambda: jax.nn.sigmoid(x), "square": lambda: x * x, "round": lambda: jnp.round(x),
            "rsqrt_abs1": lambda: lax.rsqrt(jnp.abs(x) + 1), "cos": lambda: jnp.cos(x),
            "erf": lambda: jax.scipy.special.erf(x), "relu": lambda: jnp.maximum(x, 0),
            "not_or_neg": lambda: ~x if not floating(x) else -x,
        }[op]()
    if kind == "binary":
        op = BINARY[int(r.integers(len(BINARY)))]
        if x.dtype != y.dtype:
            y = y.astype(x.dtype)
        if op in ("atan2",) and not floating(x):
            x, y = x.astype(jnp.float32), y.astype(jnp.float32)
        return {
            "add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "max": lambda: jnp.maximum(x, y),
            "min": lambda: jnp.minimum(x, y),
            "div_safe": lambda: x / (jnp.abs(y) + 1) if floating(x) else x // (jnp.abs(y) + 1),
            "pow_safe": lambda: jnp.power(jnp.abs(x) + 0.5, jnp.clip(y, -3, 3)) if floating(x) else x * y,
            "eq_select": lambda: jnp.where(x == y, x, y), "atan2": lambda: jnp.arctan2(x, y),
            "rem_safe": lambda: jnp.remainder(x, jnp.abs(y) + 1),
            "and_or_add": lambda: (x & y) if not floating(x) and x.dtype != jnp.bool_ else x + y,
            "lt_where": lambda: jnp.where(x < y, x * 2, y),
        }[op]()
    if kind == "reduce":
        return along_axis(x, r, [
            lambda v, ax: jnp.sum(v, axis=ax),
            lambda v, ax: jnp.max(v, axis=ax) if v.shape[ax] else v,
            lambda v, ax: jnp.argmax(v, axis=ax) if v.shape[ax] else v,
            lambda v, ax: jnp.min(v, axis=ax, keepdims=True) if v.shape[ax] else v,
            lambda v, ax: jax.nn.softmax(v, axis=ax) if floating(v) else None,
            lambda v, ax: jnp.mean(v.astype(jnp.float32), axis=ax),
        ])
    if kind == "shape":
        op = r.integers(7)
        if op == 0 and x.ndim >= 2:
            return jnp.transpose(x, tuple(r.permutation(x.ndim)))
        if op == 1:
            return x.reshape(-1)
        if op == 2 and x.ndim >= 1:
            ax = int(r.integers(x.ndim))
            n = x.shape[ax]
            start = int(r.integers(0, max(n, 1)))
            step = int(r.integers(1, 4))
            idx = [slice(None)] * x.ndim
            idx[ax] = slice(start, None, step)
            return x[tuple(idx)]
        if op == 3 and x.ndim >= 1:
            ax = int(r.integers(x.ndim))
            return jnp.concatenate([x, jnp.flip(x, ax)], axis=ax)
        if op == 4 and x.ndim >= 1:
            pads = [(int(r.integers(0, 3)), int(r.integers(0, 3))) for _ in range(x.ndim)]
            mode = ["constant", "edge", "reflect"][int(r.integers(3))]
            return jnp.pad(x, pads, mode=mode) if min(x.shape) > 1 else jnp.pad(x, pads)
        if op == 5:
            return jnp.broadcast_to(x, (3, *x.shape))
        if x.ndim >= 1:
            return jnp.roll(x, int(r.integers(-3, 4)), axis=int(r.integers(x.ndim)))
        return x
    if kind == "cumulative":
        return along_axis(x, r, [
            lambda v, ax: jnp.cumsum(v, axis=ax),
            lambda v, ax: lax.cummax(v, axis=ax),
            lambda v, ax: jax.lax.cumlogsumexp(v, axis=ax) if floating(v) else None,
            lambda v, ax: jnp.cumsum(v, axis=ax, reverse=True),
        ])
    if kind == "dot":
        if x.ndim >= 1 and floating(x):
            k = x.shape[-1]
            w = jnp.asarray(np.random.default_rng(seed).standard_normal((k, int(r.choice([1, 3, 16, 33])))), x.dtype)
            return x @ w
        return x
    if kind == "select":
        z = pick_operands(vals, r, 1)[0]
        if x.dtype != y.dtype:
            y = y.astype(x.dtype)
        return jnp.where(z.astype(jnp.float32) > 0, x, y)
    if kind == "convert":
        targets = [jnp.float32, jnp.int32, jnp.bfloat16, jnp.float64, jnp.int8, jnp.uint8, jnp.bool_, jnp.float16]
        to = targets[int(r.integers(8))]
        if floating(x) and jnp.issubdtype(to, jnp.integer):
            x = jnp.clip(x, -100, 100)
        return x.astype(to)
    if kind == "index":
        if x.ndim == 0 or x.shape[0] == 0:
            return x
        n = x.shape[0]
        idx = jnp.asarray(np.random.default_rng(seed).integers(0, n, size=int(r.integers(1, 9))))
        op = r.integers(3)
        if op == 0:
            return x[idx]
        if op == 1:
            upd = x[idx]
            return x.at[idx].add(upd) if x.dtype != jnp.bool_ else x.at[idx].set(upd)
        return lax.dynamic_slice_in_dim(x, jnp.int32(int(r.integers(0, n))), max(1, n // 2), axis=0)
    if kind == "extra":
        op = int(r.integers(15))
        if op == 0 and x.ndim >= 1 and floating(x):  # pooling
            win = (1,) * (x.ndim - 1) + (min(3, x.shape[-1]),)
            return lax.reduce_window(x, -jnp.inf, lax.max, win, (1,) * x.ndim, "SAME")
        if op == 1 and x.ndim >= 1:  # fori_loop
            def step(i, v):
                return v + v * 0.5 if floating(v) else v + 1
            return lax.fori_loop(0, int(r.integers(1, 12)), step, x)
        if op == 2 and x.ndim >= 1:  # scan over leading dim
            def body(c, v):
                c = c + v
                return c, c * 2
            return lax.scan(body, jnp.zeros_like(x[0]), x)[1]
        if op == 3:
            return lax.cond(jnp.sum(x.astype(jnp.float32)) > 0, lambda v: v * 2, lambda v: v - 1, x)
        if op == 4 and floating(x) and x.ndim >= 1:
            c = lax.complex(x.astype(jnp.float32), jnp.flip(x, -1).astype(jnp.float32))
            return jnp.abs(jnp.exp(c * 0.1)) + jnp.angle(c)
        if op == 5 and x.ndim >= 2 and floating(x):  # batched matmul via einsum
            return jnp.einsum("...ij,...kj->...ik", x, x)
        if op == 6 and not floating(x) and x.dtype != jnp.bool_:
            return (x << 2) ^ (x >> 1) + lax.population_count(x)
        if op == 7 and x.ndim >= 1:
            n = x.shape[-1]
            upd = jnp.ones(x.shape[:-1] + (max(1, n // 3),), x.dtype)
            return lax.dynamic_update_slice_in_dim(x, upd, jnp.int32(int(r.integers(0, n))), axis=x.ndim - 1)
        if op == 8 and floating(x):
            return jnp.nan_to_num(jnp.log(x)) + jnp.expm1(jnp.clip(x, -5, 5))
        if op == 9:
            return jnp.any(x > 0, axis=-1) if x.ndim else x > 0
        if op == 10 and x.ndim >= 1:
            return jnp.arange(x.shape[-1], dtype=x.dtype) * x if x.dtype != jnp.bool_ else x
        if op == 11 and x.ndim == 4 and floating(x) and x.shape[1] >= 3 and x.shape[2] >= 3:
            k = jnp.asarray(np.random.default_rng(seed).standard_normal((3, 3, x.shape[3], 4)), x.dtype)
            return lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        if op == 12 and x.ndim >= 1 and floating(x):
            return jnp.linalg.norm(x, axis=-1) + jnp.var(x, axis=-1)
        if op == 13 and x.ndim >= 2:
            return jnp.tril(x) + jnp.triu(x, 1) if x.shape[-1] == x.shape[-2] else jnp.tril(x)
        if op == 14 and x.ndim == 4 and x.dtype == jnp.float32 and x.shape[1] >= 3 and x.shape[2] >= 3:
            k = jnp.asarray(np.random.default_rng(seed).standard_normal((3, 3, x.shape[3], 16)), x.dtype)
            return lax.conv_general_dilated(x, k, (2, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return x
    if kind == "fft":
        if x.ndim == 0 or x.dtype == jnp.bool_:
            return x
        return along_axis(x if x.dtype in (jnp.float32, jnp.float64) else x.astype(jnp.float32), r, [
            lambda v, ax: jnp.abs(jnp.fft.fft(v, axis=ax)),
            lambda v, ax: jnp.fft.irfft(jnp.fft.rfft(v, axis=ax) * 0.5, n=v.shape[ax], axis=ax),
            lambda v, ax: jnp.fft.rfft(v, axis=ax).imag,
            lambda v, ax: jnp.fft.ifft2(v).real if v.ndim >= 2 else None,
            lambda v, ax: jnp.fft.fftn(v + 1j * v[..., ::-1]).real,
        ])
    if kind == "sort":
        return along_axis(x, r, [
            lambda v, ax: jnp.sort(v, axis=ax),
            lambda v, ax: jnp.argsort(v, axis=ax, stable=True),
            lambda v, ax: lax.top_k(v, 3)[0] if v.shape[-1] >= 3 else v,
        ])
    return x


def compare(got, want) -> str | None:
    """Why ``got`` is not ``want`` (None if it is)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)} against {want.dtype}{list(want.shape)}"
    if got.dtype.kind in "biu":
        bad = got != want
        return f"{bad.sum()} of {bad.size} integers differ" if bad.any() else None
    wide = np.complex128 if got.dtype.kind == "c" else np.float64
    g, w = got.astype(wide), want.astype(wide)
    tolerance = {2: 2e-2, 4: 2e-4, 8: 1e-9}[got.dtype.itemsize // (2 if got.dtype.kind == "c" else 1)]
    ok = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= tolerance * np.maximum(1, np.abs(w)))
    if ok.all():
        return None
    first = tuple(int(i) for i in np.argwhere(~ok)[0])
    return f"{(~ok).sum()} of {ok.size} differ; at {first}: {got[first]!r} against {want[first]!r}"


def program(seed: int, constants: bool):
    """(function, arguments) of one seed; with ``constants`` the inputs are captured."""
    fn, args = Gen(seed).program()
    if constants:
        inner, captured = fn, args
        return (lambda: inner(*captured)), []
    return fn, args


def run(seed: int, constants: bool) -> dict:
    import xhlo

    fn, args = program(seed, constants)
    try:
        want = jax.jit(fn)(*args)
        exported = export.export(jax.jit(fn), platforms=["cpu"])(*args)
    except Exception as err:  # noqa: BLE001  (JAX rejects the program: not xhlo's to pass)
        return {"status": "skipped", "why": str(err)[:200]}
    try:
        got = xhlo.compile(exported, cache=False, keep_ir=False)(*args)
    except Exception as err:  # noqa: BLE001  (reported, the run goes on)
        return {"status": "failed", "why": f"{type(err).__name__}: {str(err)[:400]}"}
    want = jax.tree_util.tree_leaves(want)
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    if len(got) != len(want):
        return {"status": "failed", "why": f"{len(got)} results against {len(want)}"}
    for k, (g, w) in enumerate(zip(got, want)):
        if (why := compare(g, w)) is not None:
            return {"status": "failed", "why": f"result {k}: {why}"}
    return {"status": "passed"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0:400", help="START:STOP")
    parser.add_argument("--constants", action="store_true", help="inputs as constants")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per program")
    parser.add_argument("--show", type=int, help="print this seed's StableHLO and exit")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.show is not None:
        fn, args = program(options.show, options.constants)
        print(export.export(jax.jit(fn), platforms=["cpu"])(*args).mlir_module())
        return 0
    if options.worker:
        for line in sys.stdin:
            print(json.dumps(run(int(line), options.constants)), flush=True)
        return 0
    start, stop = (int(x) for x in options.seeds.split(":"))
    command = [sys.executable, __file__, "--worker"] + (["--constants"] if options.constants else [])
    outcomes = drive(range(start, stop), command, options.jobs, options.timeout)
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for seed, outcome in sorted(outcomes.items()):
        counts[outcome["status"]] += 1
        if outcome["status"] == "failed":
            print(f"FAIL seed {seed}: {outcome['why']}")
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped of {stop - start}")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""xhlo next to XLA:CPU on the same exported programs.

    python benchmarks/run.py [--quick] [--bf16] [--only NAME[,NAME...]] [--budget 60]

Each workload runs in a worker process: the function is exported with
``jax.export``, compiled by xhlo and by XLA (``jax.jit``), one after the other
before anything runs, then timed under XLA, and under xhlo after a check
against JAX's result within the workload's tolerance. The parent kills a
worker that exceeds the time budget from xhlo's compile on and reports the
workload as timed out, so nothing hangs. Times are
medians of repeated samples (the machine is shared: expect noise). Results go
to ``benchmarks/results/<time>.json`` and ``latest.json``; a PNG of the
xhlo/XLA ratios is written next to them (``--plot`` puts it elsewhere,
``--compare OLD.json`` draws an earlier run beside it). ``--bf16`` runs every
workload on bf16 data instead (its float32 inputs cast to bf16, so its
parameters and activations are bf16, as in a bf16 model), checked within a
bf16 tolerance (at least 2**-6, relative and absolute).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

# Limits of the reference machine (2 cores, AVX-512), measured in issue 6.
PEAK_GFLOPS = 235.0
PEAK_GBPS = 33.0


# -- timing ------------------------------------------------------------------------------------


def median_seconds(call, *, samples: int, min_sample_s: float, budget_s: float) -> tuple[float, list[float]]:
    """Median seconds per ``call()``; each sample repeats the call to last ``min_sample_s``.

    Stops early (keeping at least one sample) once ``budget_s`` is spent.
    """
    start = time.perf_counter()
    call()
    once = max(time.perf_counter() - start, 1e-7)
    inner = max(1, int(min_sample_s / once))
    times: list[float] = []
    began = time.perf_counter()
    while len(times) < samples and (not times or time.perf_counter() - began < budget_s):
        t0 = time.perf_counter()
        for _ in range(inner):
            call()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times), times


def check_close(actual, expected, rtol: float, atol: float) -> tuple[bool, float]:
    """(passed, worst error in units of the tolerance); NaNs must match NaNs."""
    import numpy as np

    worst = 0.0
    for a, e in zip(actual, expected):
        a, e = np.asarray(a), np.asarray(e)
        if a.shape != e.shape or a.dtype != e.dtype:
            return False, float("inf")
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        both_nan = np.isnan(a64) & np.isnan(e64)
        err = np.where(both_nan, 0.0, np.abs(a64 - e64))
        bound = atol + rtol * np.abs(e64)
        ratio = np.where(err == 0, 0.0, err / np.where(bound == 0, 1e-300, bound))
        worst = max(worst, float(np.nan_to_num(ratio, nan=np.inf).max(initial=0.0)))
    return worst <= 1.0, worst


# -- the worker: one workload, JAX then xhlo, one JSON line per event --------------------------


def emit(event: str, **fields) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def stage_timer():
    """Wrap xhlo's stage runner and JIT to record seconds per stage (benchmark-local)."""
    from xhlo import api

    seconds: dict[str, float] = {}
    run_stage, jit = api._run_stage, api._jit

    def timed_stage(module, text, stage, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return run_stage(module, text, stage, *args, **kwargs)
        finally:
            seconds[stage] = seconds.get(stage, 0.0) + time.perf_counter() - t0

    def timed_jit(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return jit(*args, **kwargs)
        finally:
            seconds["llvm-jit"] = time.perf_counter() - t0

    api._run_stage, api._jit = timed_stage, timed_jit
    return seconds


def warm_up_compilers() -> None:
    """Compile one small program with each compiler (process start-up costs: the BLAS
    library, code paths of each compiler run for the first time in the process)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import export

    import xhlo
    from xhlo.runtime import native_pool

    native_pool.pool()  # the parallel-for pool is compiled once per process

    def small(x, w):
        return jnp.max(jnp.tanh(x @ w) + jnp.exp(-x), axis=1)

    args = [np.ones((256, 256), np.float32)] * 2
    jax.jit(small).lower(*args).compile()
    xhlo.compile(export.export(jax.jit(small), platforms=["cpu"])(*args), keep_ir=False, cache=False)


BF16_TOLERANCE = 2.0 ** -6  # a few bf16 roundings (2**-8 each) apart


def worker(name: str, quick: bool, bf16: bool = False) -> None:
    import jax
    import ml_dtypes
    import numpy as np
    from jax import export
    from workloads import BY_NAME

    workload = BY_NAME[name]
    samples, min_sample = (3, 0.02) if quick else (7, 0.1)
    measure_budget = 5.0 if quick else 20.0
    inputs = workload.make_inputs(np.random.default_rng(0))
    rtol, atol = workload.rtol, workload.atol
    if bf16:
        inputs = [a.astype(ml_dtypes.bfloat16) if a.dtype == np.float32 else a for a in inputs]
        rtol, atol = max(rtol, BF16_TOLERANCE), max(atol, BF16_TOLERANCE)
    bytes_in = sum(a.nbytes for a in inputs)

    jitted = jax.jit(workload.fn)
    device_inputs = [jax.device_put(a) for a in inputs]
    exported = export.export(jitted, platforms=["cpu"])(*inputs)
    import xhlo

    # Both compiles before either runs, xhlo's first: XLA's worker threads stay
    # busy for a while after its compiles and runs, which took CPU from an xhlo
    # compile measured after them (xhlo's own threads are idle when it returns).
    warm_up_compilers()  # compile times below are per program, not one-time start-up
    stages = stage_timer()
    emit("xhlo_compiling")  # the parent's budget starts here
    t0 = time.perf_counter()
    exe = xhlo.compile(exported, keep_ir=False)
    xhlo_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    jitted.lower(*device_inputs).compile()
    jax_compile = time.perf_counter() - t0

    expected = jax.tree_util.tree_leaves(jitted(*device_inputs))
    expected = [np.asarray(e) for e in expected]
    bytes_out = sum(e.nbytes for e in expected)
    jax_s, jax_samples = median_seconds(
        lambda: jax.block_until_ready(jitted(*device_inputs)),
        samples=samples, min_sample_s=min_sample, budget_s=measure_budget,
    )
    emit("jax", seconds=jax_s, samples=jax_samples, compile_seconds=jax_compile, bytes=bytes_in + bytes_out)
    emit("xhlo_compile", compile_seconds=xhlo_compile, stages=stages)

    t0 = time.perf_counter()
    result = exe(*inputs)
    first = time.perf_counter() - t0
    actual = list(result) if isinstance(result, tuple) else [result]
    ok, worst = check_close(actual, expected, rtol, atol)
    emit("xhlo_check", ok=ok, worst=worst, first_call_seconds=first)
    xhlo_s, xhlo_samples = median_seconds(
        lambda: exe(*inputs), samples=samples, min_sample_s=min_sample, budget_s=measure_budget,
    )
    emit("xhlo", seconds=xhlo_s, samples=xhlo_samples)


# -- the parent: spawn, enforce the budget, tabulate -------------------------------------------


def _read_lines(stream, sink: queue.Queue) -> None:
    for line in stream:
        sink.put(line)
    sink.put(None)


def run_workload(name: str, quick: bool, budget: float, bf16: bool = False) -> dict:
    """Run one workload in a worker; from xhlo's compile on, it gets ``budget`` seconds."""
    result: dict = {"name": name, "bf16": bf16}
    flags = (["--quick"] if quick else []) + (["--bf16"] if bf16 else [])
    with tempfile.TemporaryFile("w+") as stderr:
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", name] + flags,
            stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=HERE,
        )
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True).start()
        deadline = time.monotonic() + max(budget, 600.0)  # JAX's export: generous
        while True:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                proc.kill()
                result["status"] = f"timeout: xhlo did not finish within {budget:.0f} s"
                break
            if line is None:
                break
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            kind = event.pop("event")
            result[kind] = event
            if kind == "xhlo_compiling":
                deadline = time.monotonic() + budget
            if kind == "xhlo":
                break
        proc.wait()
        if "status" not in result:
            if "xhlo" in result:
                result["status"] = "ok" if result["xhlo_check"]["ok"] else "WRONG"
            else:
                stderr.seek(0)
                tail = [ln for ln in stderr.read().strip().splitlines() if ln.strip()][-3:]
                result["status"] = "error: " + (" | ".join(tail) or f"exit {proc.returncode}")
    return result


def summarize(result: dict, workload) -> dict:
    """Flat numbers of one result, for the table, the JSON and the plot."""
    jax = result.get("jax", {})
    xhlo = result.get("xhlo", {})
    row = {
        "name": result["name"],
        "status": result.get("status", "?"),
        "xla_ms": jax.get("seconds", 0) * 1e3 or None,
        "xhlo_ms": xhlo.get("seconds", 0) * 1e3 or None,
        "xla_compile_s": jax.get("compile_seconds"),
        "xhlo_compile_s": result.get("xhlo_compile", {}).get("compile_seconds"),
        "xhlo_stage_s": result.get("xhlo_compile", {}).get("stages"),
        "check_worst": result.get("xhlo_check", {}).get("worst"),
        # a workload's own count of bytes assumes float32 data: on bf16, what the call reads and writes
        "bytes": (None if result.get("bf16") else workload.traffic) or jax.get("bytes"),
        "flops": workload.flops or None,
    }
    row["ratio"] = row["xhlo_ms"] / row["xla_ms"] if row["xhlo_ms"] and row["xla_ms"] else None
    return row


def rate_text(row: dict, ms: float | None) -> str:
    if not ms:
        return "-"
    if row["flops"]:
        rate = row["flops"] / (ms / 1e3) / 1e9
        return f"{rate:.1f} GFLOP/s ({rate / PEAK_GFLOPS:.0%})"
    rate = row["bytes"] / (ms / 1e3) / 1e9
    return f"{rate:.1f} GB/s ({rate / PEAK_GBPS:.0%})"


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_table(rows: list[dict]) -> None:
    header = ("workload", "xhlo ms", "XLA ms", "xhlo/XLA", "xhlo achieved", "XLA achieved",
              "xhlo compile s", "XLA compile s", "status")
    table = [header] + [
        (
            r["name"], _fmt(r["xhlo_ms"], ".3f"), _fmt(r["xla_ms"], ".3f"), _fmt(r["ratio"], ".2f"),
            rate_text(r, r["xhlo_ms"]), rate_text(r, r["xla_ms"]),
            _fmt(r["xhlo_compile_s"], ".2f"), _fmt(r["xla_compile_s"], ".2f"), r["status"],
        )
        for r in rows
    ]
    widths = [max(len(str(line[i])) for line in table) for i in range(len(header))]
    for i, line in enumerate(table):
        print("  ".join(str(cell).ljust(w) for cell, w in zip(line, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print_summary(rows)


def print_summary(rows: list[dict]) -> None:
    """Geometric means of the time and compile-time ratios over the finished workloads."""
    import math

    def geomean(values: list[float]) -> str:
        return f"{math.exp(sum(map(math.log, values)) / len(values)):.2f}" if values else "-"

    done = [r for r in rows if r["ratio"]]
    compiles = [
        r["xhlo_compile_s"] / r["xla_compile_s"]
        for r in rows
        if r["xhlo_compile_s"] and r["xla_compile_s"]
    ]
    worst = max(done, key=lambda r: r["ratio"]) if done else None
    print(
        f"geomean xhlo/XLA time {geomean([r['ratio'] for r in done])} over {len(done)} of {len(rows)} "
        f"workloads (worst: {worst['name']} {worst['ratio']:.2f}x)" if worst else "no finished workloads"
    )
    print(f"geomean xhlo/XLA compile time {geomean(compiles)}")


def plot(rows: list[dict], path: Path, baseline: list[dict] | None = None) -> None:
    """Horizontal bars of xhlo time / XLA time on a log axis (1 = as fast as XLA)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["name"] for r in rows]
    series = [("xhlo", {r["name"]: r for r in rows})]
    if baseline:
        series.insert(0, ("before (linalg -> loops)", {r["name"]: r for r in baseline}))
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(names) + 1.5))
    height = 0.8 / len(series)
    for k, (label, by_name) in enumerate(series):
        ys = [i + (k - (len(series) - 1) / 2) * height for i in range(len(names))]
        found = [by_name.get(n) or {} for n in names]
        ratios = [r.get("ratio") or 0 for r in found]
        ax.barh(ys, ratios, height=height, label=label)
        for y, ratio, row in zip(ys, ratios, found):
            status = row.get("status", "")
            text = _ratio_text(ratio) if ratio else ("did not finish" if "timeout" in status else status[:14])
            ax.text(max(ratio, 0.12) * 1.08, y, text, va="center", fontsize=7)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlim(0.1, None)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("xhlo time / XLA:CPU time (log scale, lower is better, 1 = parity)")
    ax.set_title("xhlo vs jax.jit (XLA:CPU), same jax.export modules, 2 cores")
    if baseline:
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _ratio_text(ratio: float) -> str:
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.2f}x"


def blas_kernels() -> str:
    """OpenBLAS's kernel choice, and the environment variable that forced it if one did: an
    environment that pins older kernels (OPENBLAS_CORETYPE=Haswell) halves xhlo's matmuls on
    AVX-512 machines, where XLA's own kernels are unaffected."""
    from xhlo import blas

    forced = os.environ.get("OPENBLAS_CORETYPE")
    return f"{blas.kernel_name()}" + (f" (forced by OPENBLAS_CORETYPE={forced})" if forced else "")


def main() -> int:
    from workloads import BY_NAME, WORKLOADS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer, shorter samples")
    p.add_argument("--bf16", action="store_true", help="the workloads on bf16 data (float32 inputs cast)")
    p.add_argument("--only", action="append", default=[], help="workload name(s), comma-separated")
    p.add_argument("--budget", type=float, default=60.0, help="seconds for xhlo's compile + runs per workload")
    p.add_argument("--plot", type=Path, help="where to write the PNG (default: results/ratios.png)")
    p.add_argument("--compare", type=Path, help="an earlier results JSON to draw beside this run")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args.worker, args.quick, args.bf16)
        return 0
    if args.list:
        for w in WORKLOADS:
            print(f"{w.name:14} {w.description}")
        return 0
    names = [n for item in args.only for n in item.split(",") if n] or [w.name for w in WORKLOADS]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        p.error(f"unknown workload(s) {unknown}; known: {sorted(BY_NAME)}")
    kernels = blas_kernels()
    print(f"OpenBLAS kernels (xhlo's matmuls and LAPACK): {kernels}", file=sys.stderr)
    rows = []
    for name in names:
        print(f"[{name}] ...", file=sys.stderr, flush=True)
        rows.append(summarize(run_workload(name, args.quick, args.budget, args.bf16), BY_NAME[name]))
    print_table(rows)
    RESULTS.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    record = {"time": stamp, "quick": args.quick, "bf16": args.bf16, "peak_gflops": PEAK_GFLOPS, "peak_gbps": PEAK_GBPS,
              "openblas_kernels": kernels, "rows": rows}
    for target in (RESULTS / f"{stamp}.json", RESULTS / "latest.json"):
        target.write_text(json.dumps(record, indent=1))
    baseline = json.loads(args.compare.read_text())["rows"] if args.compare else None
    plot_path = args.plot or RESULTS / "ratios.png"
    plot(rows, plot_path, baseline)
    print(f"results: {RESULTS / (stamp + '.json')}; plot: {plot_path}", file=sys.stderr)
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    sys.exit(main())

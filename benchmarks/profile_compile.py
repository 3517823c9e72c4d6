"""Where xhlo's compile time goes, per stage and per pass, for the benchmark workloads.

    python benchmarks/profile_compile.py NAME [NAME...] [--repeat 5] [--passes 12]
                                         [--[no-]verify-each] [--opt-level 2] [--cprofile 25]

For each workload of ``workloads.py`` (exported with ``jax.export``, as
``run.py`` does) this prints, as medians over ``--repeat`` compiles after one
warm-up compile:

* ``xhlo.compile`` end to end (``keep_ir=False``, ``cache=False``), the number
  ``run.py`` reports as "xhlo compile s";
* the same work taken apart: loading the module (into the thread's MLIR
  context, which ``xhlo.compile`` reuses), building the pass manager and its
  start (pass initialization: canonicalize builds its pattern set there; both
  are paid once per context by ``xhlo.compile``, which keeps its stage pass
  managers, but on every profiled compile here), each pipeline stage,
  and LLVM's part (``xhlo.llvm_jit``: translation to LLVM IR, LLVM's IR
  optimisation and machine-code generation of every code-generation part,
  the parts on threads of their own), then each part's two halves (its
  engine: translation and IR optimisation; its machine code); once, what an
  engine for an empty module costs (LLVM's fixed set-up, paid per part);
* with ``--passes N``: the N slowest pipeline elements (``#n``: position in
  the stage). The whole pipeline runs in one PassManager with a tiny Python
  pass after every element that reads the clock, so a per-pass time includes
  the verifier when ``--verify-each`` is on (MLIR verifies after every pass)
  and nothing else. ``xhlo.compile`` runs one pass manager per stage and
  verifies the module after each stage instead (about 1% of a compile);
* with ``--cprofile N``: the N functions of one ``xhlo.compile`` with the most
  cumulative time (Python passes, Python-side IR walks and the native calls
  they make).

The machine may be shared: compare numbers from one run, and repeat.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def export_workload(name: str):
    """The workload's ``jax.export`` artifact, as ``run.py`` compiles it."""
    import jax
    import numpy as np
    from jax import export
    from workloads import BY_NAME

    workload = BY_NAME[name]
    inputs = workload.make_inputs(np.random.default_rng(0))
    return export.export(jax.jit(workload.fn), platforms=["cpu"])(*inputs)


def warm_up() -> None:
    """One trivial compile: process start-up (pass registration, JIT set-up) is not per program."""
    import xhlo

    xhlo.compile(
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = stablehlo.add %x, %x : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}",
        keep_ir=False,
        cache=False,
    )


def time_compile(exported, verify_each: bool, opt_level: int) -> float:
    import xhlo

    start = time.perf_counter()
    xhlo.compile(exported, keep_ir=False, cache=False, verify_each=verify_each, opt_level=opt_level)
    return time.perf_counter() - start


class Clock:
    """Python passes that record the time between pipeline elements (the pass manager's
    own bookkeeping between two elements is charged to the element before the tick)."""

    def __init__(self):
        self.seconds: dict[tuple[str, str], float] = defaultdict(float)
        self.last = 0.0

    def start(self) -> None:
        self.last = time.perf_counter()

    def tick(self, stage: str, element: str):
        """A pass charging the time since the last tick to ``element`` of ``stage``."""
        def mark(op, pass_) -> None:
            now = time.perf_counter()
            self.seconds[(stage, element)] += now - self.last
            self.last = now

        return mark


def timed_pipeline(module, verify_each: bool, clock: Clock):
    """One PassManager running every stage, a clock pass after each element."""
    from xhlo import pipeline as pl
    from xhlo._mlir import passmanager

    pm = passmanager.PassManager("builtin.module")
    pm.add(clock.tick("start", "pass initialization (pattern sets)"), "xhlo-profile-clock")
    for stage in pl.STAGES:
        for n, element in enumerate(stage.passes):
            pl.add_element(pm, element)
            tick = clock.tick(stage.name, f"#{n} {element}")
            pm.add(tick, f"xhlo-profile-clock-{stage.name}-{n}")
    pm.enable_verifier(verify_each)
    return pm


def profile_parts(exported, verify_each: bool, opt_level: int) -> tuple[dict[str, float], dict, dict]:
    """One compile's work taken apart: seconds per part, per (stage, element), and per
    half of each code-generation part."""
    from xhlo import api
    from xhlo._mlir import ir
    from xhlo.source import load_module

    parts: dict[str, float] = {}
    t0 = time.perf_counter()
    context = api._thread_context.take(0)  # the context xhlo.compile uses on this thread
    with context, ir.Location.unknown():
        module, _ = load_module(exported, context)
        module.operation.verify()
        names = [api._func_name(f) for f in api._public_functions(module)]
        t1 = time.perf_counter()
        parts["load + verify"] = t1 - t0
        clock = Clock()
        pm = timed_pipeline(module, verify_each, clock)
        t2 = time.perf_counter()
        parts["build pass manager"] = t2 - t1
        clock.start()  # the first tick also counts the pass manager's start (pass initialization)
        pm.run(module.operation)
        if not verify_each:
            module.operation.verify()
        t3 = time.perf_counter()
        for (stage, _), seconds in clock.seconds.items():
            stage = "pass manager start" if stage == "start" else stage
            parts[stage] = parts.get(stage, 0.0) + seconds
        parts["final verify / unclocked"] = (t3 - t2) - sum(clock.seconds.values())
        program = api._jit(module, opt_level, context, "<profile>", {})  # as xhlo.compile creates it
        parts[f"llvm: machine code of {program.num_parts} part(s), at once"] = time.perf_counter() - t3
        if not all(program.raw_lookup(f"_mlir_ciface_{name}") for name in names):
            raise RuntimeError("a public function has no machine code")
        halves = {}
        for index, (engine, code) in enumerate(program.part_seconds):
            halves[f"part {index}: engine (to LLVM IR, IR optimisation)"] = engine
            halves[f"part {index}: machine code"] = code
    return parts, dict(clock.seconds), halves


def empty_engine_seconds(opt_level: int, repeat: int) -> float:
    """Median time of an engine for a module with one empty function: LLVM's fixed cost per part."""
    from xhlo import api
    from xhlo._mlir import ir
    from xhlo.llvm_jit import JitProgram

    context = api._thread_context.take(0)
    with context, ir.Location.unknown():
        module = ir.Module.parse("llvm.func @empty() {\n  llvm.return\n}")
        seconds = []
        for _ in range(repeat):
            start = time.perf_counter()
            program = JitProgram(module, opt_level)
            seconds.append(time.perf_counter() - start)
            program.close()
    return statistics.median(seconds)


def median_dicts(samples: list[dict]) -> dict:
    keys = list(dict.fromkeys(k for s in samples for k in s))
    return {k: statistics.median(s.get(k, 0.0) for s in samples) for k in keys}


def report(name: str, args) -> None:
    exported = export_workload(name)
    warm_up()
    time_compile(exported, args.verify_each, args.opt_level)  # the workload's own warm-up
    totals = [time_compile(exported, args.verify_each, args.opt_level) for _ in range(args.repeat)]
    samples = [profile_parts(exported, args.verify_each, args.opt_level)
               for _ in range(args.repeat)]
    parts = median_dicts([p for p, _, _ in samples])
    per_pass = median_dicts([e for _, e, _ in samples])
    halves = median_dicts([h for _, _, h in samples])
    total = statistics.median(totals)
    print(f"== {name}: xhlo.compile {total * 1e3:.1f} ms (median of {args.repeat}: "
          f"{', '.join(f'{t * 1e3:.0f}' for t in totals)}), verify_each={args.verify_each}")
    for part, seconds in parts.items():
        print(f"   {seconds * 1e3:8.1f} ms  {part}")
    for half, seconds in halves.items():
        print(f"   {seconds * 1e3:8.1f} ms    {half}")
    print(f"   {sum(parts.values()) * 1e3:8.1f} ms  sum of the parts")
    if args.passes:
        print("   slowest pipeline elements (#n: position in the stage):")
        slowest = sorted(per_pass.items(), key=lambda kv: -kv[1])[: args.passes]
        for (stage, element), seconds in slowest:
            print(f"   {seconds * 1e3:8.2f} ms  {element}  [{stage}]")
    if args.cprofile:
        profiler = cProfile.Profile()
        profiler.enable()
        time_compile(exported, args.verify_each, args.opt_level)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(args.cprofile)
        print(out.getvalue())


def main() -> int:
    from workloads import BY_NAME

    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="+", help=f"workloads: {', '.join(BY_NAME)}")
    p.add_argument("--repeat", type=int, default=5, help="compiles per measurement (medians)")
    p.add_argument("--passes", type=int, default=12,
                   help="show the N slowest pipeline elements (0: none)")
    p.add_argument("--verify-each", action=argparse.BooleanOptionalAction, default=None,
                   help="verify after every pass (default: as CompileOptions)")
    p.add_argument("--opt-level", type=int, default=2, help="LLVM optimisation level of the JIT")
    p.add_argument("--cprofile", type=int, default=0, help="cProfile one compile, print the top N")
    args = p.parse_args()
    if args.verify_each is None:
        from xhlo.api import CompileOptions

        args.verify_each = CompileOptions().verify_each
    unknown = [n for n in args.names if n not in BY_NAME]
    if unknown:
        p.error(f"unknown workload(s) {unknown}; known: {sorted(BY_NAME)}")
    for name in args.names:
        report(name, args)
    print(f"({empty_engine_seconds(args.opt_level, args.repeat) * 1e3:.1f} ms: an engine for an empty module)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""In-process ragged all-to-all next to the in-process all_to_all moving the same bytes.

    python benchmarks/bench_ragged.py [--devices 2] [--quick]

XLA:CPU cannot run ``ragged_all_to_all``, so there is no JAX column: the
reference is xhlo's own all_to_all of equal parts (the same rows, fixed
sizes), and one thread's memcpy of the operand. Both programs run a
collective ``K`` times in a ``stablehlo.while`` (``bench_mpi.program``; the
ragged one splits each device's rows into equal parts by its offset and size
arguments); a step's time is what a run of ``2K`` takes more than a run of
``K``, per step, so the runs' own costs (the first call through Python, the
result) are left out. The fastest of the samples: the difference of two run times
is steadier that way than with medians.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_collectives import median_time, memcpy_time
from bench_mpi import KIB, program, ragged_metadata

SIZES = [4 * KIB, 64 * KIB, 1024 * KIB, 16 * 1024 * KIB]


def step_time(op: str, elements: int, devices: int, steps: int, samples: int) -> tuple[float, list]:
    """Seconds per collective of ``op`` inside a loop, from runs of ``steps`` and ``2 * steps``,
    and the results of the longer run."""
    import xhlo

    args = []
    for d in range(devices):
        x = np.arange(d * elements, (d + 1) * elements, dtype=np.float32)  # each row its own value
        args.append((*ragged_metadata(elements, d, devices), x) if op == "ragged_all_to_all" else (x,))
    runs = []
    for k in (steps, 2 * steps):
        exe = xhlo.compile(program(op, elements, devices, k), keep_ir=False)
        runs.append(median_time(lambda exe=exe: exe.run_replicated(args), samples, reduce=min))
    return (runs[1] - runs[0]) / steps, exe.run_replicated(args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    samples = 5 if args.quick else 15
    print(f"{args.devices} devices in process; time per collective (runs of K and 2K)")
    print(f"{'size':>8}{'K':>5}{'ragged us':>11}{'all_to_all us':>15}{'ratio':>7}{'memcpy us':>11}")
    for size in SIZES[:3] if args.quick else SIZES:
        steps = max(8, min(256, (64 * 1024 * KIB) // size))
        ragged, moved = step_time("ragged_all_to_all", size // 4, args.devices, steps, samples)
        fixed, expected = step_time("all_to_all", size // 4, args.devices, steps, samples)
        for got, want in zip(moved, expected):  # equal parts: the same rows as all_to_all's
            np.testing.assert_array_equal(got[0], want[0])
        copy = memcpy_time(size, samples)
        print(f"{size // KIB:>6}Ki{steps:>5}{ragged * 1e6:>11.1f}{fixed * 1e6:>15.1f}{ragged / fixed:>7.2f}{copy * 1e6:>11.1f}")


if __name__ == "__main__":
    main()

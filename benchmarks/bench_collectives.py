"""In-process collectives of xhlo next to memcpy and JAX ``shard_map`` (XLA:CPU).

    python benchmarks/bench_collectives.py [--quick] [--devices 2,4] [--repeats 3] [--keep-freed-memory]

For each device count a worker process configures JAX with that many CPU
devices and, per collective (all_reduce = ``psum``, all_gather, all_to_all)
and per size of the operand on each device (4 KiB .. 64 MiB of f32), builds
one ``shard_map`` whose body runs the collective ``K`` times in a
``fori_loop``. The very same export is compiled by xhlo and run with
``Executable.run_replicated`` (one thread per device); both results are
checked against each other, then both are timed (median of the samples) and
divided by ``K``, so per-call dispatch costs are amortized and what remains
is the collective itself (plus one elementwise scale or slice per step).
``memcpy`` is the time one thread takes to copy the per-device operand once
(``ctypes.memmove``). ``copies`` is the same traffic without a collective: one
thread per device, all at once, each copying as many bytes as its device's
result holds with ``memmove`` (every device writes its whole result and reads
as much: blocks of its operand and of its peers'). On 2 cores the devices
share the memory bandwidth: at 16 MiB the copies alone take 2-3 (2 devices) to
about 25 (all_gather on 4) times ``memcpy``.

Large sizes are dominated by page faults on the buffers compiled code
mallocs afresh on every call; ``--keep-freed-memory`` applies
``xhlo.runtime.memory.keep_freed_memory()`` (glibc keeps freed memory for
reuse, as a caching allocator would) to show the cost without them.

Columns: time per collective, ``x memcpy`` (xhlo time / memcpy time), ``x copies``
(xhlo time / copies time; sizes from 1 MiB: below, starting the threads dominates) and
``x JAX`` (xhlo time / JAX time; below 1 is faster than XLA:CPU).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

KIB = 1024
SIZES = [4 * KIB, 64 * KIB, 1024 * KIB, 16 * 1024 * KIB, 64 * 1024 * KIB]
QUICK_SIZES = SIZES[:3]
OPS = ("all_reduce", "all_gather", "all_to_all")
# memcpy and copies are floors: the fastest of several samples (the first copies of a run
# measured half speed)
FLOOR_SAMPLES = 5
COPIES_MIN_SIZE = 1024 * KIB  # below, starting the threads costs more than the copies
MOVED_PER_STEP = 256 * 1024 * KIB  # bytes all devices receive over the K steps of one sample


def steps_for(size: int, devices: int) -> int:
    return max(2, min(64, MOVED_PER_STEP // (size * devices)))


# -- the worker: one device count, JAX configured for it ----------------------------------------


def _body(op: str, devices: int, steps: int):
    import jax.numpy as jnp
    from jax import lax

    def step(_, x):
        if op == "all_reduce":
            return lax.psum(x, "x") * jnp.float32(1.0 / devices)
        if op == "all_gather":
            return lax.all_gather(x, "x", tiled=True)[: x.shape[0]]
        return lax.all_to_all(x, "x", 0, 0, tiled=True)

    return lambda x: lax.fori_loop(0, steps, step, x)


def median_time(run, repeats: int, reduce=statistics.median) -> float:
    """``run``'s seconds, ``reduce`` (the median) of ``repeats`` samples after a warm-up."""
    run()  # warm up (compilation, first touch of the buffers)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return reduce(samples)


def memcpy_time(size: int, repeats: int) -> float:
    """One thread copying ``size`` bytes once (many copies per sample, the fastest sample)."""
    import ctypes

    import numpy as np

    src = np.ones(size, np.uint8)
    dst = np.empty_like(src)
    source, target, memmove = src.ctypes.data, dst.ctypes.data, ctypes.memmove  # .ctypes costs ~1 us
    count = max(1, MOVED_PER_STEP // size // 8)

    def copy():
        for _ in range(count):
            memmove(target, source, size)

    return median_time(copy, max(repeats, FLOOR_SAMPLES), reduce=min) / count


def result_bytes(op: str, size: int, devices: int) -> int:
    """Bytes each device's result holds (all_gather's holds every member's operand)."""
    return size * devices if op == "all_gather" else size


def copies_time(nbytes: int, devices: int, repeats: int) -> float:
    """``devices`` threads at once, each copying ``nbytes`` between buffers of its own
    (the fastest sample)."""
    import ctypes
    import threading

    import numpy as np

    count = max(2, MOVED_PER_STEP // (nbytes * devices))
    buffers = [(np.ones(nbytes, np.uint8), np.empty(nbytes, np.uint8)) for _ in range(devices)]
    addresses = [(dst.ctypes.data, src.ctypes.data) for src, dst in buffers]

    def copies(target: int, source: int) -> None:
        for _ in range(count):
            ctypes.memmove(target, source, nbytes)  # releases the GIL

    def all_devices():
        threads = [threading.Thread(target=copies, args=pair) for pair in addresses]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    return median_time(all_devices, max(repeats, FLOOR_SAMPLES), reduce=min) / count


def worker(devices: int, sizes: list[int], ops: list[str], repeats: int, keep_memory: bool) -> None:
    if keep_memory:
        from xhlo.runtime.memory import keep_freed_memory

        keep_freed_memory()
    import jax

    jax.config.update("jax_num_cpu_devices", devices)
    # GSPMD form: with Shardy the loop body's func.call sits inside the (unregistered)
    # sdy.manual_computation and the exported text does not verify in xhlo's context
    jax.config.update("jax_use_shardy_partitioner", False)
    import numpy as np
    import xhlo
    from jax import export
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((devices,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
    sharding = NamedSharding(mesh, P("x"))
    rng = np.random.default_rng(0)
    for size in sizes:
        memcpy = memcpy_time(size, repeats)
        copies = {}
        if size >= COPIES_MIN_SIZE:
            for op in ops:
                copies[op] = copies_time(result_bytes(op, size, devices), devices, repeats)
        for op in ops:
            steps = steps_for(size, devices)
            local = size // 4
            fn = jax.jit(
                jax.shard_map(
                    _body(op, devices, steps),
                    mesh=mesh,
                    in_specs=P("x"),
                    out_specs=P("x"),
                    check_vma=False,
                )
            )
            global_x = rng.integers(-4, 5, size=local * devices).astype(np.float32)
            x = jax.device_put(global_x, sharding)
            exe = xhlo.compile(export.export(fn)(x), keep_ir=False)
            shards = [(global_x[d * local : (d + 1) * local],) for d in range(devices)]
            want = np.asarray(fn(x))
            got = np.concatenate([r[0] for r in exe.run_replicated(shards)])
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
            jax_time = median_time(lambda fn=fn, x=x: fn(x).block_until_ready(), repeats) / steps
            xhlo_time = (
                median_time(lambda exe=exe, s=shards: exe.run_replicated(s), repeats) / steps
            )
            record = {
                "devices": devices,
                "op": op,
                "size": size,
                "steps": steps,
                "xhlo": xhlo_time,
                "jax": jax_time,
                "memcpy": memcpy,
                "copies": copies.get(op),
            }
            print(json.dumps(record), flush=True)


# -- the driver ---------------------------------------------------------------------------------


def _size_text(size: int) -> str:
    return f"{size // (1024 * KIB)} MiB" if size >= 1024 * KIB else f"{size // KIB} KiB"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.3f}"


def print_table(records: list[dict]) -> None:
    header = (
        f"{'op':<11} {'dev':>3} {'size/dev':>9} {'K':>3} {'xhlo ms':>9} {'GB/s':>6} {'memcpy ms':>9} "
        f"{'x memcpy':>8} {'copies ms':>9} {'x copies':>8} {'JAX ms':>9} {'x JAX':>7}"
    )
    print(header)
    print("-" * len(header))
    for r in sorted(records, key=lambda r: (OPS.index(r["op"]), r["devices"], r["size"])):
        bandwidth = r["size"] / r["xhlo"] / 1e9
        copies = f"{_ms(r['copies'])} {r['xhlo'] / r['copies']:8.2f}" if r.get("copies") else f"{'-':>9} {'-':>8}"
        print(
            f"{r['op']:<11} {r['devices']:>3} {_size_text(r['size']):>9} {r['steps']:>3} {_ms(r['xhlo'])} "
            f"{bandwidth:6.2f} {_ms(r['memcpy'])} {r['xhlo'] / r['memcpy']:8.1f} {copies} {_ms(r['jax'])} "
            f"{r['xhlo'] / r['jax']:7.2f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 1 MiB only")
    parser.add_argument("--devices", default="2,4", help="device counts, comma separated")
    parser.add_argument("--repeats", type=int, default=3, help="timed samples per measurement")
    parser.add_argument("--sizes", help="bytes per device, comma separated (e.g. 4096,16777216)")
    parser.add_argument("--ops", default=",".join(OPS), help="collectives, comma separated")
    parser.add_argument(
        "--keep-freed-memory",
        action="store_true",
        help="tune glibc malloc to reuse freed memory (xhlo.runtime.memory)",
    )
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else QUICK_SIZES if args.quick else SIZES
    ops = args.ops.split(",")
    if args.worker:
        worker(args.worker, sizes, ops, args.repeats, args.keep_freed_memory)
        return 0
    records = []
    for devices in (int(d) for d in args.devices.split(",")):
        command = [
            sys.executable,
            __file__,
            "--worker",
            str(devices),
            "--repeats",
            str(args.repeats),
            "--sizes",
            ",".join(map(str, sizes)),
            "--ops",
            ",".join(ops),
        ]
        if args.keep_freed_memory:
            command.append("--keep-freed-memory")
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        records += [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    print_table(records)
    return 0


if __name__ == "__main__":
    sys.exit(main())

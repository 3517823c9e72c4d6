"""xhlo's MPI transport next to mpi4py calling the same MPI operation directly.

    mpiexec -n 2 python benchmarks/bench_mpi.py [--quick] [--min-steps 4]

Per collective (all_gather, all_to_all, all_reduce, collective_permute around
the ring of ranks, ragged_all_to_all of equal parts) and per-rank operand size,
one compiled program runs the collective ``K`` times in a ``stablehlo.while``
(one device per rank, the MPI transport); mpi4py runs the matching blocking
calls (``Allgather``, ``Alltoall``, ``Allreduce``, ``Sendrecv``, ``Alltoall``
of the sizes then ``Alltoallv``) ``K`` times on numpy buffers.
Both report the median time per collective over the samples; rank 0 prints
the table with the ratio xhlo / mpi4py.

The program feeds each step's result to the next step, so its collectives
alternate between buffers, which costs MPICH time at large sizes (a 1 MiB
Alltoall: ~86 us between fixed buffers, ~117 us alternating). The
``chained`` columns time mpi4py doing the same: each call reads the previous
call's result (all_gather: its first block, as the program's slice does).

A run also has costs of its own that are not the collective's: its Python
call and the copy of its result into a new array (16 MiB: ~1.5 ms). The
``step`` columns leave them out: the time a run of ``2K`` steps takes more than
a run of ``K``, per step (with the all_gather's slice, which the program copies).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

KIB = 1024
SIZES = [4 * KIB, 64 * KIB, 1024 * KIB, 16 * 1024 * KIB]


def steps_for(size: int, minimum: int = 4) -> int:
    return max(minimum, min(200, (64 * 1024 * KIB) // size))


def program(op: str, elements: int, ranks: int, steps: int) -> str:
    """``K`` times ``op`` on a ``tensor<elements x f32>``, keeping the shape."""
    t = f"tensor<{elements}xf32>"
    groups = f"dense<[[{', '.join(map(str, range(ranks)))}]]> : tensor<1x{ranks}xi64>"
    if op == "all_gather":
        wide = f"tensor<{elements * ranks}xf32>"
        body = f"""%g = "stablehlo.all_gather"(%x) {{all_gather_dim = 0 : i64, replica_groups = {groups}}} : ({t}) -> {wide}
      %y = stablehlo.slice %g [0:{elements}] : ({wide}) -> {t}"""
    elif op == "all_to_all":
        body = f"""%y = "stablehlo.all_to_all"(%x) {{split_dimension = 0 : i64, concat_dimension = 0 : i64,
          split_count = {ranks} : i64, replica_groups = {groups}}} : ({t}) -> {t}"""
    elif op == "collective_permute":
        ring = ", ".join(f"[{r}, {(r + 1) % ranks}]" for r in range(ranks))
        body = f"""%y = "stablehlo.collective_permute"(%x) {{
          source_target_pairs = dense<[{ring}]> : tensor<{ranks}x2xi64>}} : ({t}) -> {t}"""
    elif op == "ragged_all_to_all":
        m = f"tensor<{ranks}xi64>"
        body = f"""%zeros = stablehlo.constant dense<0.0> : {t}
      %y = stablehlo.custom_call @ragged_all_to_all(%x, %zeros, %io, %ss, %oo, %rs) {{api_version = 4 : i32,
          backend_config = {{replica_groups = {groups}}}}} : ({t}, {t}, {m}, {m}, {m}, {m}) -> {t}"""
    else:
        body = f"""%y = "stablehlo.all_reduce"(%x) ({{
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %s = stablehlo.add %a, %b : tensor<f32>
          stablehlo.return %s : tensor<f32>
      }}) {{replica_groups = {groups}}} : ({t}) -> {t}"""
    metadata = "".join(f"%{name}: tensor<{ranks}xi64>, " for name in RAGGED_METADATA) if op == "ragged_all_to_all" else ""
    return f"""module attributes {{mhlo.num_replicas = {ranks} : i32, mhlo.num_partitions = 1 : i32}} {{
  func.func @main({metadata}%x0: {t}) -> {t} {{
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %k = stablehlo.constant dense<{steps}> : tensor<i32>
    %r:2 = stablehlo.while(%i = %zero, %x = %x0) : tensor<i32>, {t}
    cond {{
      %c = stablehlo.compare LT, %i, %k : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }} do {{
      {body}
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %y : tensor<i32>, {t}
    }}
    return %r#1 : {t}
  }}
}}"""


RAGGED_METADATA = ("io", "ss", "oo", "rs")  # input offsets, send sizes, output offsets, recv sizes


def ragged_metadata(elements: int, rank: int, ranks: int) -> list[np.ndarray]:
    """Equal parts: part j of this rank's rows goes to rank j, at its part ``rank``."""
    part = elements // ranks
    return [
        np.arange(ranks, dtype=np.int64) * part,
        np.full(ranks, part, np.int64),
        np.full(ranks, rank * part, np.int64),
        np.full(ranks, part, np.int64),
    ]


def time_samples(fn, comm, samples: int) -> float:
    fn()
    times = []
    for _ in range(samples):
        comm.Barrier()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def mpi_call(comm, op: str, elements: int):
    """The blocking mpi4py calls doing ``op``: ``call(send, receive)``."""
    rank, ranks = comm.Get_rank(), comm.Get_size()
    if op == "collective_permute":  # around the ring, as the program's pairs
        return lambda send, receive: comm.Sendrecv(
            send, dest=(rank + 1) % ranks, recvbuf=receive, source=(rank - 1) % ranks
        )
    if op == "ragged_all_to_all":  # the sizes, then the rows
        from mpi4py import MPI

        _, sizes, _, received = ragged_metadata(elements, rank, ranks)
        layout = (list(sizes), [int(o) for o in np.cumsum(sizes) - sizes])

        def ragged(send, receive):
            comm.Alltoall(sizes, received)
            comm.Alltoallv([send, layout, MPI.FLOAT], [receive, layout, MPI.FLOAT])

        return ragged
    return {"all_gather": comm.Allgather, "all_to_all": comm.Alltoall, "all_reduce": comm.Allreduce}[op]


def chained_loop(comm, op: str, x: np.ndarray, ranks: int, steps: int):
    """``steps`` mpi4py calls, each on the previous call's result, as the program's loop;
    after one run from ``x``, ``buffers[steps % 2][:x.size]`` is the program's result."""
    wide = ranks if op == "all_gather" else 1
    buffers = [np.tile(x, wide), np.empty(x.size * wide, np.float32)]
    call = mpi_call(comm, op, x.size)

    def loop():
        for step in range(steps):
            source, target = buffers[step % 2], buffers[1 - step % 2]
            call(source[: x.size], target)

    loop.buffers = buffers
    return loop


def check_result(comm, op: str, exe, arguments: list, x: np.ndarray, steps: int) -> None:
    """The program's result equals mpi4py's chained calls from the same operand."""
    from xhlo.runtime.mpi import run_on_rank

    (got,) = run_on_rank(exe, arguments)
    loop = chained_loop(comm, op, x, comm.Get_size(), steps)
    loop()
    np.testing.assert_allclose(got, loop.buffers[steps % 2][: x.size], rtol=1e-6)


def measure(comm, op: str, size: int, steps: int, samples: int) -> tuple[float, float, float, float]:
    """Seconds per collective: xhlo (a run of ``steps``; the step columns' slope), then
    mpi4py on fixed buffers and chained."""
    import xhlo
    from xhlo.runtime.mpi import run_on_rank

    ranks, elements = comm.Get_size(), size // 4
    x = (np.arange(elements) % 251 + comm.Get_rank()).astype(np.float32)  # rows told apart
    arguments = [x]
    if op == "ragged_all_to_all":
        arguments = [*ragged_metadata(elements, comm.Get_rank(), ranks), x]
    run_seconds = []
    for count in (steps, 2 * steps):
        exe = xhlo.compile(program(op, elements, ranks, count), keep_ir=False)
        run_seconds.append(time_samples(lambda: run_on_rank(exe, arguments), comm, samples))  # noqa: B023
    check_result(comm, op, exe, arguments, x, 2 * steps)
    out = np.empty(elements * (ranks if op == "all_gather" else 1), np.float32)
    call = mpi_call(comm, op, elements)

    def loop():
        for _ in range(steps):
            call(x, out)

    return (
        run_seconds[0] / steps,
        (run_seconds[1] - run_seconds[0]) / steps,
        time_samples(loop, comm, samples) / steps,
        time_samples(chained_loop(comm, op, x, ranks, steps), comm, samples) / steps,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--min-steps", type=int, default=4,
        help="collectives per program run at least (a run's fixed costs, such as handing "
        "back its result, are spread over them)",
    )
    args = parser.parse_args()

    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    ranks = comm.Get_size()
    samples = 3 if args.quick else 7
    sizes = SIZES[:3] if args.quick else SIZES
    rows = []
    for op in ("all_gather", "all_to_all", "all_reduce", "collective_permute", "ragged_all_to_all"):
        for size in sizes:
            rows.append((op, size, *measure(comm, op, size, steps_for(size, args.min_steps), samples)))
    if comm.Get_rank() == 0:
        print(f"{ranks} MPI ranks; time per collective (median of {samples} samples)")
        print(f"{'op':<20}{'size':>8}{'xhlo us':>10}{'step us':>10}{'mpi4py us':>11}{'ratio':>7}"
              f"{'chained us':>12}{'ratio':>7}{'step':>6}")
        for op, size, xt, st, mt, ct in rows:
            print(
                f"{op:<20}{size // KIB:>6}Ki{xt * 1e6:>10.1f}{st * 1e6:>10.1f}{mt * 1e6:>11.1f}"
                f"{xt / mt:>7.2f}{ct * 1e6:>12.1f}{xt / ct:>7.2f}{st / ct:>6.2f}"
            )


if __name__ == "__main__":
    main()

"""xhlo-run's multi-device modes: ``--devices N`` (one thread per device) and MPI ranks.

Inputs for device ``d`` are the npz entries ``arg{i}_dev{d}`` (``arg{i}`` when a
device has none: every device gets the same argument); results are written as
``out{j}_dev{d}``. A module without ``mhlo.num_replicas``/``mhlo.num_partitions``
runs as ``N`` replicas.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ..checks import CheckFailure
from .errors import CollectiveError

_COUNT_ATTRS = re.compile(r"mhlo\.num_(replicas|partitions)")


def _compile(path: str, entry: str | None, devices: int):
    import xhlo

    text = Path(path).read_text()
    overrides = {} if _COUNT_ATTRS.search(text) else {"num_replicas": devices}
    exe = xhlo.compile(text, entry=entry or "main", keep_ir=False, filename=path, **overrides)
    found = exe.num_replicas * exe.num_partitions
    if found != devices:
        raise CollectiveError(
            f"{path} runs on {found} devices ({exe.num_replicas} replicas x {exe.num_partitions} "
            f"partitions), not {devices}"
        )
    return exe


def device_inputs(path: str | None, device: int) -> list:
    """Device ``device``'s arguments from an npz file (``arg{i}_dev{d}``, else ``arg{i}``)."""
    if not path:
        return []
    from ..tools.npz import load_arguments

    arrays = load_arguments(path)
    args = []
    for i in sorted({i for i, _ in arrays}):
        own = arrays.get((i, device), arrays.get((i, None)))
        if own is None:
            raise ValueError(f"{path} has neither 'arg{i}_dev{device}' nor 'arg{i}'")
        args.append(own)
    return args


def _save(outputs: str | None, results_per_device: list[tuple]) -> None:
    if outputs:
        from ..tools.npz import save_results

        save_results(outputs, {f"out{j}_dev{d}": r for d, rs in enumerate(results_per_device)
                               for j, r in enumerate(rs)})


def run_file_on_devices(
    path: str, entry: str | None, inputs: str | None, outputs: str | None, devices: int
):
    """(passed, reason) of running ``path`` on ``devices`` in-process devices."""
    exe = _compile(path, entry, devices)
    args = [device_inputs(inputs, d) for d in range(devices)]
    try:
        results = exe.run_replicated(args)
    except CollectiveError as err:
        checks = {d: e for d, e in err.errors.items() if isinstance(e, CheckFailure)}
        if checks and len(checks) == len(err.errors):
            return False, "; ".join(f"device {d}: {e}" for d, e in sorted(checks.items()))
        raise
    _save(outputs, results)
    return True, f"{devices} devices"


def main_mpi(
    files: list[str], entry: str | None, inputs: str | None, outputs: str | None, timeout: float
) -> int:
    """Run each file as this rank's device; rank 0 prints PASS/FAIL lines and writes outputs."""
    from .mpi import abort_job, load_mpi, run_on_rank

    comm = load_mpi().COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if outputs and len(files) > 1:
        if rank == 0:
            print("xhlo-run: error: --outputs needs exactly one input file", file=sys.stderr)
        return 2
    failed = 0
    for path in files:
        try:  # every rank compiles the same file: a compile error is the same everywhere
            exe = _compile(path, entry, size)
        except Exception as err:  # noqa: BLE001 - reported as a FAIL line
            outcome = (False, f"{type(err).__name__}: {err}", ())
        else:
            try:
                args = device_inputs(inputs, rank)
            except Exception as err:  # noqa: BLE001 - the peers would wait for this rank: end the job
                abort_job(comm, f"device {rank}: {type(err).__name__}: {err}")
            try:
                outcome = (True, "", run_on_rank(exe, args, timeout=timeout))
            except CheckFailure as err:
                outcome = (False, f"device {rank}: {err}", ())
        gathered = comm.gather(outcome, root=0)
        if rank == 0:
            reasons = list(dict.fromkeys(reason for ok, reason, _ in gathered if not ok))
            if reasons:
                failed += 1
                print(f"FAIL {path}: " + "; ".join(reasons), flush=True)
            else:
                print(f"PASS {path} ({size} MPI ranks)", flush=True)
                _save(outputs, [results for _, _, results in gathered])
    if rank == 0:
        print(f"{len(files) - failed} passed, {failed} failed", flush=True)
    failed = comm.bcast(failed, root=0)
    return 1 if failed else 0

"""xhlo-run: compile and execute StableHLO modules, evaluating ``check.*`` calls.

Each file runs in a worker process, so a file that crashes the compiler or the
JIT (an LLVM abort, a segfault) is reported as a FAIL line and the run goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from xhlo.source import MLIR_BYTECODE_MAGIC

SPLIT_MARKER = "// -----"


# -- what a worker does with one file ----------------------------------------------


def split_chunks(text: str) -> list[str]:
    """The modules of a file, split at ``// -----`` lines like --split-input-file.

    Each chunk is padded with the blank lines before it, so diagnostics and
    check locations name lines of the whole file.
    """
    chunks, current, start = [], [], 0
    for number, line in enumerate(text.splitlines(keepends=True)):
        if line.strip() == SPLIT_MARKER:
            chunks.append("\n" * start + "".join(current))
            current, start = [], number + 1
        else:
            current.append(line)
    chunks.append("\n" * start + "".join(current))
    return [c for c in chunks if c.strip()]


def _load_inputs(path: str | None) -> list:
    if not path:
        return []
    from .npz import load_arguments

    arrays = load_arguments(path)
    per_device = [f"arg{i}_dev{d}" for i, d in arrays if d is not None]
    if per_device:
        raise ValueError(f"{path}: per-device inputs ('{per_device[0]}') need --devices N")
    missing = next((i for i in range(len(arrays)) if (i, None) not in arrays), None)
    if missing is not None:
        raise ValueError(f"{path}: 'arg{missing}' is missing (arguments are arg0, arg1, ... in order)")
    return [arrays[i, None] for i in range(len(arrays))]


def run_file(path: str, entry: str | None, inputs: str | None, outputs: str | None) -> tuple[bool, str]:
    """(passed, reason). Runs ``entry`` (default ``main``), or every zero-argument
    public function when the module has no such function (split test files)."""
    import xhlo
    from xhlo.checks import CheckFailure

    from . import run_parallel
    from .npz import save_results

    data = Path(path).read_bytes()
    if data.startswith(MLIR_BYTECODE_MAGIC):
        chunks: list[str | bytes] = [data]
    else:
        try:
            chunks = split_chunks(data.decode())
        except UnicodeDecodeError:
            return False, f"{path}: neither UTF-8 text nor MLIR bytecode"
    args = _load_inputs(inputs)
    ran = 0
    results_of: list[tuple[int, str, tuple]] = []  # (chunk, function, results)
    for index, chunk in enumerate(chunks):
        where = path if len(chunks) == 1 else f"{path} (chunk {index + 1})"
        try:
            programs = run_parallel.run_chunk(chunk, path) if isinstance(chunk, str) else None
        except CheckFailure as err:
            return False, f"{where}: {err}"
        if programs is not None:
            ran += 1
            continue
        first = _any_entry(chunk, entry) if isinstance(chunk, str) else entry or "main"
        probe = xhlo.compile(chunk, entry=first, keep_ir=False, filename=path)
        names = [entry or "main"] if (entry or "main") in probe.signatures else [
            n for n, s in probe.signatures.items() if not s.inputs
        ]
        if not names:
            return False, f"{where}: no function '{entry or 'main'}' and no zero-argument function to run"
        for name in names:
            try:
                result = probe.call_function(name, *args)
            except CheckFailure as err:
                return False, f"{where} @{name}: {err}"
            ran += 1
            results_of.append((index, name, result if isinstance(result, tuple) else (result,)))
    if not ran:
        return False, f"{path}: no function to run"
    if outputs:
        save_results(outputs, _result_names(results_of, len(chunks)))
    return True, f"{ran} function(s)"


def _result_names(results_of: list[tuple[int, str, tuple]], num_chunks: int) -> dict:
    """``out{i}`` for one function's results; with several, ``<function>_out{i}``
    (``chunk<k>_<function>_out{i}`` in a split file), so none overwrites another's."""
    if len(results_of) == 1:
        return {f"out{i}": r for i, r in enumerate(results_of[0][2])}
    named = {}
    for chunk, name, results in results_of:
        prefix = f"chunk{chunk + 1}_{name}_" if num_chunks > 1 else f"{name}_"
        named.update({f"{prefix}out{i}": r for i, r in enumerate(results)})
    return named


def _any_entry(chunk: str, entry: str | None) -> str:
    """A public function to compile the module with (the runner calls each later)."""
    wanted = entry or "main"
    names = re.findall(r"func\.func\s+(?:public\s+)?@([\w$.-]+)", chunk)
    privates = set(re.findall(r"func\.func\s+private\s+@([\w$.-]+)", chunk))
    publics = [n for n in names if n not in privates]
    if wanted in publics or not publics:
        return wanted
    return publics[0]


def _worker_main() -> int:
    """Read JSON requests from stdin, answer one JSON line each on stdout."""
    out = sys.stdout
    sys.stdout = sys.stderr  # keep stray prints away from the protocol
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request.get("devices"):
                from xhlo.runtime.cli import run_file_on_devices

                passed, reason = run_file_on_devices(
                    request["path"], request.get("entry"), request.get("inputs"), request.get("outputs"),
                    request["devices"],
                )
            else:
                passed, reason = run_file(
                    request["path"], request.get("entry"), request.get("inputs"), request.get("outputs")
                )
        except Exception as err:  # compile errors, bad inputs: a FAIL line, not a crash
            passed, reason = False, f"{type(err).__name__}: {err}"
        out.write(json.dumps({"passed": passed, "reason": reason}) + "\n")
        out.flush()
    return 0


# -- the driver: a pool of crash-isolated workers ------------------------------------


class Worker:
    def __init__(self):
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "xhlo.tools.run", "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._stderr: list[str] = []
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()

    def _drain(self, stream):
        for line in stream:
            self._stderr.append(line)
            del self._stderr[:-20]

    def run(self, request: dict, timeout: float) -> tuple[bool, str]:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer: list[str] = []
        reader = threading.Thread(target=lambda: answer.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        if reader.is_alive():
            self.kill()
            return False, f"timed out after {timeout:.0f} s"
        if not answer or not answer[0]:
            code = self.proc.wait()
            tail = "".join(self._stderr).strip().splitlines()[-3:]
            self.proc = None
            why = f"signal {-code}" if code < 0 else f"exit code {code}"
            return False, f"the compiler crashed ({why}): " + " | ".join(tail)
        reply = json.loads(answer[0])
        return reply["passed"], reply["reason"]

    def kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _parse_args(argv):
    p = argparse.ArgumentParser(
        prog="xhlo-run",
        description="Compile and run StableHLO modules on the CPU; evaluate check.* calls.",
    )
    p.add_argument("files", nargs="+", help="MLIR files (.mlir, .mlirbc)")
    p.add_argument("--entry", default=None, help="function to run (default: main, or every "
                   "zero-argument function of modules without main)")
    p.add_argument("--inputs", help="npz file with arguments arg0, arg1, ...")
    p.add_argument("--outputs", help="npz file to write results out0, out1, ... to "
                   "(<function>_out0, ... when several functions run)")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel workers")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per file")
    p.add_argument("-q", "--quiet", action="store_true", help="print only FAIL lines and the total")
    p.add_argument("--devices", type=_positive_int, default=None, help="run on N in-process devices (threads); "
                   "inputs arg{i}_dev{d}, outputs out{j}_dev{d}")
    p.add_argument("--mpi", action="store_true", help="run as one device per MPI rank (implied under "
                   "mpiexec with several ranks)")
    return p.parse_args(argv)


def _under_mpiexec() -> bool:
    """Started by mpiexec with several ranks (MPICH/hydra or Open MPI environment)."""
    return any(int(os.environ.get(name, "1") or 1) > 1 for name in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        return _worker_main()
    args = _parse_args(argv)
    if args.mpi or _under_mpiexec():
        from xhlo.runtime.cli import main_mpi

        return main_mpi(args.files, args.entry, args.inputs, args.outputs, args.timeout)
    if args.outputs and len(args.files) > 1:
        print("xhlo-run: error: --outputs needs exactly one input file", file=sys.stderr)
        return 2
    files = list(args.files)
    results: dict[int, tuple[bool, str]] = {}
    lock = threading.Lock()
    next_index = [0]
    show_progress = sys.stderr.isatty() and len(files) > 1
    start = time.monotonic()

    def work():
        worker = Worker()
        try:
            while True:
                with lock:
                    if next_index[0] >= len(files):
                        return
                    i = next_index[0]
                    next_index[0] += 1
                path = files[i]
                if not Path(path).exists():
                    outcome = (False, "no such file")
                else:
                    request = {"path": path, "entry": args.entry, "inputs": args.inputs,
                               "outputs": args.outputs, "devices": args.devices}
                    outcome = worker.run(request, args.timeout)
                with lock:
                    results[i] = outcome
                    _report(path, outcome, args.quiet)
                    if show_progress:
                        done = len(results)
                        fails = sum(not ok for ok, _ in results.values())
                        sys.stderr.write(f"\r[{done}/{len(files)}] {fails} failed, "
                                         f"{time.monotonic() - start:.0f}s ")
                        sys.stderr.flush()
        finally:
            worker.kill()

    threads = [threading.Thread(target=work) for _ in range(max(1, min(args.jobs, len(files))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if show_progress:
        sys.stderr.write("\n")
    failed = sum(not ok for ok, _ in results.values())
    print(f"{len(files) - failed} passed, {failed} failed")
    return 1 if failed else 0


def _report(path: str, outcome: tuple[bool, str], quiet: bool) -> None:
    ok, reason = outcome
    if ok and not quiet:
        print(f"PASS {path}", flush=True)
    elif not ok:
        print(f"FAIL {path}: {reason}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

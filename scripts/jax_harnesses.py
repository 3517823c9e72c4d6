"""Run JAX's primitive test harnesses through xhlo and compare every result with jax.jit.

    python scripts/jax_harnesses.py [--jobs 2] [--only SUBSTRING] [--timeout 300]

JAX ships one harness per (primitive, dtype, shape, parameters) case it tests
its lowerings with (``jax._src.internal_test_util.test_harnesses``, about 7400
cases with 64-bit types on the CPU); StableHLO's JAX-generated conformance
programs come from the same list. Each harness is exported with ``jax.export``
(x64 enabled unless ``JAX_ENABLE_X64=0`` is set; arguments as inputs), compiled
by xhlo, run on the harness's own random arguments and compared with
``jax.jit`` of the same function:

* integers and booleans exactly; floats and complex numbers within
  ``ATOL`` or a relative tolerance by precision (NaN matches NaN); linear
  algebra (``LINALG``) within a tolerance relative to the largest entry, as
  factorizations' errors scale with the matrix;
* ``eig``: the eigenvalues as a multiset (their order is unspecified), and each
  eigenvector by its residual ``|A v - lambda v|`` (a vector's phase is free);
  ``eigh``: each eigenvector after turning it to the phase of JAX's;
* an unstable sort's operands with equal keys in any order (keys exactly);
* ``top_k``: the values, and indices that point at elements of those values (a
  tie may pick either).

Cases JAX itself marks unimplemented on the CPU are left out. Each worker
process runs cases one after another; a worker that crashes or times out has
its case reported as failed and is replaced. Prints one line per failure and a
summary; exits 1 if any case failed.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time

ATOL = 1e-3
RTOL = {2: 1e-2, 4: 1e-5, 8: 1e-12}  # by the byte size of a real component
LINALG = {"cholesky", "lu", "qr", "svd", "eigh", "triangular_solve", "tridiagonal_solve",
          "custom_linear_solve"}
LINALG_RTOL = {2: 2e-2, 4: 1e-3, 8: 1e-9}


def harnesses(only: str | None = None) -> list:
    os.environ.setdefault("JAX_ENABLE_X64", "1")  # JAX_ENABLE_X64=0 runs the 32-bit variants
    from jax._src.internal_test_util import test_harnesses

    return [h for h in test_harnesses.all_harnesses
            if h.filter("cpu") and (only is None or only in h.fullname)]


# -- oracles --------------------------------------------------------------------------------


def _precision(a) -> int:
    return a.dtype.itemsize // (2 if a.dtype.kind == "c" else 1)


def mismatch(got, want, scale_to_max: bool = False) -> str | None:
    """Why ``got`` is not ``want`` (None if it is), by the module docstring's rules."""
    import numpy as np

    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)} against {want.dtype}{list(want.shape)}"
    if got.dtype.kind in "biu":
        bad = got != want
    else:
        g = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
        w = want.astype(g.dtype)
        nan_g, nan_w = np.isnan(g), np.isnan(w)
        with np.errstate(invalid="ignore"):
            diff = np.abs(g - w)
        if scale_to_max:
            finite = np.abs(w[np.isfinite(w)])
            limit = LINALG_RTOL[_precision(got)] * max(finite.max() if finite.size else 0.0, 1.0)
        else:
            limit = np.maximum(ATOL, RTOL[_precision(got)] * np.abs(w))
        bad = ~((g == w) | (nan_g & nan_w) | (diff <= limit)) | (nan_g != nan_w)
    if not bad.any():
        return None
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{int(bad.sum())} of {bad.size} differ; at {first}: {got[first]!r} against {want[first]!r}"


def eig_mismatch(harness, args, got, want) -> str | None:
    """Eigenvalues as a multiset; eigenvectors (left ones first) by their residuals."""
    import numpy as np

    (a,) = args
    values, wanted = np.asarray(got[0]), np.asarray(want[0])
    if values.size == 0:
        return mismatch(values, wanted)
    tolerance = LINALG_RTOL[_precision(values)] * max(np.abs(a).max(initial=0.0), 1.0) * a.shape[-1]
    for v, w in zip(values.reshape(-1, values.shape[-1]), wanted.reshape(-1, wanted.shape[-1])):
        remaining = list(w)
        for value in v:
            distances = [abs(value - r) for r in remaining]
            nearest = int(np.argmin(distances))
            if distances[nearest] > tolerance:
                return f"eigenvalue {value} is none of {w}"
            remaining.pop(nearest)
    matrix = a.astype(np.complex128)
    sides = [left for left in (True, False)
             if harness.params[f"compute_{'left' if left else 'right'}_eigenvectors"]]
    for vectors, left in zip(got[1:], sides):
        vectors = np.asarray(vectors).astype(np.complex128)
        m = np.conj(np.swapaxes(matrix, -1, -2)) if left else matrix
        lam = np.conj(values) if left else values
        residual = m @ vectors - vectors * lam[..., None, :]
        if np.abs(residual).max(initial=0.0) > tolerance:
            return f"eigenvector residual {np.abs(residual).max():.3g} over {tolerance:.3g}"
    return None


def _bits(a):
    """``a``'s elements as unsigned integers of their bits (NaN payloads compare exactly)."""
    import numpy as np

    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind != "c" else a.view(f"u{a.dtype.itemsize // 2}")


def unstable_sort_mismatch(harness, got, want) -> str | None:
    """Keys as by ``mismatch``; the other operands' values per run of equal keys in any order."""
    import numpy as np

    keys, axis = harness.params["num_keys"], harness.params["dimension"]
    got = [np.moveaxis(np.asarray(g), axis, -1) for g in got]
    want = [np.moveaxis(np.asarray(w), axis, -1) for w in want]
    for g, w in zip(got[:keys], want[:keys]):
        if (why := mismatch(g, w)) is not None:
            return f"keys: {why}"
    if len(got) == keys:
        return None
    # rows of (key bits, operand bits) per position; complex operands give two columns
    def rows(arrays):
        columns = [_bits(a).reshape(-1, a.shape[-1], 1 + (a.dtype.kind == "c")) for a in arrays]
        return np.concatenate([c.astype(np.uint64) for c in columns], axis=-1)
    for g_row, w_row in zip(rows(got), rows(want)):
        if sorted(map(tuple, g_row.tolist())) != sorted(map(tuple, w_row.tolist())):
            return "operands with equal keys hold other values"
    return None


def top_k_mismatch(args, got, want) -> str | None:
    """Values as by ``mismatch``; each index points at an element of its value (ties may
    pick either)."""
    import numpy as np

    if (why := mismatch(got[0], want[0])) is not None:
        return f"values: {why}"
    picked = np.take_along_axis(np.asarray(args[0]), np.asarray(got[1]).astype(np.int64), axis=-1)
    if (why := mismatch(picked, np.asarray(got[0]))) is not None:
        return f"indices: {why}"
    return None


def with_phases_of(vectors, reference):
    """Each eigenvector (column) of ``vectors`` turned to the phase of ``reference``'s:
    an eigenvector is unique only up to one (a sign for real ones), which LAPACK builds
    choose differently."""
    import numpy as np

    vectors, reference = np.asarray(vectors), np.asarray(reference)
    if vectors.shape != reference.shape or vectors.ndim < 2:
        return vectors
    overlap = np.sum(np.conj(reference) * vectors, axis=-2, keepdims=True)
    size = np.abs(overlap)
    phase = np.where(size > 0, overlap / np.where(size > 0, size, 1), 1)
    return (vectors / phase).astype(vectors.dtype)


def check(harness, args, got, want) -> str | None:
    import jax

    want = jax.tree_util.tree_leaves(want)
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    if len(got) != len(want):
        return f"{len(got)} results against {len(want)}"
    if harness.group_name == "eig":
        return eig_mismatch(harness, args, got, want)
    if harness.group_name == "sort" and not harness.params.get("is_stable", True):
        return unstable_sort_mismatch(harness, got, want)
    if harness.group_name in ("top_k", "approx_top_k") and len(got) == 2:
        return top_k_mismatch(args, got, want)
    if harness.group_name == "eigh":
        got[0] = with_phases_of(got[0], want[0])
    for k, (g, w) in enumerate(zip(got, want)):
        if (why := mismatch(g, w, scale_to_max=harness.group_name in LINALG)) is not None:
            return f"result {k}: {why}"
    return None


def run_case(harness) -> dict:
    """Compile and run one harness; its outcome as a JSON-able dict."""
    import jax
    import numpy as np
    import xhlo
    from jax import export

    # as JAX takes them: with x64 off, int64/float64 arguments become 32-bit
    args = [np.asarray(jax.numpy.asarray(a)) for a in harness.dyn_args_maker(np.random.RandomState(1234))]
    try:
        want = jax.jit(harness.dyn_fun)(*args)
        exported = export.export(jax.jit(harness.dyn_fun), platforms=["cpu"])(*args)
    except Exception as err:  # noqa: BLE001  (JAX cannot run it: not xhlo's to pass)
        return {"status": "skipped", "why": f"jax: {type(err).__name__}: {str(err)[:200]}"}
    try:
        got = xhlo.compile(exported, cache=False, keep_ir=False)(*args)
    except Exception as err:  # noqa: BLE001  (reported, the run goes on)
        return {"status": "failed", "why": f"{type(err).__name__}: {str(err)[:400]}"}
    why = check(harness, args, got, want)
    return {"status": "failed", "why": why} if why else {"status": "passed"}


# -- workers ---------------------------------------------------------------------------------


def worker(only: str | None) -> None:
    """Read case indices from stdin, write one JSON line per case to stdout."""
    cases = harnesses(only)
    for line in sys.stdin:
        harness = cases[int(line)]
        try:
            outcome = run_case(harness)
        except Exception as err:  # noqa: BLE001
            outcome = {"status": "failed", "why": f"{type(err).__name__}: {str(err)[:400]}"}
        print(json.dumps(outcome), flush=True)


def drive(indices, command: list[str], jobs: int, timeout: float) -> dict[int, dict]:
    """Run each index on one of ``jobs`` crash-isolated workers: processes started with
    ``command`` that read an index per line and answer one JSON line per index."""
    todo: queue.Queue[int] = queue.Queue()
    for index in indices:
        todo.put(index)
    outcomes: dict[int, dict] = {}

    def serve() -> None:
        proc = None
        while True:
            try:
                index = todo.get_nowait()
            except queue.Empty:
                break
            if proc is None or proc.poll() is not None:
                proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
            timer = threading.Timer(timeout, proc.kill)
            timer.start()
            proc.stdin.write(f"{index}\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            timer.cancel()
            if line:
                outcomes[index] = json.loads(line)
            else:
                proc.wait()
                why = f"timed out after {timeout:.0f} s" if proc.returncode == -9 else f"crashed ({proc.returncode})"
                outcomes[index] = {"status": "failed", "why": f"the worker {why}"}
        if proc is not None and proc.poll() is None:
            proc.stdin.close()
            proc.wait()

    threads = [threading.Thread(target=serve) for _ in range(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--only", help="run the cases whose name contains this")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per case")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        worker(options.only)
        return 0
    cases = harnesses(options.only)
    start = time.perf_counter()
    command = [sys.executable, __file__, "--worker"] + (["--only", options.only] if options.only else [])
    outcomes = drive(range(len(cases)), command, options.jobs, options.timeout)
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for index, outcome in sorted(outcomes.items()):
        counts[outcome["status"]] += 1
        if outcome["status"] == "failed":
            print(f"FAIL {cases[index].fullname}: {outcome['why']}")
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped "
          f"(JAX could not run them) of {len(cases)} harnesses in {time.perf_counter() - start:.0f} s")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

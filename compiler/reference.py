"""The StableHLO reference interpreter as an oracle, isolated in a child process.

The interpreter aborts the whole process on some ops (``LLVM ERROR``), so it
runs in a subprocess; a crash becomes a ``ReferenceUnavailable`` exception.
Used by the test-suite to check xhlo's results independently.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np


class ReferenceUnavailable(RuntimeError):
    """The reference interpreter could not evaluate the module."""


def evaluate(module_text: str, *args: np.ndarray, timeout: float = 120.0) -> tuple[np.ndarray, ...]:
    """Results of ``@main(*args)`` computed by StableHLO's reference interpreter."""
    with tempfile.TemporaryDirectory(prefix="xhlo-ref-") as tmp:
        src, inp, out = (os.path.join(tmp, n) for n in ("m.mlir", "in.npz", "out.npz"))
        with open(src, "w") as f:
            f.write(module_text)
        np.savez(inp, **{f"arg{i}": np.asarray(a) for i, a in enumerate(args)})
        proc = subprocess.run(
            [sys.executable, "-m", "xhlo.reference", src, inp, out],
            capture_output=True, text=True, timeout=timeout,
        )
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise ReferenceUnavailable(f"reference interpreter failed: {tail}")
        with np.load(out) as data:
            return tuple(data[f"out{i}"] for i in range(len(data.files)))


def _child(src: str, inp: str, out: str) -> None:
    from ._mlir import ir, new_context, stablehlo_api

    with new_context(), ir.Location.unknown():
        with open(src) as f:
            module = ir.Module.parse(f.read())
        with np.load(inp) as data:
            arrays = [data[f"arg{i}"] for i in range(len(data.files))]
        attrs = [ir.DenseElementsAttr.get(np.ascontiguousarray(a)) for a in arrays]
        results = stablehlo_api.eval_module(module, attrs)
        np.savez(out, **{f"out{i}": np.array(r) for i, r in enumerate(results)})


if __name__ == "__main__":
    _child(*sys.argv[1:4])

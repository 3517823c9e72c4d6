"""The BLAS and LAPACK xhlo calls (large float matmuls, JAX's LAPACK custom calls): OpenBLAS
from the ``scipy-openblas32`` wheel.

Its CBLAS entry points carry a ``scipy_`` prefix (``scipy_cblas_sgemm``) and
take 32-bit integers. The library is loaded into the process once, its
symbols global (``load_globally``), so the JIT resolves them like libc's. Without the wheel
xhlo compiles matmuls to vectorized loops instead.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import importlib.util
import os

GEMM_SYMBOLS = {"f32": "scipy_cblas_sgemm", "f64": "scipy_cblas_dgemm"}
# OpenBLAS >= 0.3.30: a batch of equally strided matrices in one call, spread over its threads
BATCHED_GEMM_SYMBOLS = {"f32": "scipy_cblas_sgemm_batch_strided", "f64": "scipy_cblas_dgemm_batch_strided"}
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CBLAS enum values

# After each call OpenBLAS's worker threads spin for 2**OPENBLAS_THREAD_TIMEOUT
# cycles before they sleep: by default 2**28, about 0.1 s, on one of this
# machine's two cores. That spinning took the core from everything after a
# matmul: the other part of a compile (process CPU time 1.9x the compile's own
# right after a run), xhlo's parallel loops. 2**22 cycles is about 1.5 ms,
# still longer than the gap between back-to-back matmuls. Read once, when the
# library loads; a value the user set wins.
SPIN_BEFORE_SLEEP = "22"


@functools.cache
def library_path() -> str | None:
    """Path of libscipy_openblas, or None when the wheel is not installed."""
    # the wheel's lib/ folder (its get_lib_dir()), found without running the package's
    # __init__, whose importlib.metadata lookup costs ~25 ms of a process's first compile
    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:
        return None
    lib_dir = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    names = glob.glob(os.path.join(lib_dir, "libscipy_openblas*.so*"))
    return min(names) if names else None


SYMBOL_PREFIX = "scipy_"  # every symbol of the wheel's library: CBLAS, LAPACK, LAPACKE


def available() -> bool:
    return library_path() is not None


def shared_libs_for(module) -> list[str]:
    """The shared libraries a module (``ir.Module``, after any stage) needs: the BLAS if it calls one."""
    path = library_path()
    if path is None:
        return []
    for op in module.body.operations:
        attrs = op.operation.attributes
        if "sym_name" in attrs and str(attrs["sym_name"]).strip('"').startswith(SYMBOL_PREFIX):
            return [path]
    return []


@functools.cache
def load_globally(path: str) -> ctypes.CDLL:
    """Load a shared library once, its symbols visible to every compiled program
    (handing it to each ExecutionEngine made the engine read the file, ~4 ms a compile)."""
    chosen = "OPENBLAS_THREAD_TIMEOUT" in os.environ
    if not chosen:
        os.environ["OPENBLAS_THREAD_TIMEOUT"] = SPIN_BEFORE_SLEEP
    try:
        return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    finally:
        if not chosen:
            del os.environ["OPENBLAS_THREAD_TIMEOUT"]


def kernel_name() -> str | None:
    """The CPU kernels OpenBLAS chose (``SkylakeX``, ``Haswell``, ...; ``OPENBLAS_CORETYPE``
    overrides its own choice), None without the wheel."""
    path = library_path()
    if path is None:
        return None
    corename = load_globally(path).scipy_openblas_get_corename
    corename.restype = ctypes.c_char_p
    return corename().decode()

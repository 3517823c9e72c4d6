"""Opt-in glibc malloc tuning: reuse freed memory instead of page faulting.

glibc serves big requests with fresh ``mmap`` pages, or from per-thread
arenas that it trims when they are freed, so a program that mallocs and frees
large blocks pays a page fault per 4 KiB touched on every call. Compiled xhlo
programs no longer do (``xhlo-cache-large-allocations`` parks and reuses their
large heap buffers), but everything else in the process still does: numpy's
result arrays, and XLA's buffers when JAX runs beside xhlo
(``bench_collectives.py --keep-freed-memory`` applies this to both, for a
like-for-like comparison). ``keep_freed_memory`` makes glibc keep freed memory
for reuse; glibc caps the mmap threshold at 32 MiB, so it also turns ``mmap``
for large blocks off. It is process-wide, trades memory for speed, and has to
be called before threads start (their arenas are made on first use); so it is
not applied by default.
"""

from __future__ import annotations

import ctypes

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8
_LARGEST_MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's limit on 64-bit


def keep_freed_memory(*, trim_threshold: int = 1 << 40) -> bool:
    """Tune glibc malloc to keep and reuse freed memory; False when malloc is not glibc's."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    settings = (
        (_M_ARENA_MAX, 1),  # one arena: memory freed by one thread is reused by all
        (_M_MMAP_THRESHOLD, _LARGEST_MMAP_THRESHOLD),
        (_M_TRIM_THRESHOLD, min(trim_threshold, 2**31 - 1)),
        (_M_MMAP_MAX, 0),  # blocks above the largest threshold come from the heap too
    )
    return all(mallopt(option, value) == 1 for option, value in settings)

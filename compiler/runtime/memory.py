"""Opt-in malloc tuning for multi-device runs: reuse freed memory instead of page faulting.

Compiled programs allocate their large buffers (gathered operands, results)
with ``malloc`` on every call. glibc serves big requests with fresh ``mmap``
pages, or from per-thread arenas that it trims when they are freed, so every
call pays a page fault per 4 KiB touched; on a VM that can be the larger part
of a big collective (measured: a 16 MiB all_reduce on 2 devices ~40 ms by
default, ~8 ms with this tuning). ``keep_freed_memory`` makes glibc keep freed
memory for reuse, as ML runtimes' caching allocators do. glibc caps the mmap
threshold at 32 MiB, so it also turns ``mmap`` for large blocks off: with one
arena they come from the (never trimmed) heap as well (a 64 MiB all_reduce on
2 devices: ~220 ms with only the threshold raised, ~52 ms with this). It is process-wide,
trades memory for speed, and has to be called before the device threads start
(their arenas are made on first use); so it is not applied by default.
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

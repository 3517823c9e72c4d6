"""Memory reuse: large result arrays, and opt-in glibc malloc tuning.

``result_array`` gives every program's large results (128 KiB and more) memory
that earlier results freed: the Executable allocates results with it, so a
program called repeatedly does not fault in fresh pages for its outputs.

glibc serves big requests with fresh ``mmap`` pages, or from per-thread
arenas that it trims when they are freed, so a program that mallocs and frees
large blocks pays a page fault per 4 KiB touched on every call. Compiled xhlo
programs no longer do (``xhlo-cache-large-allocations`` parks and reuses their
large heap buffers) nor their large results (``result_array``), but everything
else in the process still does: numpy arrays made elsewhere, and XLA's buffers
when JAX runs beside xhlo
(``bench_collectives.py --keep-freed-memory`` applies this to both, for a
like-for-like comparison). ``keep_freed_memory`` makes glibc keep freed memory
for reuse; glibc caps the mmap threshold at 32 MiB, so it also turns ``mmap``
for large blocks off. It is process-wide, trades memory for speed, and has to
be called before threads start (their arenas are made on first use); so it is
not applied by default.
"""

from __future__ import annotations

import ctypes
import math
import sys
import threading
import weakref

import numpy as np

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


# -- large result arrays whose memory is reused --------------------------------------------

# Results of at least this many bytes come from recycled blocks (glibc hands freed blocks from
# its mmap threshold up back to the kernel): a fresh large array costs a
# page fault per 4 KiB (or zeroing and compacting 2 MiB huge pages) on first touch, which
# made a 64 MiB all_gather step take 70-145 ms instead of 37-41 (bench_collectives.py).
RECYCLE_MIN_BYTES = 128 * 1024
RECYCLE_CAPACITY_BYTES = 512 * 1024 * 1024  # freed blocks kept for reuse, at most


class _Recycler:
    """Blocks of memory behind result arrays, taken back when the caller drops an array.

    A result is a view of a ``uint8`` block. When the array is collected, the block goes
    back to a free list by size, unless something else still refers to it (a view the
    caller kept: numpy views point at the block), so no live array ever shares memory
    with a later result.
    """

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._free: dict[int, list[np.ndarray]] = {}
        self._held = 0
        self._lock = threading.Lock()
        self._unshared_refcount = self._measure_unshared_refcount()

    def empty(self, shape: tuple[int, ...], dtype, nbytes: int | None = None) -> np.ndarray:
        if nbytes is None:
            dtype = np.dtype(dtype)
            nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < RECYCLE_MIN_BYTES:
            return np.empty(shape, dtype)
        with self._lock:
            blocks = self._free.get(nbytes)
            block = blocks.pop() if blocks else None
            if block is not None:
                self._held -= nbytes
        if block is None:
            block = np.empty(nbytes, np.uint8)
        array = block.view(dtype).reshape(shape)
        weakref.finalize(array, self._give_back, block)
        return array

    def _give_back(self, block: np.ndarray) -> None:
        if sys.getrefcount(block) > self._unshared_refcount:
            return  # a view of the dropped array is alive: its memory is not ours to reuse
        with self._lock:
            if self._held + block.nbytes <= self.capacity:
                self._free.setdefault(block.nbytes, []).append(block)
                self._held += block.nbytes

    def clear(self) -> None:
        with self._lock:
            self._free.clear()
            self._held = 0

    @staticmethod
    def _measure_unshared_refcount() -> int:
        """The block's reference count inside ``_give_back`` when nothing else holds it."""
        counts: list[int] = []

        def probe(block: np.ndarray) -> None:
            counts.append(sys.getrefcount(block))

        block = np.empty(8, np.uint8)
        array = block.view(np.uint8)
        weakref.finalize(array, probe, block)
        del block, array
        return counts[0]


_recycler = _Recycler(RECYCLE_CAPACITY_BYTES)


def result_array(shape: tuple[int, ...], dtype, nbytes: int | None = None) -> np.ndarray:
    """An uninitialized result array; large ones reuse the memory of dropped results.
    ``nbytes``: its size when the caller knows it (the call path: no recomputation)."""
    return _recycler.empty(shape, dtype, nbytes)


def release_recycled_memory() -> None:
    """Free the blocks kept for reuse (they are otherwise kept up to RECYCLE_CAPACITY_BYTES)."""
    _recycler.clear()

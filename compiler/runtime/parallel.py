"""Where ``xhlo_parallel_for`` sends loops: the native thread pool, on all cores.

``xhlo-parallelize-loops`` outlines a large loop into a body function
``body(captures, begin, end)`` and calls ``xhlo_parallel_for``, which calls the
function pointer in the module's ``xhlo_parallel_dispatch`` slot, or runs the
body over the whole range while the slot is null. ``install`` points the slot
at the dispatcher of ``native_pool``: it cuts ``[begin, end)`` into chunks on
the loop's step grid and runs them on persistent worker threads and on the
calling thread, all in native code, so a parallel loop costs microseconds
and no GIL.

Loops run serially (the whole range on the calling thread) when the number of
threads is 1 (``XHLO_NUM_THREADS=1`` or ``set_num_threads(1)``), and whenever
another caller (a Python thread, a device thread of a multi-device run) is
using the pool: no call ever waits for another's loop.
"""

from __future__ import annotations

import ctypes
import os

from . import native_pool
from .program import packed_function

SLOT_ADDRESS = "xhlo_parallel_dispatch_slot"  # emitted by xhlo-parallelize-loops: () -> slot address


def _requested_threads() -> int | None:
    """``XHLO_NUM_THREADS``, if it names a count."""
    text = os.environ.get("XHLO_NUM_THREADS", "")
    return int(text) if text.strip().isdigit() and int(text) >= 1 else None


def usable_cores() -> set[int]:
    """The cores this process may run on."""
    try:
        return set(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return set(range(os.cpu_count() or 1))


_num_threads = _requested_threads() or len(usable_cores())
_chosen = _requested_threads() is not None  # by the environment or set_num_threads


def get_num_threads() -> int:
    return _num_threads


def set_num_threads(count: int) -> int:
    """Threads a parallel loop runs on (1: serial); returns the previous count."""
    global _chosen
    _chosen = True
    return _set_threads(count)


def share_cores(sharers: int) -> None:
    """This process shares its cores with ``sharers - 1`` others (MPI ranks on one node):
    unless a thread count was chosen, loops use this process's share of the cores, as
    OpenMP-based MPI programs are run, so the ranks' pool threads do not take turns on
    the same cores."""
    if not _chosen and sharers > 1:
        _set_threads(max(1, len(usable_cores()) // sharers))


def _set_threads(count: int) -> int:
    global _num_threads
    if count < 1:
        raise ValueError(f"the number of threads must be at least 1, got {count}")
    previous, _num_threads = _num_threads, count
    pool = native_pool.pool() if count > 1 else native_pool.existing_pool()
    if pool is not None:
        pool.set_threads(count)
    return previous


def jobs_run() -> int:
    """Loops the pool has run on several threads so far in this process (serial runs do not count)."""
    pool = native_pool.existing_pool()
    return pool.jobs if pool is not None else 0


def chunks(begin: int, end: int, step: int, count: int) -> list[tuple[int, int]]:
    """``[begin, end)`` in at most ``count`` sub-ranges of whole iterations, each starting on the step grid.

    The native dispatcher cuts a loop the same way (``native_pool``).
    """
    iterations = max(0, -(-(end - begin) // step))
    count = max(1, min(count, iterations))
    bounds = [begin + (iterations * k // count) * step for k in range(count + 1)]
    bounds[-1] = end
    return [(bounds[k], bounds[k + 1]) for k in range(count) if bounds[k] < bounds[k + 1]]


def install(program) -> bool:
    """Point ``program``'s dispatch slot at the pool; False if it has no parallel loops (or no pool).

    ``program``: an ExecutionEngine, or a compiled program loaded from the disk
    cache (a ``ctypes.CDLL`` in its ``_library``). With one thread the slot is
    set all the same (the dispatcher then runs loops serially), so a later
    ``set_num_threads`` reaches programs compiled before it.
    """
    address = packed_function(program, SLOT_ADDRESS)
    if not address:
        return False
    pool = native_pool.pool()
    if pool is None:
        return False  # the slot stays null: the program runs its loops serially
    pool.set_threads(_num_threads)
    slot = ctypes.c_void_p()
    packed = (ctypes.c_void_p * 1)(ctypes.addressof(slot))
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)(packed)
    if not slot.value:
        return False
    ctypes.c_void_p.from_address(slot.value).value = pool.dispatch_address
    return True

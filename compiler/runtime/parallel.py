"""The thread pool behind ``xhlo_parallel_for``: loops of a compiled program on all cores.

``xhlo-parallelize-loops`` outlines a large loop into a body function
``body(captures, begin, end)`` and calls ``xhlo_parallel_for``, which calls the
function pointer in the module's ``xhlo_parallel_dispatch`` slot. ``install``
points that slot at ``dispatch`` below, a ctypes callback: it splits
``[begin, end)`` into chunks aligned to the loop's step and runs them on a
persistent pool of worker threads and on the calling thread. Each thread
calls the body through ctypes, which releases the GIL, so chunks run in
parallel. A chunk is taken by whichever thread gets to it first, so the caller
finishes the loop on its own when the workers are busy with another caller's
loop: no call ever waits for a chunk nobody will run.

Loops run serially (the whole range in the calling thread) when the number of
threads is 1 (``XHLO_NUM_THREADS=1`` or ``set_num_threads(1)``), inside a pool
worker (no nested parallelism), and on a device of a multi-device run (those
already use one thread, or process, per device).
"""

from __future__ import annotations

import _thread
import contextlib
import ctypes
import os
import queue
import threading

from .program import current_device

SLOT_ADDRESS = "xhlo_parallel_dispatch_slot"  # emitted by xhlo-parallelize-loops: () -> slot address
CHUNKS_PER_THREAD = 2  # a little slack for a thread that starts late

_BODY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_DISPATCH = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)


def _default_threads() -> int:
    text = os.environ.get("XHLO_NUM_THREADS", "")
    if text.strip().isdigit() and int(text) >= 1:
        return int(text)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_num_threads = _default_threads()
_local = threading.local()


def get_num_threads() -> int:
    return _num_threads


def set_num_threads(count: int) -> int:
    """Threads a parallel loop runs on (1: serial); returns the previous count."""
    global _num_threads
    if count < 1:
        raise ValueError(f"the number of threads must be at least 1, got {count}")
    previous, _num_threads = _num_threads, count
    return previous


class _Job:
    """One parallel loop: its chunks, taken once each by whichever thread comes first."""

    def __init__(self, body, captures: int | None, chunks: list[tuple[int, int]]):
        self.body, self.captures, self.chunks = body, captures, chunks
        self._next = 0
        self._unfinished = len(chunks)
        self._lock = threading.Lock()
        self._done = threading.Event()
        if not chunks:
            self._done.set()

    def _take(self) -> tuple[int, int] | None:
        with self._lock:
            if self._next == len(self.chunks):
                return None
            self._next += 1
            return self.chunks[self._next - 1]

    def run(self) -> None:
        while (chunk := self._take()) is not None:
            self.body(self.captures, *chunk)
            with self._lock:
                self._unfinished -= 1
                if not self._unfinished:
                    self._done.set()

    def finish(self) -> None:
        """Run chunks nobody took yet, then wait for the others. The JIT code after the
        loop reads what the chunks wrote, so a Ctrl-C is only delivered once all are done."""
        interrupted = False
        while not self._done.is_set():
            try:
                self.run()
                self._done.wait()
            except BaseException:  # noqa: BLE001 - KeyboardInterrupt: raised again below
                interrupted = True
        if interrupted:
            _thread.interrupt_main()


class _Pool:
    """Worker threads started on demand and kept for the life of the process."""

    def __init__(self):
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._workers: list[threading.Thread] = []
        self._lock = threading.Lock()

    def share(self, job: _Job, helpers: int) -> None:
        """Offer ``job`` to ``helpers`` workers (started if need be)."""
        with self._lock:
            while len(self._workers) < helpers:
                worker = threading.Thread(target=self._work, name=f"xhlo-parallel-{len(self._workers)}", daemon=True)
                worker.start()
                self._workers.append(worker)
        for _ in range(helpers):
            self._jobs.put(job)

    def _work(self) -> None:
        _local.in_worker = True
        while True:
            job = self._jobs.get()
            with contextlib.suppress(BaseException):  # keep the worker; the caller runs what is left
                job.run()


_pool = _Pool()


def _reset_after_fork() -> None:
    global _pool
    _pool = _Pool()  # the parent's workers do not exist in the child


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _runs_serially() -> bool:
    if _num_threads <= 1 or getattr(_local, "in_worker", False):
        return True
    device = current_device()
    return device is not None and device.num_replicas * device.num_partitions > 1


def chunks(begin: int, end: int, step: int, count: int) -> list[tuple[int, int]]:
    """``[begin, end)`` in at most ``count`` sub-ranges of whole iterations, each starting on the step grid."""
    iterations = max(0, -(-(end - begin) // step))
    count = max(1, min(count, iterations))
    bounds = [begin + (iterations * k // count) * step for k in range(count + 1)]
    bounds[-1] = end
    return [(bounds[k], bounds[k + 1]) for k in range(count) if bounds[k] < bounds[k + 1]]


_bodies: dict[int, object] = {}


def _body(address: int):
    body = _bodies.get(address)
    if body is None:
        if len(_bodies) > 4096:
            _bodies.clear()
        body = _bodies[address] = _BODY(address)
    return body


def _parallel_for(body_address: int, captures: int | None, begin: int, end: int, step: int) -> None:
    """The dispatch callback: never raises into JIT code, every chunk runs exactly once."""
    body = _body(body_address)
    if _runs_serially() or step <= 0:
        body(captures, begin, end)
        return
    job = _Job(body, captures, chunks(begin, end, step, _num_threads * CHUNKS_PER_THREAD))
    if len(job.chunks) > 1:
        with contextlib.suppress(BaseException):  # no threads: the caller runs every chunk
            _pool.share(job, min(_num_threads - 1, len(job.chunks) - 1))
    job.finish()


_dispatch = _DISPATCH(_parallel_for)  # kept alive for the life of the process
DISPATCH_ADDRESS = ctypes.cast(_dispatch, ctypes.c_void_p).value


def _packed_function(program, name: str) -> int:
    """Address of the ``_mlir_<name>`` wrapper (arguments and result through a pointer array), 0 if none."""
    library = getattr(program, "_library", None)  # a program the disk cache loaded
    try:
        if library is not None:
            return ctypes.cast(getattr(library, f"_mlir_{name}"), ctypes.c_void_p).value or 0
        return program.raw_lookup(name) or 0  # the ExecutionEngine adds the _mlir_ prefix
    except (AttributeError, RuntimeError, ValueError):
        return 0


def install(program) -> bool:
    """Point ``program``'s dispatch slot at the pool; False if it has no parallel loops.

    ``program``: an ExecutionEngine, or a compiled program loaded from the disk
    cache (a ``ctypes.CDLL`` in its ``_library``).
    """
    address = _packed_function(program, SLOT_ADDRESS)
    if not address:
        return False
    slot = ctypes.c_void_p()
    packed = (ctypes.c_void_p * 1)(ctypes.addressof(slot))
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)(packed)
    if not slot.value:
        return False
    ctypes.c_void_p.from_address(slot.value).value = DISPATCH_ADDRESS
    return True

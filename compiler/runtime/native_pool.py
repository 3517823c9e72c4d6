"""A thread pool in native code behind ``xhlo_parallel_for``: no Python per parallel loop.

Handing a loop to a Python thread pool costs tens of microseconds (a ctypes
callback, a lock, a queue, a wake-up per worker), so only loops of several
hundred microseconds gained from it. Here the pool itself is a small module
in the LLVM dialect, JIT-compiled once per process:

* ``dispatch(fn, ctx, begin, end, step)`` is what the programs' dispatch slot
  points at. It publishes a job (the body, its captures and the range, cut
  into chunks on the step grid), runs chunks itself, and waits until every
  chunk is done. If another caller holds the pool, it runs the whole range
  serially instead: no caller ever waits for another's loop.
* ``worker()`` is the loop each pool thread runs for the life of the process.
  The threads are Python threads that call it through ctypes (which releases
  the GIL), so they run without the GIL. A worker polls for a new job (busy
  polls, then ``sched_yield`` while jobs came recently, then naps growing to
  about a millisecond, so an idle pool costs little CPU), takes chunks and
  runs them.

All job state is one atomic word, the ticket: ``generation << 32 | chunks << 16
| next chunk``. A thread takes chunk ``k`` by a compare-and-swap of the ticket
from ``k`` to ``k + 1`` within the generation it saw, so a late thread can
never take a chunk of a newer job by mistake; the job's other fields are read
only after a successful swap, while the job cannot end (the taker's chunk is
not done yet), so the dispatcher cannot overwrite them under it.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import threading

from .spin_wait import monotonic_now_function

CHUNKS_PER_THREAD = 4  # slack for a thread that joins late or runs slower
MAX_CHUNKS = 0xFFFF  # the ticket's 16-bit chunk fields
SPINS = 2000  # busy polls before a worker starts yielding
YIELD_NANOSECONDS = 200_000  # an idle worker yields this long, then naps (BLAS threads need the cores)
NAP_MICROSECONDS = 50  # the first nap; each next one doubles ...
MAX_NAP_MICROSECONDS = 1000  # ... up to this
_POOL_NOW = monotonic_now_function("pool_now")

# Python reads and writes these through addresses(): configured thread count,
# shutdown flag, pool lock, jobs handed to the pool (for tests and statistics).
_PUBLIC_GLOBALS = ("threads", "shutdown", "busy", "jobs")


def _global(name: str, type_: str = "i64") -> str:
    zero = "llvm.mlir.zero : !llvm.ptr" if type_ == "!llvm.ptr" else "llvm.mlir.constant(0 : i64) : i64"
    return (f"  llvm.mlir.global internal @pool_{name}() {{addr_space = 0 : i32, alignment = 64 : i64}} : {type_} {{\n"
            f"    %z = {zero}\n    llvm.return %z : {type_}\n  }}\n")


# %<field>_at = the address of each field of the published job
_JOB_FIELD_ADDRESSES = "".join(
    f"    %{short}_at = llvm.mlir.addressof @pool_{name} : !llvm.ptr\n"
    for short, name in (("fn", "fn"), ("ctx", "ctx"), ("begin", "begin"), ("end", "end"),
                        ("step", "step"), ("iters", "iterations"))
)

_GLOBALS = "".join(
    [_global(name) for name in ("ticket", "done", *_PUBLIC_GLOBALS, "begin", "end", "step", "iterations")]
    + [_global(name, "!llvm.ptr") for name in ("fn", "ctx")]
)

_ADDRESS_STORES = "\n".join(
    f"""    %a{i} = llvm.mlir.addressof @{symbol} : !llvm.ptr
    %i{i} = llvm.ptrtoint %a{i} : !llvm.ptr to i64
    %k{i} = llvm.mlir.constant({i} : i64) : i64
    %p{i} = llvm.getelementptr %out[%k{i}] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    llvm.store %i{i}, %p{i} : i64, !llvm.ptr"""
    for i, symbol in enumerate(["xhlo_pool_dispatch", "xhlo_pool_worker", *(f"pool_{g}" for g in _PUBLIC_GLOBALS)])
)
ADDRESS_COUNT = 2 + len(_PUBLIC_GLOBALS)

_MODULE = f"""
module {{
  llvm.func @sched_yield() -> i32
  llvm.func @usleep(i32) -> i32
  llvm.func @clock_gettime(i32, !llvm.ptr) -> i32
{_GLOBALS}
  // out[0..]: dispatch, worker, then the public globals.
  llvm.func @xhlo_pool_addresses(%out: !llvm.ptr) {{
{_ADDRESS_STORES}
    llvm.return
  }}

{_POOL_NOW}
  // Take and run chunks of job %gen until none is left (or a newer job replaced it).
  llvm.func @pool_run_chunks(%gen: i64) {{
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c16 = llvm.mlir.constant(16 : i64) : i64
    %c32 = llvm.mlir.constant(32 : i64) : i64
    %mask = llvm.mlir.constant(65535 : i64) : i64
    %ticket = llvm.mlir.addressof @pool_ticket : !llvm.ptr
    %done = llvm.mlir.addressof @pool_done : !llvm.ptr
    llvm.br ^look
  ^look:
    %t = llvm.load %ticket atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %g = llvm.lshr %t, %c32 : i64
    %same = llvm.icmp "eq" %g, %gen : i64
    %n_field = llvm.lshr %t, %c16 : i64
    %n = llvm.and %n_field, %mask : i64
    %k = llvm.and %t, %mask : i64
    %left = llvm.icmp "ult" %k, %n : i64
    %open = llvm.and %same, %left : i1
    llvm.cond_br %open, ^take, ^out
  ^take:
    %t1 = llvm.add %t, %c1 : i64
    %swap = llvm.cmpxchg %ticket, %t, %t1 acq_rel acquire : !llvm.ptr, i64
    %taken = llvm.extractvalue %swap[1] : !llvm.struct<(i64, i1)>
    llvm.cond_br %taken, ^run, ^look
  ^run:
{_JOB_FIELD_ADDRESSES}    %fn = llvm.load %fn_at : !llvm.ptr -> !llvm.ptr
    %ctx = llvm.load %ctx_at : !llvm.ptr -> !llvm.ptr
    %begin = llvm.load %begin_at : !llvm.ptr -> i64
    %end = llvm.load %end_at : !llvm.ptr -> i64
    %step = llvm.load %step_at : !llvm.ptr -> i64
    %iters = llvm.load %iters_at : !llvm.ptr -> i64
    // chunk k: iterations [iters*k/n, iters*(k+1)/n), the last one ending at %end
    %lo_mul = llvm.mul %iters, %k : i64
    %lo_it = llvm.udiv %lo_mul, %n : i64
    %lo_off = llvm.mul %lo_it, %step : i64
    %b = llvm.add %begin, %lo_off : i64
    %k1 = llvm.add %k, %c1 : i64
    %hi_mul = llvm.mul %iters, %k1 : i64
    %hi_it = llvm.udiv %hi_mul, %n : i64
    %hi_off = llvm.mul %hi_it, %step : i64
    %hi = llvm.add %begin, %hi_off : i64
    %last = llvm.icmp "eq" %k1, %n : i64
    %e = llvm.select %last, %end, %hi : i1, i64
    llvm.call %fn(%ctx, %b, %e) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
    %old = llvm.atomicrmw add %done, %c1 release : !llvm.ptr, i64
    llvm.br ^look
  ^out:
    llvm.return
  }}

  llvm.func @xhlo_pool_dispatch(%fn: !llvm.ptr, %ctx: !llvm.ptr, %begin: i64, %end: i64, %step: i64) {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %c16 = llvm.mlir.constant(16 : i64) : i64
    %c32 = llvm.mlir.constant(32 : i64) : i64
    %per_thread = llvm.mlir.constant({CHUNKS_PER_THREAD} : i64) : i64
    %max_chunks = llvm.mlir.constant({MAX_CHUNKS} : i64) : i64
    %gen_mask = llvm.mlir.constant(4294967295 : i64) : i64
    %spins = llvm.mlir.constant({SPINS} : i64) : i64
    %threads_at = llvm.mlir.addressof @pool_threads : !llvm.ptr
    %busy = llvm.mlir.addressof @pool_busy : !llvm.ptr
    %ticket = llvm.mlir.addressof @pool_ticket : !llvm.ptr
    %done = llvm.mlir.addressof @pool_done : !llvm.ptr
    %threads = llvm.load %threads_at atomic monotonic {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %span = llvm.sub %end, %begin : i64
    %step_ok = llvm.icmp "sgt" %step, %c0 : i64
    %span_ok = llvm.icmp "sgt" %span, %c0 : i64
    %many = llvm.icmp "sge" %threads, %c2 : i64
    %ok1 = llvm.and %step_ok, %span_ok : i1
    %ok = llvm.and %ok1, %many : i1
    llvm.cond_br %ok, ^count, ^serial
  ^count:
    %step_less = llvm.sub %step, %c1 : i64
    %rounded = llvm.add %span, %step_less : i64
    %iters = llvm.sdiv %rounded, %step : i64
    %several = llvm.icmp "sge" %iters, %c2 : i64
    llvm.cond_br %several, ^lock, ^serial
  ^lock:
    %claim = llvm.cmpxchg %busy, %c0, %c1 acquire monotonic : !llvm.ptr, i64
    %claimed = llvm.extractvalue %claim[1] : !llvm.struct<(i64, i1)>
    llvm.cond_br %claimed, ^publish, ^serial
  ^publish:
    %wanted = llvm.mul %threads, %per_thread : i64
    %n1 = llvm.intr.smin(%wanted, %iters) : (i64, i64) -> i64
    %n = llvm.intr.smin(%n1, %max_chunks) : (i64, i64) -> i64
{_JOB_FIELD_ADDRESSES}    llvm.store %fn, %fn_at : !llvm.ptr, !llvm.ptr
    llvm.store %ctx, %ctx_at : !llvm.ptr, !llvm.ptr
    llvm.store %begin, %begin_at : i64, !llvm.ptr
    llvm.store %end, %end_at : i64, !llvm.ptr
    llvm.store %step, %step_at : i64, !llvm.ptr
    llvm.store %iters, %iters_at : i64, !llvm.ptr
    llvm.store %c0, %done atomic monotonic {{alignment = 8 : i64}} : i64, !llvm.ptr
    %t = llvm.load %ticket atomic monotonic {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %g = llvm.lshr %t, %c32 : i64
    %g1 = llvm.add %g, %c1 : i64
    %gen = llvm.and %g1, %gen_mask : i64
    %high = llvm.shl %gen, %c32 : i64
    %chunks = llvm.shl %n, %c16 : i64
    %fresh = llvm.or %high, %chunks : i64
    llvm.store %fresh, %ticket atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
    %jobs_at = llvm.mlir.addressof @pool_jobs : !llvm.ptr
    %jobs = llvm.atomicrmw add %jobs_at, %c1 monotonic : !llvm.ptr, i64
    llvm.call @pool_run_chunks(%gen) : (i64) -> ()
    llvm.br ^wait(%c0 : i64)
  ^wait(%i: i64):
    %finished = llvm.load %done atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %all = llvm.icmp "sge" %finished, %n : i64
    llvm.cond_br %all, ^release, ^pause
  ^pause:
    %next = llvm.add %i, %c1 : i64
    %spinning = llvm.icmp "slt" %i, %spins : i64
    llvm.cond_br %spinning, ^wait(%next : i64), ^yield
  ^yield:
    %y = llvm.call @sched_yield() : () -> i32
    llvm.br ^wait(%next : i64)
  ^release:
    llvm.store %c0, %busy atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
    llvm.return
  ^serial:
    llvm.call %fn(%ctx, %begin, %end) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
    llvm.return
  }}

  // A pool thread: run chunks of every new job until the shutdown flag is set.
  llvm.func @xhlo_pool_worker() {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %c32 = llvm.mlir.constant(32 : i64) : i64
    %spins = llvm.mlir.constant({SPINS} : i64) : i64
    %yielding_ns = llvm.mlir.constant({YIELD_NANOSECONDS} : i64) : i64
    %first_nap = llvm.mlir.constant({NAP_MICROSECONDS} : i32) : i32
    %max_nap = llvm.mlir.constant({MAX_NAP_MICROSECONDS} : i32) : i32
    %two = llvm.mlir.constant(2 : i32) : i32
    %clock = llvm.alloca %c2 x i64 : (i64) -> !llvm.ptr
    %ticket = llvm.mlir.addressof @pool_ticket : !llvm.ptr
    %shutdown = llvm.mlir.addressof @pool_shutdown : !llvm.ptr
    %t0 = llvm.load %ticket atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %seen0 = llvm.lshr %t0, %c32 : i64
    llvm.br ^poll(%seen0, %c0, %c0, %first_nap : i64, i64, i64, i32)
  ^poll(%seen: i64, %polls: i64, %idle_since: i64, %nap: i32):
    %stop = llvm.load %shutdown atomic monotonic {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %stopping = llvm.icmp "ne" %stop, %c0 : i64
    llvm.cond_br %stopping, ^exit, ^check
  ^check:
    %t = llvm.load %ticket atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %gen = llvm.lshr %t, %c32 : i64
    %new = llvm.icmp "ne" %gen, %seen : i64
    llvm.cond_br %new, ^work, ^idle
  ^work:
    llvm.call @pool_run_chunks(%gen) : (i64) -> ()
    llvm.br ^poll(%gen, %c0, %c0, %first_nap : i64, i64, i64, i32)
  ^idle:
    %polls1 = llvm.add %polls, %c1 : i64
    %spinning = llvm.icmp "slt" %polls, %spins : i64
    llvm.cond_br %spinning, ^poll(%seen, %polls1, %idle_since, %nap : i64, i64, i64, i32), ^relax
  ^relax:
    %now = llvm.call @pool_now(%clock) : (!llvm.ptr) -> i64
    %first = llvm.icmp "eq" %polls, %spins : i64
    %since = llvm.select %first, %now, %idle_since : i1, i64
    %elapsed = llvm.sub %now, %since : i64
    %yielding = llvm.icmp "slt" %elapsed, %yielding_ns : i64
    llvm.cond_br %yielding, ^yield, ^nap
  ^yield:
    %y = llvm.call @sched_yield() : () -> i32
    llvm.br ^poll(%seen, %polls1, %since, %nap : i64, i64, i64, i32)
  ^nap:
    %s = llvm.call @usleep(%nap) : (i32) -> i32
    %doubled = llvm.mul %nap, %two : i32
    %longer = llvm.intr.smin(%doubled, %max_nap) : (i32, i32) -> i32
    llvm.br ^poll(%seen, %polls1, %since, %longer : i64, i64, i64, i32)
  ^exit:
    llvm.return
  }}
}}
"""

_WORKER = ctypes.CFUNCTYPE(None)


class NativePool:
    """The JIT-compiled pool of this process and the Python threads that run its workers."""

    def __init__(self):
        from .._mlir import ExecutionEngine, ir, new_context

        with new_context():
            self._engine = ExecutionEngine(ir.Module.parse(_MODULE), opt_level=2)  # kept for the process
        addresses = (ctypes.c_int64 * ADDRESS_COUNT)()
        argument = ctypes.c_void_p(ctypes.addressof(addresses))
        packed = (ctypes.c_void_p * 1)(ctypes.addressof(argument))  # packed ABI: pointers to arguments
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(self._engine.raw_lookup("xhlo_pool_addresses"))(packed)
        self.dispatch_address: int = addresses[0]
        self._worker = _WORKER(addresses[1])
        self._words = {name: ctypes.c_int64.from_address(addresses[2 + i]) for i, name in enumerate(_PUBLIC_GLOBALS)}
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    @property
    def jobs(self) -> int:
        """Loops handed to the pool so far (not those a caller ran serially)."""
        return self._words["jobs"].value

    def set_threads(self, count: int) -> None:
        """Run loops on ``count`` threads: the caller and ``count - 1`` workers (started on demand)."""
        with self._lock:
            while len(self._threads) < count - 1:
                thread = threading.Thread(target=self._worker, name=f"xhlo-pool-{len(self._threads)}", daemon=True)
                thread.start()
                self._threads.append(thread)
            self._words["threads"].value = count

    def shutdown(self) -> None:
        """Stop the workers (at exit: none is left running native code while Python finalizes)."""
        with self._lock:
            self._words["shutdown"].value = 1
            for thread in self._threads:
                thread.join(timeout=1.0)
            self._threads.clear()
            self._words["threads"].value = 1  # from now on every loop runs on its caller

    def after_fork(self) -> None:
        """In a forked child the parent's workers do not exist: forget them, unlock the pool."""
        self._threads = []
        self._lock = threading.Lock()
        self._words["busy"].value = 0
        self._words["threads"].value = 1


_pool: NativePool | None = None
_pool_lock = threading.Lock()


def pool() -> NativePool | None:
    """The process's native pool, compiled on first use; None if it cannot be compiled."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                try:
                    _pool = NativePool()
                except Exception:  # noqa: BLE001 - without it, loops run serially (still correct)
                    _pool = False
                else:
                    atexit.register(_pool.shutdown)
    return _pool or None


def existing_pool() -> NativePool | None:
    """The pool if some call compiled it already (never compiles)."""
    return _pool or None


def _reset_after_fork() -> None:
    if _pool:
        _pool.after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)

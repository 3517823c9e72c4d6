"""A wait loop in native code, so in-process devices synchronize without the GIL.

In-process collectives synchronize their device threads at every call. A
``threading.Condition`` costs a futex wake-up plus a GIL hand-over per waiter,
tens of microseconds per collective, more than moving a few KiB. Instead each
group of devices counts arrivals in a shared 64-bit word, and a waiting device
calls ``wait_at_least`` here: a loop JIT-compiled from the LLVM dialect and
called through ctypes, which releases the GIL while it spins. It returns as
soon as the count reaches the target (``READY``), when the world's event
counter changes (``EVENT``: a device failed, finished or gave up), or after a
bounded slice of spinning, yielding and napping (``SLICE_OVER``), so Python
regains control to check deadlines and peers. It never waits unboundedly.
"""

from __future__ import annotations

import ctypes
import threading

READY, EVENT, SLICE_OVER, DISAGREE = 1, 2, 0, 4

# The slice: busy polls first (peers usually arrive within microseconds), then
# sched_yield (lets an oversubscribed core run the peer we wait for) until
# YIELD_NANOSECONDS have passed, then naps of NAP_MICROSECONDS so a long wait
# costs little CPU, until SLICE_NANOSECONDS have passed (measured with
# CLOCK_MONOTONIC: a loaded machine must not stretch the slice past timeouts).
SPINS = 200
YIELD_NANOSECONDS = 20_000_000
SLICE_NANOSECONDS = 50_000_000
NAP_MICROSECONDS = 50
_CLOCK_MONOTONIC = 1

def monotonic_now_function(name: str) -> str:
    """LLVM-dialect text of ``name(%clock: !llvm.ptr) -> i64``: CLOCK_MONOTONIC in
    nanoseconds, using the 16-byte ``timespec`` that ``%clock`` points to."""
    return f"""  llvm.func @{name}(%clock: !llvm.ptr) -> i64 {{
    %id = llvm.mlir.constant({_CLOCK_MONOTONIC} : i32) : i32
    %billion = llvm.mlir.constant(1000000000 : i64) : i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %r = llvm.call @clock_gettime(%id, %clock) : (i32, !llvm.ptr) -> i32
    %nsec_at = llvm.getelementptr %clock[%one] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %sec = llvm.load %clock : !llvm.ptr -> i64
    %nsec = llvm.load %nsec_at : !llvm.ptr -> i64
    %scaled = llvm.mul %sec, %billion : i64
    %now = llvm.add %scaled, %nsec : i64
    llvm.return %now : i64
  }}
"""


MONOTONIC_NOW = monotonic_now_function("xhlo_now")


_MODULE = f"""
module {{
  llvm.func @sched_yield() -> i32
  llvm.func @usleep(i32) -> i32
  llvm.func @clock_gettime(i32, !llvm.ptr) -> i32
  llvm.func @xhlo_spin_wait_addresses(%out: !llvm.ptr) {{
    %wait = llvm.mlir.addressof @xhlo_wait_at_least : !llvm.ptr
    %exchange = llvm.mlir.addressof @xhlo_exchange : !llvm.ptr
    %w = llvm.ptrtoint %wait : !llvm.ptr to i64
    %x = llvm.ptrtoint %exchange : !llvm.ptr to i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %second = llvm.getelementptr %out[%one] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    llvm.store %w, %out : i64, !llvm.ptr
    llvm.store %x, %second : i64, !llvm.ptr
    llvm.return
  }}
{MONOTONIC_NOW}  llvm.func @xhlo_wait_at_least(%count: !llvm.ptr, %target: i64, %events: !llvm.ptr, %seen: i64) -> i64 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %spins = llvm.mlir.constant({SPINS} : i64) : i64
    %yielding_ns = llvm.mlir.constant({YIELD_NANOSECONDS} : i64) : i64
    %slice_ns = llvm.mlir.constant({SLICE_NANOSECONDS} : i64) : i64
    %nap = llvm.mlir.constant({NAP_MICROSECONDS} : i32) : i32
    %clock = llvm.alloca %c2 x i64 : (i64) -> !llvm.ptr
    llvm.br ^poll(%c0, %c0 : i64, i64)
  ^poll(%i: i64, %start: i64):
    %v = llvm.load %count atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %ready = llvm.icmp "sge" %v, %target : i64
    llvm.cond_br %ready, ^done(%c1 : i64), ^events
  ^events:
    %e = llvm.load %events atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %changed = llvm.icmp "ne" %e, %seen : i64
    %next = llvm.add %i, %c1 : i64
    llvm.cond_br %changed, ^done(%c2 : i64), ^pause
  ^pause:
    %spinning = llvm.icmp "slt" %i, %spins : i64
    llvm.cond_br %spinning, ^poll(%next, %start : i64, i64), ^relax
  ^relax:
    %now = llvm.call @xhlo_now(%clock) : (!llvm.ptr) -> i64
    %first = llvm.icmp "eq" %i, %spins : i64
    %began = llvm.select %first, %now, %start : i1, i64
    %elapsed = llvm.sub %now, %began : i64
    %over = llvm.icmp "sge" %elapsed, %slice_ns : i64
    llvm.cond_br %over, ^done(%c0 : i64), ^rest
  ^rest:
    %yielding = llvm.icmp "slt" %elapsed, %yielding_ns : i64
    llvm.cond_br %yielding, ^yield, ^nap
  ^yield:
    %y = llvm.call @sched_yield() : () -> i32
    llvm.br ^poll(%next, %began : i64, i64)
  ^nap:
    %s = llvm.call @usleep(%nap) : (i32) -> i32
    llvm.br ^poll(%next, %began : i64, i64)
  ^done(%r: i64):
    llvm.return %r : i64
  }}
  // Arrival wait, agreement check, copies, departure: one call per collective and device.
  llvm.func @xhlo_exchange(%count: !llvm.ptr, %target: i64, %events: !llvm.ptr, %seen: i64,
                           %ids: !llvm.ptr, %size: i64, %table: !llvm.ptr,
                           %copies: !llvm.ptr, %ncopies: i64) -> i64 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %c3 = llvm.mlir.constant(3 : i64) : i64
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %c5 = llvm.mlir.constant(5 : i64) : i64
    %arrived = llvm.call @xhlo_wait_at_least(%count, %target, %events, %seen) : (!llvm.ptr, i64, !llvm.ptr, i64) -> i64
    %complete = llvm.icmp "eq" %arrived, %c1 : i64
    llvm.cond_br %complete, ^agree(%c1 : i64), ^done(%arrived : i64)
  ^agree(%p: i64):
    %more = llvm.icmp "slt" %p, %size : i64
    llvm.cond_br %more, ^compare(%p : i64), ^copy(%c0 : i64)
  ^compare(%q: i64):
    %first = llvm.load %ids : !llvm.ptr -> i64
    %at = llvm.getelementptr %ids[%q] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %id = llvm.load %at : !llvm.ptr -> i64
    %same = llvm.icmp "eq" %id, %first : i64
    %q1 = llvm.add %q, %c1 : i64
    llvm.cond_br %same, ^agree(%q1 : i64), ^done(%c4 : i64)
  ^copy(%k: i64):
    %pending = llvm.icmp "slt" %k, %ncopies : i64
    llvm.cond_br %pending, ^one(%k : i64), ^depart
  ^one(%j: i64):
    %base = llvm.mul %j, %c5 : i64
    %f1 = llvm.add %base, %c1 : i64
    %f2 = llvm.add %base, %c2 : i64
    %f3 = llvm.add %base, %c3 : i64
    %f4 = llvm.add %base, %c4 : i64
    %a0 = llvm.getelementptr %copies[%base] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %a1 = llvm.getelementptr %copies[%f1] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %a2 = llvm.getelementptr %copies[%f2] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %a3 = llvm.getelementptr %copies[%f3] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %a4 = llvm.getelementptr %copies[%f4] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %src_slot = llvm.load %a0 : !llvm.ptr -> i64
    %src_offset = llvm.load %a1 : !llvm.ptr -> i64
    %dst_slot = llvm.load %a2 : !llvm.ptr -> i64
    %dst_offset = llvm.load %a3 : !llvm.ptr -> i64
    %nbytes = llvm.load %a4 : !llvm.ptr -> i64
    %sa = llvm.getelementptr %table[%src_slot] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %da = llvm.getelementptr %table[%dst_slot] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %src_base = llvm.load %sa : !llvm.ptr -> !llvm.ptr
    %dst_base = llvm.load %da : !llvm.ptr -> !llvm.ptr
    %src = llvm.getelementptr %src_base[%src_offset] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %dst = llvm.getelementptr %dst_base[%dst_offset] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    "llvm.intr.memcpy"(%dst, %src, %nbytes) <{{isVolatile = false}}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    %k1 = llvm.add %j, %c1 : i64
    llvm.br ^copy(%k1 : i64)
  ^depart:
    %old = llvm.atomicrmw add %count, %c1 acq_rel : !llvm.ptr, i64
    %final = llvm.add %target, %size : i64
    llvm.br ^leave
  ^leave:
    %now = llvm.load %events atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %left = llvm.call @xhlo_wait_at_least(%count, %final, %events, %now) : (!llvm.ptr, i64, !llvm.ptr, i64) -> i64
    %gone = llvm.icmp "eq" %left, %c1 : i64
    llvm.cond_br %gone, ^done(%c1 : i64), ^leave
  ^done(%r: i64):
    llvm.return %r : i64
  }}
}}
"""

_WAIT = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)
_EXCHANGE = ctypes.CFUNCTYPE(
    ctypes.c_int64, *([ctypes.c_void_p, ctypes.c_int64] * 2), ctypes.c_void_p, ctypes.c_int64,
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
)
_lock = threading.Lock()
_native = None  # (engine, wait, exchange) once compiled


def _compile():
    from .._mlir import ExecutionEngine, ir, new_context

    with new_context():
        engine = ExecutionEngine(ir.Module.parse(_MODULE), opt_level=2)
    addresses = (ctypes.c_int64 * 2)()
    argument = ctypes.c_void_p(ctypes.addressof(addresses))
    packed = (ctypes.c_void_p * 1)(ctypes.addressof(argument))  # packed ABI: pointers to arguments
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup("xhlo_spin_wait_addresses"))(packed)
    return engine, _WAIT(addresses[0]), _EXCHANGE(addresses[1])


def _functions():
    """(wait, exchange), compiled on first use. Compiled code needs the same JIT,
    so there is nothing to fall back on when it fails."""
    global _native
    if _native is None:
        with _lock:
            if _native is None:
                _native = _compile()
    return _native[1:]


def wait_function():
    """``wait_at_least(count_address, target, events_address, seen_events) -> READY|EVENT|SLICE_OVER``."""
    return _functions()[0]


def exchange_function():
    """``exchange(count, target, events, seen, ids, size, table, copies, ncopies) -> status``.

    Waits (one slice) until ``count`` reaches ``target``; returns the wait's
    status if it does not. Then checks that the ``size`` int64 ``ids`` agree
    (``DISAGREE`` if not, nothing copied), runs the ``ncopies`` copies (int64
    records ``src_slot, src_offset, dst_slot, dst_offset, nbytes``; slots index
    the address ``table``), counts this device's departure into ``count`` and
    waits until every member departed (``target + size``): ``READY``.
    """
    return _functions()[1]

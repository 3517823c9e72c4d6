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

The fast path: ``xhlo-runtime-fast-path`` makes every runtime call site of a
program call ``xhlo_rt_fast(k, descriptors)`` first. It finds this thread's
context (``xhlo_set_context``: a pthread key, set around each program call to
``[num_call_sites, record address per call site]``); when call site ``k`` has a
record (the in-process transport writes one after the site's first successful
call on this device) and the group is not poisoned, it posts the buffer
addresses, arrives and runs ``xhlo_exchange`` without Python or the GIL. A late
peer, a failure or a mismatch leaves the arrival pending in the record, and
the Python callback resumes from there with its timeouts and error reports.
An in-place all_reduce chains two records: after the first exchange
``xhlo_fast_kernel`` binds the op's compiled fold kernel to the blocks the
members posted and calls it, then the second exchange copies the folded blocks.
A record whose first field is 0 is a *handler record* instead: its second
field is a native ``handler(record, descriptors) -> status`` that runs the
call (the MPI transport's, ``mpi_fast``).
"""

from __future__ import annotations

import ctypes
import threading
from typing import NamedTuple

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
# Copies of at least this many bytes use non-temporal stores (``xhlo_copy``): a 64 MiB copy
# takes 5.6 ms instead of glibc memmove's 10.2 (which keeps regular stores for copies far
# larger than this, its threshold following the 260 MiB L3), but below ~64 MiB a copy
# whose destination is read right after is faster through the cache (16 MiB: 2.0 vs 3.1 ms).
STREAM_BYTES = 64 * 1024 * 1024
_CLOCK_MONOTONIC = 1

# The record of one call site on one device that ``xhlo_rt_fast`` runs without Python
# (int64 fields; ``_Exchange.fast_record`` in ``inprocess`` fills it): the group's arrival
# count and this member's barrier counter, the world's event counter, the agreement ids,
# the address table and copy plan of ``xhlo_exchange``, the group's failure flag, an
# optional result flag byte to set, the pending arrival Python resumes; then, for an
# in-place all_reduce, the second exchange's record and the fold kernel to run between
# the two (its packed entry, argument block and binding plan: ``(table slot, byte offset,
# descriptor address)`` per argument) and where it says it failed (0: it cannot); then
# each buffer's itemsize.
(R_COUNT, R_BARRIER, R_SIZE, R_EVENTS, R_IDS, R_SLOT, R_AGREEMENT, R_TABLE, R_ROW, R_NBUFS,
 R_COPIES, R_NCOPIES, R_FAILURE, R_FLAG_SLOT, R_FLAG_VALUE, R_PENDING_TARGET,
 R_PENDING_STATUS, R_NEXT, R_KERNEL, R_KERNEL_ARGS, R_KERNEL_PLAN, R_KERNEL_NPLAN,
 R_KERNEL_STATUS, R_ITEMSIZES) = range(24)


# The argument block of ``xhlo_ragged_pull`` (int64 fields): the group's address table,
# buffers per member, this member's position, the group size, row bytes, input and
# output rows, the index arrays' itemsize, updates per member, the result's bytes; then
# what it sets when a sender's rows are out of bounds: status 1, sender position, input
# row, rows, output row.
(RG_TABLE, RG_STRIDE, RG_POSITION, RG_SIZE, RG_ROW, RG_IN_ROWS, RG_OUT_ROWS, RG_ITEMSIZE,
 RG_UPDATES, RG_RESULT_BYTES, RG_STATUS, RG_SENDER, RG_START, RG_ROWS, RG_DEST) = range(15)


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


# Index arrays of ragged all-to-all (shared with ``mpi_fast``): an element as i64; row
# range checks.
INDEX_HELPERS = """  // Element %i of an index array of %itemsize (4 or 8) bytes, as i64.
  llvm.func internal @index_at(%base: !llvm.ptr, %i: i64, %itemsize: i64) -> i64 {
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %narrow = llvm.icmp "eq" %itemsize, %c4 : i64
    llvm.cond_br %narrow, ^i32, ^i64
  ^i32:
    %at32 = llvm.getelementptr %base[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %v32 = llvm.load %at32 : !llvm.ptr -> i32
    %w = llvm.sext %v32 : i32 to i64
    llvm.br ^return(%w : i64)
  ^i64:
    %at64 = llvm.getelementptr %base[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %v64 = llvm.load %at64 : !llvm.ptr -> i64
    llvm.br ^return(%v64 : i64)
  ^return(%v: i64):
    llvm.return %v : i64
  }
  // Whether rows [%start, %start + %rows) lie within [0, %limit) (no rows: always).
  llvm.func internal @rows_within(%start: i64, %rows: i64, %limit: i64) -> i1 {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %false = llvm.mlir.constant(false) : i1
    %true = llvm.mlir.constant(true) : i1
    %none = llvm.icmp "eq" %rows, %c0 : i64
    %negative = llvm.icmp "slt" %rows, %c0 : i64
    %before = llvm.icmp "slt" %start, %c0 : i64
    %end = llvm.add %start, %rows : i64
    %after = llvm.icmp "sgt" %end, %limit : i64
    %outside = llvm.or %before, %after : i1
    %ok_rows = llvm.select %outside, %false, %true : i1, i1
    %ok = llvm.select %none, %true, %ok_rows : i1, i1
    %result = llvm.select %negative, %false, %ok : i1, i1
    llvm.return %result : i1
  }
  // Whether rows [%a, %a + %m) and [%b, %b + %n) share a row (no rows share none).
  llvm.func internal @regions_meet(%a: i64, %m: i64, %b: i64, %n: i64) -> i1 {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %end_a = llvm.add %a, %m : i64
    %end_b = llvm.add %b, %n : i64
    %some_a = llvm.icmp "sgt" %m, %c0 : i64
    %some_b = llvm.icmp "sgt" %n, %c0 : i64
    %a_before_b_ends = llvm.icmp "slt" %a, %end_b : i64
    %b_before_a_ends = llvm.icmp "slt" %b, %end_a : i64
    %both = llvm.and %some_a, %some_b : i1
    %meet = llvm.and %a_before_b_ends, %b_before_a_ends : i1
    %r = llvm.and %both, %meet : i1
    llvm.return %r : i1
  }
"""


_MODULE = f"""
module {{
  llvm.func @sched_yield() -> i32
  llvm.func @usleep(i32) -> i32
  llvm.func @clock_gettime(i32, !llvm.ptr) -> i32
  llvm.func @pthread_key_create(!llvm.ptr, !llvm.ptr) -> i32
  llvm.func @pthread_getspecific(i32) -> !llvm.ptr
  llvm.func @pthread_setspecific(i32, !llvm.ptr) -> i32
  llvm.mlir.global internal @xhlo_context_key(0 : i32) : i32
  llvm.func @xhlo_spin_wait_addresses(%out: !llvm.ptr) {{
    %f0 = llvm.mlir.addressof @xhlo_wait_at_least : !llvm.ptr
    %f1 = llvm.mlir.addressof @xhlo_exchange : !llvm.ptr
    %f2 = llvm.mlir.addressof @xhlo_arrive : !llvm.ptr
    %f3 = llvm.mlir.addressof @xhlo_withdraw : !llvm.ptr
    %f4 = llvm.mlir.addressof @xhlo_set_context : !llvm.ptr
    %f5 = llvm.mlir.addressof @xhlo_rt_fast : !llvm.ptr
    %f6 = llvm.mlir.addressof @xhlo_ragged_pull : !llvm.ptr
    %a6 = llvm.getelementptr %out[6] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
    llvm.store %f6, %a6 : !llvm.ptr, !llvm.ptr
    %a1 = llvm.getelementptr %out[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
    %a2 = llvm.getelementptr %out[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
    %a3 = llvm.getelementptr %out[3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
    %a4 = llvm.getelementptr %out[4] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
    %a5 = llvm.getelementptr %out[5] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
    llvm.store %f0, %out : !llvm.ptr, !llvm.ptr
    llvm.store %f1, %a1 : !llvm.ptr, !llvm.ptr
    llvm.store %f2, %a2 : !llvm.ptr, !llvm.ptr
    llvm.store %f3, %a3 : !llvm.ptr, !llvm.ptr
    llvm.store %f4, %a4 : !llvm.ptr, !llvm.ptr
    llvm.store %f5, %a5 : !llvm.ptr, !llvm.ptr
    %null = llvm.mlir.zero : !llvm.ptr
    %key = llvm.mlir.addressof @xhlo_context_key : !llvm.ptr
    %r = llvm.call @pthread_key_create(%key, %null) : (!llvm.ptr, !llvm.ptr) -> i32
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
  // memcpy, but a copy of at least STREAM_BYTES streams its 64-byte-aligned middle to
  // memory with non-temporal stores (the destination is not read back from the cache
  // soon enough to matter at that size, and no read-for-ownership is paid).
  llvm.func @xhlo_copy(%dst: !llvm.ptr, %src: !llvm.ptr, %n: i64) {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c63 = llvm.mlir.constant(63 : i64) : i64
    %c64 = llvm.mlir.constant(64 : i64) : i64
    %stream = llvm.mlir.constant({STREAM_BYTES} : i64) : i64
    %large = llvm.icmp "sge" %n, %stream : i64
    llvm.cond_br %large, ^split, ^plain
  ^plain:
    "llvm.intr.memcpy"(%dst, %src, %n) <{{isVolatile = false}}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.return
  ^split:
    %dst_i = llvm.ptrtoint %dst : !llvm.ptr to i64
    %misaligned = llvm.and %dst_i, %c63 : i64
    %to_edge = llvm.sub %c64, %misaligned : i64
    %head = llvm.and %to_edge, %c63 : i64
    "llvm.intr.memcpy"(%dst, %src, %head) <{{isVolatile = false}}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    %body_dst = llvm.getelementptr %dst[%head] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %body_src = llvm.getelementptr %src[%head] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %rest = llvm.sub %n, %head : i64
    %lines = llvm.udiv %rest, %c64 : i64
    llvm.br ^line(%c0 : i64)
  ^line(%i: i64):
    %more = llvm.icmp "ult" %i, %lines : i64
    llvm.cond_br %more, ^store, ^tail
  ^store:
    %from = llvm.getelementptr %body_src[%i] : (!llvm.ptr, i64) -> !llvm.ptr, vector<16xi32>
    %to = llvm.getelementptr %body_dst[%i] : (!llvm.ptr, i64) -> !llvm.ptr, vector<16xi32>
    %v = llvm.load %from {{alignment = 1 : i64}} : !llvm.ptr -> vector<16xi32>
    llvm.store %v, %to {{alignment = 64 : i64, nontemporal}} : vector<16xi32>, !llvm.ptr
    %i1 = llvm.add %i, %c1 : i64
    llvm.br ^line(%i1 : i64)
  ^tail:
    llvm.fence seq_cst  // mfence: the streamed stores are visible before the departure
    %done = llvm.mul %lines, %c64 : i64
    %tail_dst = llvm.getelementptr %body_dst[%done] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %tail_src = llvm.getelementptr %body_src[%done] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %left = llvm.sub %rest, %done : i64
    "llvm.intr.memcpy"(%tail_dst, %tail_src, %left) <{{isVolatile = false}}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.return
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
    llvm.call @xhlo_copy(%dst, %src, %nbytes) : (!llvm.ptr, !llvm.ptr, i64) -> ()
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
  // Count one arrival of the member whose barrier counter is %barrier; the count that completes it.
  llvm.func @xhlo_arrive(%count: !llvm.ptr, %barrier: !llvm.ptr, %size: i64) -> i64 {{
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %b = llvm.load %barrier : !llvm.ptr -> i64
    %b1 = llvm.add %b, %c1 : i64
    llvm.store %b1, %barrier : i64, !llvm.ptr
    %old = llvm.atomicrmw add %count, %c1 acq_rel : !llvm.ptr, i64
    %target = llvm.mul %b1, %size : i64
    llvm.return %target : i64
  }}
  // Take back one arrival unless the barrier (%target) completed: 1 withdrawn, 0 completed.
  llvm.func @xhlo_withdraw(%count: !llvm.ptr, %target: i64) -> i64 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    llvm.br ^try
  ^try:
    %v = llvm.load %count atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %complete = llvm.icmp "sge" %v, %target : i64
    llvm.cond_br %complete, ^done(%c0 : i64), ^swap
  ^swap:
    %less = llvm.sub %v, %c1 : i64
    %pair = llvm.cmpxchg %count, %v, %less acq_rel acquire : !llvm.ptr, i64
    %ok = llvm.extractvalue %pair[1] : !llvm.struct<(i64, i1)>
    llvm.cond_br %ok, ^done(%c1 : i64), ^try
  ^done(%r: i64):
    llvm.return %r : i64
  }}
  // This thread's runtime context (see FAST_PATH); returns the previous one.
  llvm.func @xhlo_set_context(%context: !llvm.ptr) -> !llvm.ptr {{
    %key_at = llvm.mlir.addressof @xhlo_context_key : !llvm.ptr
    %key = llvm.load %key_at : !llvm.ptr -> i32
    %previous = llvm.call @pthread_getspecific(%key) : (i32) -> !llvm.ptr
    %r = llvm.call @pthread_setspecific(%key, %context) : (i32, !llvm.ptr) -> i32
    llvm.return %previous : !llvm.ptr
  }}
  // One exchange of call site record %rec whose buffers are posted: arrive, exchange,
  // depart. 0 done, 2 arrived but not complete (the record keeps the pending arrival).
  llvm.func @xhlo_fast_step(%rec: !llvm.ptr) -> i64 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %fields = llvm.load %rec : !llvm.ptr -> !llvm.array<{R_ITEMSIZES} x i64>
    %count_i = llvm.extractvalue %fields[{R_COUNT}] : !llvm.array<{R_ITEMSIZES} x i64>
    %barrier_i = llvm.extractvalue %fields[{R_BARRIER}] : !llvm.array<{R_ITEMSIZES} x i64>
    %size = llvm.extractvalue %fields[{R_SIZE}] : !llvm.array<{R_ITEMSIZES} x i64>
    %events_i = llvm.extractvalue %fields[{R_EVENTS}] : !llvm.array<{R_ITEMSIZES} x i64>
    %ids_i = llvm.extractvalue %fields[{R_IDS}] : !llvm.array<{R_ITEMSIZES} x i64>
    %slot = llvm.extractvalue %fields[{R_SLOT}] : !llvm.array<{R_ITEMSIZES} x i64>
    %agreement = llvm.extractvalue %fields[{R_AGREEMENT}] : !llvm.array<{R_ITEMSIZES} x i64>
    %table_i = llvm.extractvalue %fields[{R_TABLE}] : !llvm.array<{R_ITEMSIZES} x i64>
    %copies_i = llvm.extractvalue %fields[{R_COPIES}] : !llvm.array<{R_ITEMSIZES} x i64>
    %ncopies = llvm.extractvalue %fields[{R_NCOPIES}] : !llvm.array<{R_ITEMSIZES} x i64>
    %count = llvm.inttoptr %count_i : i64 to !llvm.ptr
    %barrier = llvm.inttoptr %barrier_i : i64 to !llvm.ptr
    %events = llvm.inttoptr %events_i : i64 to !llvm.ptr
    %ids = llvm.inttoptr %ids_i : i64 to !llvm.ptr
    %table2 = llvm.inttoptr %table_i : i64 to !llvm.ptr
    %copies = llvm.inttoptr %copies_i : i64 to !llvm.ptr
    %my_id = llvm.getelementptr %ids[%slot] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    llvm.store %agreement, %my_id : i64, !llvm.ptr
    %target = llvm.call @xhlo_arrive(%count, %barrier, %size) : (!llvm.ptr, !llvm.ptr, i64) -> i64
    %seen = llvm.load %events atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %status = llvm.call @xhlo_exchange(%count, %target, %events, %seen, %ids, %size, %table2, %copies, %ncopies) : (!llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64) -> i64
    %ready = llvm.icmp "eq" %status, %c1 : i64
    llvm.cond_br %ready, ^departed, ^pending
  ^departed:
    %b = llvm.load %barrier : !llvm.ptr -> i64
    %b1 = llvm.add %b, %c1 : i64
    llvm.store %b1, %barrier : i64, !llvm.ptr
    %flag_slot = llvm.extractvalue %fields[{R_FLAG_SLOT}] : !llvm.array<{R_ITEMSIZES} x i64>
    %has_flag = llvm.icmp "sge" %flag_slot, %c0 : i64
    llvm.cond_br %has_flag, ^flag, ^finished
  ^flag:
    %row2 = llvm.extractvalue %fields[{R_ROW}] : !llvm.array<{R_ITEMSIZES} x i64>
    %flag_entry = llvm.add %row2, %flag_slot : i64
    %flag_at_at = llvm.getelementptr %table2[%flag_entry] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %flag_at = llvm.load %flag_at_at : !llvm.ptr -> !llvm.ptr
    %flag_value = llvm.extractvalue %fields[{R_FLAG_VALUE}] : !llvm.array<{R_ITEMSIZES} x i64>
    %flag = llvm.trunc %flag_value : i64 to i8
    llvm.store %flag, %flag_at : i8, !llvm.ptr
    llvm.br ^finished
  ^finished:
    llvm.return %c0 : i64
  ^pending:
    %pt = llvm.getelementptr %rec[{R_PENDING_TARGET}] : (!llvm.ptr) -> !llvm.ptr, i64
    %ps = llvm.getelementptr %rec[{R_PENDING_STATUS}] : (!llvm.ptr) -> !llvm.ptr, i64
    llvm.store %target, %pt : i64, !llvm.ptr
    llvm.store %status, %ps : i64, !llvm.ptr
    llvm.return %c2 : i64
  }}
  // An in-place all_reduce's fold between its two exchanges: bind each kernel argument
  // to its block (table entry + offset) and call the kernel's packed entry.
  llvm.func @xhlo_fast_kernel(%rec: !llvm.ptr) {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %c3 = llvm.mlir.constant(3 : i64) : i64
    %table_at = llvm.getelementptr %rec[{R_TABLE}] : (!llvm.ptr) -> !llvm.ptr, i64
    %table = llvm.load %table_at : !llvm.ptr -> !llvm.ptr
    %plan_at = llvm.getelementptr %rec[{R_KERNEL_PLAN}] : (!llvm.ptr) -> !llvm.ptr, i64
    %plan = llvm.load %plan_at : !llvm.ptr -> !llvm.ptr
    %n_at = llvm.getelementptr %rec[{R_KERNEL_NPLAN}] : (!llvm.ptr) -> !llvm.ptr, i64
    %n = llvm.load %n_at : !llvm.ptr -> i64
    llvm.br ^loop(%c0 : i64)
  ^loop(%i: i64):
    %more = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %more, ^bind, ^call
  ^bind:
    %base = llvm.mul %i, %c3 : i64
    %f1 = llvm.add %base, %c1 : i64
    %f2 = llvm.add %base, %c2 : i64
    %slot_at = llvm.getelementptr %plan[%base] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %offset_at = llvm.getelementptr %plan[%f1] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %desc_at = llvm.getelementptr %plan[%f2] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %slot = llvm.load %slot_at : !llvm.ptr -> i64
    %offset = llvm.load %offset_at : !llvm.ptr -> i64
    %desc = llvm.load %desc_at : !llvm.ptr -> !llvm.ptr
    %entry_at = llvm.getelementptr %table[%slot] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %buffer = llvm.load %entry_at : !llvm.ptr -> i64
    %address = llvm.add %buffer, %offset : i64
    %aligned_at = llvm.getelementptr %desc[1] : (!llvm.ptr) -> !llvm.ptr, i64
    llvm.store %address, %desc : i64, !llvm.ptr
    llvm.store %address, %aligned_at : i64, !llvm.ptr
    %i1 = llvm.add %i, %c1 : i64
    llvm.br ^loop(%i1 : i64)
  ^call:
    %kernel_at = llvm.getelementptr %rec[{R_KERNEL}] : (!llvm.ptr) -> !llvm.ptr, i64
    %kernel = llvm.load %kernel_at : !llvm.ptr -> !llvm.ptr
    %args_at = llvm.getelementptr %rec[{R_KERNEL_ARGS}] : (!llvm.ptr) -> !llvm.ptr, i64
    %args = llvm.load %args_at : !llvm.ptr -> !llvm.ptr
    llvm.call %kernel(%args) : !llvm.ptr, (!llvm.ptr) -> ()
    llvm.return
  }}
{INDEX_HELPERS}  // Field %b (0 input, 2 input offsets, 3 sizes, 4 output offsets) of update %f of a
  // ragged pull: member %f / updates's update %f % updates for this member (its input's
  // address for %b = 0).
  llvm.func internal @ragged_field(%args: !llvm.ptr, %f: i64, %b: i64) -> i64 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %fields = llvm.load %args : !llvm.ptr -> !llvm.array<{RG_STATUS} x i64>
    %table_i = llvm.extractvalue %fields[{RG_TABLE}] : !llvm.array<{RG_STATUS} x i64>
    %stride = llvm.extractvalue %fields[{RG_STRIDE}] : !llvm.array<{RG_STATUS} x i64>
    %position = llvm.extractvalue %fields[{RG_POSITION}] : !llvm.array<{RG_STATUS} x i64>
    %updates = llvm.extractvalue %fields[{RG_UPDATES}] : !llvm.array<{RG_STATUS} x i64>
    %itemsize = llvm.extractvalue %fields[{RG_ITEMSIZE}] : !llvm.array<{RG_STATUS} x i64>
    %table = llvm.inttoptr %table_i : i64 to !llvm.ptr
    %j = llvm.udiv %f, %updates : i64
    %u = llvm.urem %f, %updates : i64
    %theirs = llvm.mul %j, %stride : i64
    %slot = llvm.add %theirs, %b : i64
    %base_at = llvm.getelementptr %table[%slot] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
    %base = llvm.load %base_at : !llvm.ptr -> !llvm.ptr
    %input = llvm.icmp "eq" %b, %c0 : i64
    llvm.cond_br %input, ^address, ^index
  ^address:
    %address = llvm.ptrtoint %base : !llvm.ptr to i64
    llvm.return %address : i64
  ^index:
    %mine = llvm.mul %position, %updates : i64
    %k = llvm.add %mine, %u : i64
    %v = llvm.call @index_at(%base, %k, %itemsize) : (!llvm.ptr, i64, i64) -> i64
    llvm.return %v : i64
  }}
  // The rows the %n updates of a ragged pull bring in all; -1 if one is out of bounds
  // (RG_STATUS 1, and which: its member, input row, rows, output row).
  llvm.func internal @ragged_check(%args: !llvm.ptr, %n: i64) -> i64 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %c3 = llvm.mlir.constant(3 : i64) : i64
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %minus1 = llvm.mlir.constant(-1 : i64) : i64
    %in_rows_at = llvm.getelementptr %args[{RG_IN_ROWS}] : (!llvm.ptr) -> !llvm.ptr, i64
    %out_rows_at = llvm.getelementptr %args[{RG_OUT_ROWS}] : (!llvm.ptr) -> !llvm.ptr, i64
    %updates_at = llvm.getelementptr %args[{RG_UPDATES}] : (!llvm.ptr) -> !llvm.ptr, i64
    %in_rows = llvm.load %in_rows_at : !llvm.ptr -> i64
    %out_rows = llvm.load %out_rows_at : !llvm.ptr -> i64
    %updates = llvm.load %updates_at : !llvm.ptr -> i64
    llvm.br ^update(%c0, %c0 : i64, i64)
  ^update(%f: i64, %total: i64):
    %more = llvm.icmp "slt" %f, %n : i64
    llvm.cond_br %more, ^read, ^done(%total : i64)
  ^read:
    %rows = llvm.call @ragged_field(%args, %f, %c3) : (!llvm.ptr, i64, i64) -> i64
    %start = llvm.call @ragged_field(%args, %f, %c2) : (!llvm.ptr, i64, i64) -> i64
    %dest = llvm.call @ragged_field(%args, %f, %c4) : (!llvm.ptr, i64, i64) -> i64
    %read_ok = llvm.call @rows_within(%start, %rows, %in_rows) : (i64, i64, i64) -> i1
    %write_ok = llvm.call @rows_within(%dest, %rows, %out_rows) : (i64, i64, i64) -> i1
    %ok = llvm.and %read_ok, %write_ok : i1
    %f1 = llvm.add %f, %c1 : i64
    %total1 = llvm.add %total, %rows : i64
    llvm.cond_br %ok, ^update(%f1, %total1 : i64, i64), ^refuse
  ^refuse:
    %status_at = llvm.getelementptr %args[{RG_STATUS}] : (!llvm.ptr) -> !llvm.ptr, i64
    %sender_at = llvm.getelementptr %args[{RG_SENDER}] : (!llvm.ptr) -> !llvm.ptr, i64
    %start_at = llvm.getelementptr %args[{RG_START}] : (!llvm.ptr) -> !llvm.ptr, i64
    %rows_at = llvm.getelementptr %args[{RG_ROWS}] : (!llvm.ptr) -> !llvm.ptr, i64
    %dest_at = llvm.getelementptr %args[{RG_DEST}] : (!llvm.ptr) -> !llvm.ptr, i64
    %sender = llvm.udiv %f, %updates : i64
    llvm.store %c1, %status_at : i64, !llvm.ptr
    llvm.store %sender, %sender_at : i64, !llvm.ptr
    llvm.store %start, %start_at : i64, !llvm.ptr
    llvm.store %rows, %rows_at : i64, !llvm.ptr
    llvm.store %dest, %dest_at : i64, !llvm.ptr
    llvm.br ^done(%minus1 : i64)
  ^done(%r: i64):
    llvm.return %r : i64
  }}
  // Whether the received regions [dest, dest + rows) of the %n updates are apart.
  llvm.func internal @ragged_apart(%args: !llvm.ptr, %n: i64) -> i1 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c3 = llvm.mlir.constant(3 : i64) : i64
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %true = llvm.mlir.constant(true) : i1
    %false = llvm.mlir.constant(false) : i1
    llvm.br ^first(%c0 : i64)
  ^first(%f: i64):
    %more = llvm.icmp "slt" %f, %n : i64
    %f1 = llvm.add %f, %c1 : i64
    llvm.cond_br %more, ^against(%f1 : i64), ^done(%true : i1)
  ^against(%g: i64):
    %more_g = llvm.icmp "slt" %g, %n : i64
    llvm.cond_br %more_g, ^compare, ^first(%f1 : i64)
  ^compare:
    %rows_f = llvm.call @ragged_field(%args, %f, %c3) : (!llvm.ptr, i64, i64) -> i64
    %dest_f = llvm.call @ragged_field(%args, %f, %c4) : (!llvm.ptr, i64, i64) -> i64
    %rows_g = llvm.call @ragged_field(%args, %g, %c3) : (!llvm.ptr, i64, i64) -> i64
    %dest_g = llvm.call @ragged_field(%args, %g, %c4) : (!llvm.ptr, i64, i64) -> i64
    %overlap = llvm.call @regions_meet(%dest_f, %rows_f, %dest_g, %rows_g) : (i64, i64, i64, i64) -> i1
    %g1 = llvm.add %g, %c1 : i64
    llvm.cond_br %overlap, ^done(%false : i1), ^against(%g1 : i64)
  ^done(%r: i1):
    llvm.return %r : i1
  }}
  // A ragged all-to-all's pull between its two exchanges (the kernel slot of
  // xhlo_fast_kernel), from the buffers the members posted in the group's table: the
  // result starts as the output operand (unless the rows received cover it), then
  // every member's updates for this one are copied from its input, members and
  // updates in order (a later update wins an overlap). Rows out of bounds: nothing
  // is copied, and the block says which (RG_STATUS 1).
  llvm.func @xhlo_ragged_pull(%args: !llvm.ptr) {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %c3 = llvm.mlir.constant(3 : i64) : i64
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %c6 = llvm.mlir.constant(6 : i64) : i64
    %fields = llvm.load %args : !llvm.ptr -> !llvm.array<{RG_STATUS} x i64>
    %table_i = llvm.extractvalue %fields[{RG_TABLE}] : !llvm.array<{RG_STATUS} x i64>
    %stride = llvm.extractvalue %fields[{RG_STRIDE}] : !llvm.array<{RG_STATUS} x i64>
    %position = llvm.extractvalue %fields[{RG_POSITION}] : !llvm.array<{RG_STATUS} x i64>
    %size = llvm.extractvalue %fields[{RG_SIZE}] : !llvm.array<{RG_STATUS} x i64>
    %row = llvm.extractvalue %fields[{RG_ROW}] : !llvm.array<{RG_STATUS} x i64>
    %out_rows = llvm.extractvalue %fields[{RG_OUT_ROWS}] : !llvm.array<{RG_STATUS} x i64>
    %updates = llvm.extractvalue %fields[{RG_UPDATES}] : !llvm.array<{RG_STATUS} x i64>
    %result_bytes = llvm.extractvalue %fields[{RG_RESULT_BYTES}] : !llvm.array<{RG_STATUS} x i64>
    %table = llvm.inttoptr %table_i : i64 to !llvm.ptr
    %mine = llvm.mul %position, %stride : i64
    %output_slot = llvm.add %mine, %c1 : i64
    %result_slot = llvm.add %mine, %c6 : i64
    %output_at = llvm.getelementptr %table[%output_slot] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
    %result_at = llvm.getelementptr %table[%result_slot] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
    %output = llvm.load %output_at : !llvm.ptr -> !llvm.ptr
    %result = llvm.load %result_at : !llvm.ptr -> !llvm.ptr
    %n = llvm.mul %size, %updates : i64
    %received = llvm.call @ragged_check(%args, %n) : (!llvm.ptr, i64) -> i64
    %refused = llvm.icmp "slt" %received, %c0 : i64
    llvm.cond_br %refused, ^done, ^cover
  ^cover:
    %all_rows = llvm.icmp "eq" %received, %out_rows : i64
    llvm.cond_br %all_rows, ^apart, ^keep_output
  ^apart:
    %covered = llvm.call @ragged_apart(%args, %n) : (!llvm.ptr, i64) -> i1
    llvm.cond_br %covered, ^copy(%c0 : i64), ^keep_output
  ^keep_output:
    "llvm.intr.memcpy"(%result, %output, %result_bytes) <{{isVolatile = false}}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.br ^copy(%c0 : i64)
  ^copy(%f: i64):
    %more = llvm.icmp "slt" %f, %n : i64
    llvm.cond_br %more, ^one, ^done
  ^one:
    %input = llvm.call @ragged_field(%args, %f, %c0) : (!llvm.ptr, i64, i64) -> i64
    %start = llvm.call @ragged_field(%args, %f, %c2) : (!llvm.ptr, i64, i64) -> i64
    %rows = llvm.call @ragged_field(%args, %f, %c3) : (!llvm.ptr, i64, i64) -> i64
    %dest = llvm.call @ragged_field(%args, %f, %c4) : (!llvm.ptr, i64, i64) -> i64
    %from_at = llvm.mul %start, %row : i64
    %to_at = llvm.mul %dest, %row : i64
    %nbytes = llvm.mul %rows, %row : i64
    %input_ptr = llvm.inttoptr %input : i64 to !llvm.ptr
    %from = llvm.getelementptr %input_ptr[%from_at] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %to = llvm.getelementptr %result[%to_at] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %none = llvm.icmp "eq" %rows, %c0 : i64
    %f1 = llvm.add %f, %c1 : i64
    llvm.cond_br %none, ^copy(%f1 : i64), ^move
  ^move:
    "llvm.intr.memmove"(%to, %from, %nbytes) <{{isVolatile = false}}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.br ^copy(%f1 : i64)
  ^done:
    llvm.return
  }}
  // Call site %k with its buffers' descriptors: 0 done, 1 not started (Python runs the
  // op), 2 arrived but not complete (Python resumes from the record's pending fields).
  llvm.func @xhlo_rt_fast(%k: i64, %descriptors: !llvm.ptr) -> i64 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %key_at = llvm.mlir.addressof @xhlo_context_key : !llvm.ptr
    %key = llvm.load %key_at : !llvm.ptr -> i32
    %context = llvm.call @pthread_getspecific(%key) : (i32) -> !llvm.ptr
    %null = llvm.mlir.zero : !llvm.ptr
    %no_context = llvm.icmp "eq" %context, %null : !llvm.ptr
    llvm.cond_br %no_context, ^slow, ^lookup
  ^lookup:
    %nops = llvm.load %context : !llvm.ptr -> i64
    %known = llvm.icmp "ult" %k, %nops : i64
    llvm.cond_br %known, ^record, ^slow
  ^record:
    %k1 = llvm.add %k, %c1 : i64
    %rec_at = llvm.getelementptr %context[%k1] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
    %rec = llvm.load %rec_at : !llvm.ptr -> !llvm.ptr
    %no_record = llvm.icmp "eq" %rec, %null : !llvm.ptr
    llvm.cond_br %no_record, ^slow, ^kind
  ^kind:
    %mark = llvm.load %rec : !llvm.ptr -> i64
    %handled = llvm.icmp "eq" %mark, %c0 : i64
    llvm.cond_br %handled, ^handler, ^check
  ^handler:
    %handler_at = llvm.getelementptr %rec[1] : (!llvm.ptr) -> !llvm.ptr, i64
    %handler = llvm.load %handler_at : !llvm.ptr -> !llvm.ptr
    %handled_status = llvm.call %handler(%rec, %descriptors) : !llvm.ptr, (!llvm.ptr, !llvm.ptr) -> i64
    llvm.br ^done(%handled_status : i64)
  ^check:
    %failure_at = llvm.getelementptr %rec[{R_FAILURE}] : (!llvm.ptr) -> !llvm.ptr, i64
    %failure_ptr = llvm.load %failure_at : !llvm.ptr -> !llvm.ptr
    %failure = llvm.load %failure_ptr atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %failed = llvm.icmp "ne" %failure, %c0 : i64
    llvm.cond_br %failed, ^slow, ^post(%c0 : i64)
  ^post(%i: i64):
    %nbufs_at = llvm.getelementptr %rec[{R_NBUFS}] : (!llvm.ptr) -> !llvm.ptr, i64
    %nbufs = llvm.load %nbufs_at : !llvm.ptr -> i64
    %more = llvm.icmp "slt" %i, %nbufs : i64
    llvm.cond_br %more, ^one(%i : i64), ^arrive
  ^one(%j: i64):
    %desc_at = llvm.getelementptr %descriptors[%j] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
    %desc = llvm.load %desc_at : !llvm.ptr -> !llvm.ptr
    %aligned_at = llvm.getelementptr %desc[1] : (!llvm.ptr) -> !llvm.ptr, i64
    %offset_at = llvm.getelementptr %desc[2] : (!llvm.ptr) -> !llvm.ptr, i64
    %aligned = llvm.load %aligned_at : !llvm.ptr -> i64
    %offset = llvm.load %offset_at : !llvm.ptr -> i64
    %items = llvm.mlir.constant({R_ITEMSIZES} : i64) : i64
    %item_index = llvm.add %j, %items : i64
    %item_at = llvm.getelementptr %rec[%item_index] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %item = llvm.load %item_at : !llvm.ptr -> i64
    %bytes = llvm.mul %offset, %item : i64
    %address = llvm.add %aligned, %bytes : i64
    %table_at = llvm.getelementptr %rec[{R_TABLE}] : (!llvm.ptr) -> !llvm.ptr, i64
    %table = llvm.load %table_at : !llvm.ptr -> !llvm.ptr
    %row_at = llvm.getelementptr %rec[{R_ROW}] : (!llvm.ptr) -> !llvm.ptr, i64
    %row = llvm.load %row_at : !llvm.ptr -> i64
    %entry = llvm.add %row, %j : i64
    %slot_at = llvm.getelementptr %table[%entry] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    llvm.store %address, %slot_at : i64, !llvm.ptr
    %next = llvm.add %j, %c1 : i64
    llvm.br ^post(%next : i64)
  ^arrive:
    %first = llvm.call @xhlo_fast_step(%rec) : (!llvm.ptr) -> i64
    %first_done = llvm.icmp "eq" %first, %c0 : i64
    llvm.cond_br %first_done, ^then, ^done(%first : i64)
  ^then:
    %next_at = llvm.getelementptr %rec[{R_NEXT}] : (!llvm.ptr) -> !llvm.ptr, i64
    %second_rec = llvm.load %next_at : !llvm.ptr -> !llvm.ptr
    %single = llvm.icmp "eq" %second_rec, %null : !llvm.ptr
    llvm.cond_br %single, ^done(%c0 : i64), ^kernel
  ^kernel:
    llvm.call @xhlo_fast_kernel(%rec) : (!llvm.ptr) -> ()
    %second = llvm.call @xhlo_fast_step(%second_rec) : (!llvm.ptr) -> i64
    %second_done = llvm.icmp "eq" %second, %c0 : i64
    llvm.cond_br %second_done, ^kernel_status, ^done(%second : i64)
  ^kernel_status:  // a kernel that failed (a ragged pull's rows out of bounds): Python reports
    %status_at_at = llvm.getelementptr %rec[{R_KERNEL_STATUS}] : (!llvm.ptr) -> !llvm.ptr, i64
    %status_at = llvm.load %status_at_at : !llvm.ptr -> !llvm.ptr
    %no_status = llvm.icmp "eq" %status_at, %null : !llvm.ptr
    llvm.cond_br %no_status, ^done(%c0 : i64), ^read_status
  ^read_status:
    %kernel_status = llvm.load %status_at : !llvm.ptr -> i64
    %kernel_failed = llvm.icmp "ne" %kernel_status, %c0 : i64
    %c3 = llvm.mlir.constant(3 : i64) : i64
    %reported = llvm.select %kernel_failed, %c3, %c0 : i1, i64
    llvm.br ^done(%reported : i64)
  ^slow:
    llvm.br ^done(%c1 : i64)
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
_ARRIVE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_WITHDRAW = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)
_SET_CONTEXT = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)


class Native(NamedTuple):
    """The compiled functions (ctypes callables; ``fast``: an address for the JIT)."""

    engine: object
    wait_at_least: object
    exchange: object
    arrive: object
    withdraw: object
    set_context: object
    fast: int
    ragged_pull: int  # the address of ``xhlo_ragged_pull(args)``


_lock = threading.Lock()
_native: Native | None = None


def _compile() -> Native:
    from .._mlir import ExecutionEngine, ir, new_context

    with new_context():
        engine = ExecutionEngine(ir.Module.parse(_MODULE), opt_level=2)
    addresses = (ctypes.c_int64 * 7)()
    argument = ctypes.c_void_p(ctypes.addressof(addresses))
    packed = (ctypes.c_void_p * 1)(ctypes.addressof(argument))  # packed ABI: pointers to arguments
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup("xhlo_spin_wait_addresses"))(packed)
    return Native(
        engine,
        _WAIT(addresses[0]),
        _EXCHANGE(addresses[1]),
        _ARRIVE(addresses[2]),
        _WITHDRAW(addresses[3]),
        _SET_CONTEXT(addresses[4]),
        addresses[5],
        addresses[6],
    )


def native() -> Native:
    """The native functions, compiled on first use. Compiled code needs the same JIT,
    so there is nothing to fall back on when it fails."""
    global _native
    if _native is None:
        with _lock:
            if _native is None:
                _native = _compile()
    return _native


def wait_function():
    """``wait_at_least(count_address, target, events_address, seen_events) -> READY|EVENT|SLICE_OVER``."""
    return native().wait_at_least


def exchange_function():
    """``exchange(count, target, events, seen, ids, size, table, copies, ncopies) -> status``.

    Waits (one slice) until ``count`` reaches ``target``; returns the wait's
    status if it does not. Then checks that the ``size`` int64 ``ids`` agree
    (``DISAGREE`` if not, nothing copied), runs the ``ncopies`` copies (int64
    records ``src_slot, src_offset, dst_slot, dst_offset, nbytes``; slots index
    the address ``table``), counts this device's departure into ``count`` and
    waits until every member departed (``target + size``): ``READY``.
    """
    return native().exchange

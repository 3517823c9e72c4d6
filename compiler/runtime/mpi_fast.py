"""The MPI transport's native fast path: a collective's later calls without Python.

Under MPI, a collective's Python round trip (the callback, the agreement
record, mpi4py's request objects, the polling loop) cost ~10 us, three times
the MPI exchange itself for a 4 KiB all_gather. After a call site's first
successful call on a rank, the transport writes a *handler record* for it
(first field 0, then the address of ``xhlo_mpi_fast``) into the device's
fast-path table, and ``xhlo_rt_fast`` (``spin_wait``) hands later calls to
``xhlo_mpi_fast``, JIT-compiled from the LLVM dialect here. It does what the
Python path (``mpi.MpiTransport.execute``) does:

    pack the operands after the agreement record in this rank's slot (when
    they travel inline: up to 4 KiB of all_gather, all_to_all, broadcast, permute)
    MPI_Iallgather(slot -> slots) on the group communicator, MPI_Test until done
    compare every member's digest with this rank's: a mismatch is MISMATCH
    inline: copy each member's operand (all_gather), its block for this rank
      (all_to_all), the root's (collective_broadcast) or the source's
      (collective_permute; none: only the received flag, 0) into the results
    otherwise (a one-operand all_gather or all_to_all): MPI_Iallgather or
      MPI_Ialltoall from the operand to the result, MPI_Test until done;
      (collective_permute) MPI_Irecv from the source and MPI_Isend to the target
      on the transport's point-to-point communicator, MPI_Test both until done;
      (ragged_all_to_all of one update per member, its send sizes and output
      offsets packed with the record) check every member's rows against the
      bounds, copy the output operand into the result and MPI_Ialltoallv the rows
      from the input straight into the result, MPI_Test until done; rows out of
      bounds or received regions that overlap go to Python (AGREED)

It returns 0 when done. When an exchange is not complete after ``SPINS``
tests it leaves the request in the record (PENDING, DATA_PENDING) and returns
nonzero: the Python callback resumes from there, with its timeouts and error
reports, as it does on a mismatch. MPI functions are called through addresses
taken from the libmpi that mpi4py loaded, and handles travel as 64-bit
integers: an MPICH ``int`` handle and an Open MPI pointer handle are both
passed that way by the x86-64 calling convention.
"""

from __future__ import annotations

import ctypes
import os
import threading

from .spin_wait import INDEX_HELPERS

# int64 fields of a handler record; the per-buffer part starts at M_BUFFERS with
# BUFFER_FIELDS per buffer (operands, then results): byte size, itemsize, offset in the
# slot it is packed at, unpack block size, unpack source offset, unpack copies.
(M_MARK, M_HANDLER, M_IALLGATHER, M_TEST, M_COMM, M_BYTE, M_SLOT, M_SLOTS, M_SLOT_BYTES,
 M_SIZE, M_NOPERANDS, M_FLAG_BUFFER, M_FLAG_VALUE, M_STATE, M_REQUEST, M_FLAG, M_SPINS,
 M_DIRECT, M_DIRECT_KIND, M_DIRECT_BYTES, M_IRECV, M_P2P, M_DEST, M_SOURCE, M_TAG,
 M_RECV_REQUEST, M_ROW, M_IN_ROWS, M_OUT_ROWS, M_POSITION, M_COUNTS, M_STATUS) = range(32)
# What M_DIRECT is (0 after the agreement: inline): an MPI collective with the arguments
# of MPI_Iallgather (all_gather, all_to_all), MPI_Isend with MPI_Irecv (permute), or
# MPI_Ialltoallv (ragged all-to-all).
COLLECTIVE, SEND_RECEIVE, RAGGED = 0, 1, 2
STATUS_FIELDS = 8  # room for any MPI_Status (MPICH 20 bytes, Open MPI 24)
M_BUFFERS = M_STATUS + STATUS_FIELDS
BUFFER_FIELDS = 6
DIGEST_WORDS = 4  # the record's first 32 bytes: a digest of what the member runs
# States native code leaves for Python: the agreement exchange is pending or disagrees;
# the data exchange is pending or could not be posted; the members agreed, and Python
# does the rest (a ragged all-to-all whose rows it must report or order).
IDLE, PENDING, MISMATCH, DATA_PENDING, DATA_FAILED, AGREED = 0, 2, 3, 4, 5, 6
SPINS = 100_000  # MPI_Test calls before Python takes over (tens of ms; 0: Python waits for every call)

def _load(name: str, index: int, kind: str = "i64") -> str:
    """LLVM-dialect lines loading record field ``index`` of ``%rec`` as ``%name``."""
    return (
        f"%{name}_at = llvm.getelementptr %rec[{index}] : (!llvm.ptr) -> !llvm.ptr, i64\n"
        f"    %{name} = llvm.load %{name}_at : !llvm.ptr -> {kind}"
    )


_MODULE = f"""
module {{
  llvm.func @xhlo_mpi_fast_address(%out: !llvm.ptr) {{
    %f = llvm.mlir.addressof @xhlo_mpi_fast : !llvm.ptr
    llvm.store %f, %out : !llvm.ptr, !llvm.ptr
    llvm.return
  }}
  // Field %k of buffer %b's part of record %rec.
  llvm.func internal @buffer_field(%rec: !llvm.ptr, %b: i64, %k: i64) -> i64 {{
    %first = llvm.mlir.constant({M_BUFFERS} : i64) : i64
    %width = llvm.mlir.constant({BUFFER_FIELDS} : i64) : i64
    %row = llvm.mul %b, %width : i64
    %base = llvm.add %first, %row : i64
    %i = llvm.add %base, %k : i64
    %at = llvm.getelementptr %rec[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %v = llvm.load %at : !llvm.ptr -> i64
    llvm.return %v : i64
  }}
  // The address of buffer %b's first element: aligned pointer + offset * itemsize.
  llvm.func internal @address(%rec: !llvm.ptr, %descriptors: !llvm.ptr, %b: i64) -> !llvm.ptr {{
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %desc_at = llvm.getelementptr %descriptors[%b] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
    %desc = llvm.load %desc_at : !llvm.ptr -> !llvm.ptr
    %aligned_at = llvm.getelementptr %desc[1] : (!llvm.ptr) -> !llvm.ptr, i64
    %offset_at = llvm.getelementptr %desc[2] : (!llvm.ptr) -> !llvm.ptr, i64
    %aligned = llvm.load %aligned_at : !llvm.ptr -> !llvm.ptr
    %offset = llvm.load %offset_at : !llvm.ptr -> i64
    %item = llvm.call @buffer_field(%rec, %b, %c1) : (!llvm.ptr, i64, i64) -> i64
    %bytes = llvm.mul %offset, %item : i64
    %at = llvm.getelementptr %aligned[%bytes] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    llvm.return %at : !llvm.ptr
  }}
  // MPI_Test the request at %request up to M_SPINS times: 0 complete, 2 not yet. A
  // completed request becomes MPI_REQUEST_NULL, which tests complete again.
  llvm.func internal @poll(%rec: !llvm.ptr, %request: !llvm.ptr) -> i64 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %zero32 = llvm.mlir.constant(0 : i32) : i32
    {_load("test", M_TEST, "!llvm.ptr")}
    {_load("spins", M_SPINS)}
    %flag_at = llvm.getelementptr %rec[{M_FLAG}] : (!llvm.ptr) -> !llvm.ptr, i64
    %status_at = llvm.getelementptr %rec[{M_STATUS}] : (!llvm.ptr) -> !llvm.ptr, i64
    llvm.br ^poll(%c0 : i64)
  ^poll(%p: i64):
    %spin_more = llvm.icmp "slt" %p, %spins : i64
    llvm.cond_br %spin_more, ^test, ^return(%c2 : i64)
  ^test:
    llvm.store %zero32, %flag_at : i32, !llvm.ptr
    %tested = llvm.call %test(%request, %flag_at, %status_at) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
    %flag = llvm.load %flag_at : !llvm.ptr -> i32
    %complete = llvm.icmp "ne" %flag, %zero32 : i32
    %p1 = llvm.add %p, %c1 : i64
    llvm.cond_br %complete, ^return(%c0 : i64), ^poll(%p1 : i64)
  ^return(%r: i64):
    llvm.return %r : i64
  }}
  // After posting the request at %request with MPI status %status: 1 not posted,
  // else as @poll.
  llvm.func internal @poll_posted(%rec: !llvm.ptr, %status: i32, %request: !llvm.ptr) -> i64 {{
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %zero32 = llvm.mlir.constant(0 : i32) : i32
    %post_failed = llvm.icmp "ne" %status, %zero32 : i32
    llvm.cond_br %post_failed, ^return(%c1 : i64), ^poll
  ^poll:
    %polled = llvm.call @poll(%rec, %request) : (!llvm.ptr, !llvm.ptr) -> i64
    llvm.br ^return(%polled : i64)
  ^return(%r: i64):
    llvm.return %r : i64
  }}
  // Post %collective(%send, %count, MPI_BYTE, %receive, %count, MPI_BYTE, comm, request)
  // (MPI_Iallgather and MPI_Ialltoall take the same arguments) and @poll it: 0 done,
  // 1 not posted, 2 posted but not complete.
  llvm.func internal @exchange(%rec: !llvm.ptr, %collective: !llvm.ptr, %send: !llvm.ptr,
                               %receive: !llvm.ptr, %count: i32) -> i64 {{
    {_load("comm", M_COMM)}
    {_load("byte", M_BYTE)}
    %request = llvm.getelementptr %rec[{M_REQUEST}] : (!llvm.ptr) -> !llvm.ptr, i64
    %posted = llvm.call %collective(%send, %count, %byte, %receive, %count, %byte, %comm, %request) : !llvm.ptr, (!llvm.ptr, i32, i64, !llvm.ptr, i32, i64, i64, !llvm.ptr) -> i32
    %r = llvm.call @poll_posted(%rec, %posted, %request) : (!llvm.ptr, i32, !llvm.ptr) -> i64
    llvm.return %r : i64
  }}
  // collective_permute: post MPI_Irecv(%receive, %count, MPI_BYTE, source, tag, p2p,
  // recv request) and MPI_Isend(%send, ..., dest, ...) (M_DIRECT holds MPI_Isend; a
  // missing peer is MPI_PROC_NULL), then @poll both: as @exchange.
  llvm.func internal @send_receive(%rec: !llvm.ptr, %send: !llvm.ptr, %receive: !llvm.ptr,
                                   %count: i32) -> i64 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %zero32 = llvm.mlir.constant(0 : i32) : i32
    {_load("p2p", M_P2P)}
    {_load("byte", M_BYTE)}
    {_load("isend", M_DIRECT, "!llvm.ptr")}
    {_load("irecv", M_IRECV, "!llvm.ptr")}
    {_load("dest64", M_DEST)}
    {_load("source64", M_SOURCE)}
    {_load("tag64", M_TAG)}
    %dest = llvm.trunc %dest64 : i64 to i32
    %source = llvm.trunc %source64 : i64 to i32
    %tag = llvm.trunc %tag64 : i64 to i32
    %send_request = llvm.getelementptr %rec[{M_REQUEST}] : (!llvm.ptr) -> !llvm.ptr, i64
    %recv_request = llvm.getelementptr %rec[{M_RECV_REQUEST}] : (!llvm.ptr) -> !llvm.ptr, i64
    %received = llvm.call %irecv(%receive, %count, %byte, %source, %tag, %p2p, %recv_request) : !llvm.ptr, (!llvm.ptr, i32, i64, i32, i32, i64, !llvm.ptr) -> i32
    %receive_failed = llvm.icmp "ne" %received, %zero32 : i32
    llvm.cond_br %receive_failed, ^return(%c1 : i64), ^post_send
  ^post_send:
    %sent = llvm.call %isend(%send, %count, %byte, %dest, %tag, %p2p, %send_request) : !llvm.ptr, (!llvm.ptr, i32, i64, i32, i32, i64, !llvm.ptr) -> i32
    %send_polled = llvm.call @poll_posted(%rec, %sent, %send_request) : (!llvm.ptr, i32, !llvm.ptr) -> i64
    %send_done = llvm.icmp "eq" %send_polled, %c0 : i64
    llvm.cond_br %send_done, ^poll_receive, ^return(%send_polled : i64)
  ^poll_receive:
    %receive_polled = llvm.call @poll(%rec, %recv_request) : (!llvm.ptr, !llvm.ptr) -> i64
    llvm.br ^return(%receive_polled : i64)
  ^return(%r: i64):
    llvm.return %r : i64
  }}
{INDEX_HELPERS}  // ragged_all_to_all with one update per member, its sizes and offsets in the slots:
  // the result starts as the output operand (unless the rows received cover it);
  // MPI_Ialltoallv then sends rows straight
  // from the input and receives them straight into the result (byte counts and
  // displacements, i32, in the record's scratch), and @poll. 0 done, 1 not posted,
  // 2 posted but not complete, 3 not posted for Python (rows out of bounds, received
  // regions that overlap: it reports or orders them).
  llvm.func internal @ragged(%rec: !llvm.ptr, %descriptors: !llvm.ptr, %slots: !llvm.ptr,
                             %slot_bytes: i64, %size: i64) -> i64 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %c3 = llvm.mlir.constant(3 : i64) : i64
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %c6 = llvm.mlir.constant(6 : i64) : i64
    {_load("row", M_ROW)}
    {_load("in_rows", M_IN_ROWS)}
    {_load("out_rows", M_OUT_ROWS)}
    {_load("position", M_POSITION)}
    {_load("counts", M_COUNTS, "!llvm.ptr")}
    %input = llvm.call @address(%rec, %descriptors, %c0) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    %output = llvm.call @address(%rec, %descriptors, %c1) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    %offsets = llvm.call @address(%rec, %descriptors, %c2) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    %sizes = llvm.call @address(%rec, %descriptors, %c3) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    %result = llvm.call @address(%rec, %descriptors, %c6) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    %itemsize = llvm.call @buffer_field(%rec, %c3, %c1) : (!llvm.ptr, i64, i64) -> i64
    %result_bytes = llvm.call @buffer_field(%rec, %c6, %c0) : (!llvm.ptr, i64, i64) -> i64
    %sizes_packed_at = llvm.call @buffer_field(%rec, %c3, %c2) : (!llvm.ptr, i64, i64) -> i64
    %offsets_packed_at = llvm.call @buffer_field(%rec, %c4, %c2) : (!llvm.ptr, i64, i64) -> i64
    %send_counts = llvm.getelementptr %counts[0] : (!llvm.ptr) -> !llvm.ptr, i32
    %send_displacements = llvm.getelementptr %counts[%size] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %twice = llvm.mul %size, %c2 : i64
    %receive_counts = llvm.getelementptr %counts[%twice] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %thrice = llvm.mul %size, %c3 : i64
    %receive_displacements = llvm.getelementptr %counts[%thrice] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    llvm.br ^member(%c0, %c0 : i64, i64)
  ^member(%j: i64, %received: i64):  // what this member sends member %j and receives from it
    %more = llvm.icmp "slt" %j, %size : i64
    llvm.cond_br %more, ^plan, ^overlaps(%c0 : i64)
  ^plan:
    %send_rows = llvm.call @index_at(%sizes, %j, %itemsize) : (!llvm.ptr, i64, i64) -> i64
    %send_start = llvm.call @index_at(%offsets, %j, %itemsize) : (!llvm.ptr, i64, i64) -> i64
    %slot_at = llvm.mul %j, %slot_bytes : i64
    %sizes_at = llvm.add %slot_at, %sizes_packed_at : i64
    %offsets_at = llvm.add %slot_at, %offsets_packed_at : i64
    %their_sizes = llvm.getelementptr %slots[%sizes_at] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %their_offsets = llvm.getelementptr %slots[%offsets_at] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %receive_rows = llvm.call @index_at(%their_sizes, %position, %itemsize) : (!llvm.ptr, i64, i64) -> i64
    %receive_start = llvm.call @index_at(%their_offsets, %position, %itemsize) : (!llvm.ptr, i64, i64) -> i64
    %send_ok = llvm.call @rows_within(%send_start, %send_rows, %in_rows) : (i64, i64, i64) -> i1
    %receive_ok = llvm.call @rows_within(%receive_start, %receive_rows, %out_rows) : (i64, i64, i64) -> i1
    %ok = llvm.and %send_ok, %receive_ok : i1
    llvm.cond_br %ok, ^store, ^return(%c3 : i64)
  ^store:  // an empty part's displacement is 0: any start is allowed there
    %sc = llvm.mul %send_rows, %row : i64
    %send_none = llvm.icmp "eq" %send_rows, %c0 : i64
    %send_from = llvm.mul %send_start, %row : i64
    %sd = llvm.select %send_none, %c0, %send_from : i1, i64
    %rc = llvm.mul %receive_rows, %row : i64
    %receive_none = llvm.icmp "eq" %receive_rows, %c0 : i64
    %receive_at = llvm.mul %receive_start, %row : i64
    %rd = llvm.select %receive_none, %c0, %receive_at : i1, i64
    %sc32 = llvm.trunc %sc : i64 to i32
    %sd32 = llvm.trunc %sd : i64 to i32
    %rc32 = llvm.trunc %rc : i64 to i32
    %rd32 = llvm.trunc %rd : i64 to i32
    %sc_at = llvm.getelementptr %send_counts[%j] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %sd_at = llvm.getelementptr %send_displacements[%j] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %rc_at = llvm.getelementptr %receive_counts[%j] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %rd_at = llvm.getelementptr %receive_displacements[%j] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    llvm.store %sc32, %sc_at : i32, !llvm.ptr
    llvm.store %sd32, %sd_at : i32, !llvm.ptr
    llvm.store %rc32, %rc_at : i32, !llvm.ptr
    llvm.store %rd32, %rd_at : i32, !llvm.ptr
    %j1 = llvm.add %j, %c1 : i64
    %received1 = llvm.add %received, %rc : i64
    llvm.br ^member(%j1, %received1 : i64, i64)
  ^overlaps(%a: i64):  // received regions [rd, rd + rc) must be apart
    %more_a = llvm.icmp "slt" %a, %size : i64
    %a1 = llvm.add %a, %c1 : i64
    llvm.cond_br %more_a, ^against(%a1 : i64), ^post
  ^against(%b: i64):
    %more_b = llvm.icmp "slt" %b, %size : i64
    llvm.cond_br %more_b, ^compare, ^overlaps(%a1 : i64)
  ^compare:
    %rca_at = llvm.getelementptr %receive_counts[%a] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %rda_at = llvm.getelementptr %receive_displacements[%a] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %rcb_at = llvm.getelementptr %receive_counts[%b] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %rdb_at = llvm.getelementptr %receive_displacements[%b] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %rca32 = llvm.load %rca_at : !llvm.ptr -> i32
    %rda32 = llvm.load %rda_at : !llvm.ptr -> i32
    %rcb32 = llvm.load %rcb_at : !llvm.ptr -> i32
    %rdb32 = llvm.load %rdb_at : !llvm.ptr -> i32
    %rca = llvm.sext %rca32 : i32 to i64
    %rda = llvm.sext %rda32 : i32 to i64
    %rcb = llvm.sext %rcb32 : i32 to i64
    %rdb = llvm.sext %rdb32 : i32 to i64
    %overlap = llvm.call @regions_meet(%rda, %rca, %rdb, %rcb) : (i64, i64, i64, i64) -> i1
    %b1 = llvm.add %b, %c1 : i64
    llvm.cond_br %overlap, ^return(%c3 : i64), ^against(%b1 : i64)
  ^post:  // rows no member sends keep the output operand's (none such: no copy)
    %covered = llvm.icmp "eq" %received, %result_bytes : i64
    llvm.cond_br %covered, ^exchange, ^keep_output
  ^keep_output:
    "llvm.intr.memcpy"(%result, %output, %result_bytes) <{{isVolatile = false}}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.br ^exchange
  ^exchange:
    {_load("alltoallv", M_DIRECT, "!llvm.ptr")}
    {_load("comm", M_COMM)}
    {_load("byte", M_BYTE)}
    %request = llvm.getelementptr %rec[{M_REQUEST}] : (!llvm.ptr) -> !llvm.ptr, i64
    %posted = llvm.call %alltoallv(%input, %send_counts, %send_displacements, %byte, %result, %receive_counts, %receive_displacements, %byte, %comm, %request) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, !llvm.ptr) -> i32
    %polled = llvm.call @poll_posted(%rec, %posted, %request) : (!llvm.ptr, i32, !llvm.ptr) -> i64
    llvm.br ^return(%polled : i64)
  ^return(%r: i64):
    llvm.return %r : i64
  }}
  // 0 done; 1 not started (Python runs the op); otherwise the state left in the record.
  llvm.func @xhlo_mpi_fast(%rec: !llvm.ptr, %descriptors: !llvm.ptr) -> i64 {{
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %c3 = llvm.mlir.constant(3 : i64) : i64
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %c5 = llvm.mlir.constant(5 : i64) : i64
    %pending = llvm.mlir.constant({PENDING} : i64) : i64
    %mismatch = llvm.mlir.constant({MISMATCH} : i64) : i64
    %data_pending = llvm.mlir.constant({DATA_PENDING} : i64) : i64
    %data_failed = llvm.mlir.constant({DATA_FAILED} : i64) : i64
    %agreed_only = llvm.mlir.constant({AGREED} : i64) : i64
    {_load("slot", M_SLOT, "!llvm.ptr")}
    {_load("slots", M_SLOTS, "!llvm.ptr")}
    {_load("slot_bytes", M_SLOT_BYTES)}
    {_load("noperands", M_NOPERANDS)}
    {_load("size", M_SIZE)}
    llvm.br ^pack(%c0 : i64)
  ^pack(%i: i64):
    %more_pack = llvm.icmp "slt" %i, %noperands : i64
    llvm.cond_br %more_pack, ^pack_one, ^post
  ^pack_one:
    %from = llvm.call @address(%rec, %descriptors, %i) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    %n = llvm.call @buffer_field(%rec, %i, %c0) : (!llvm.ptr, i64, i64) -> i64
    %packed_at = llvm.call @buffer_field(%rec, %i, %c2) : (!llvm.ptr, i64, i64) -> i64
    %to = llvm.getelementptr %slot[%packed_at] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    "llvm.intr.memcpy"(%to, %from, %n) <{{isVolatile = false}}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    %i1 = llvm.add %i, %c1 : i64
    llvm.br ^pack(%i1 : i64)
  ^post:
    {_load("iallgather", M_IALLGATHER, "!llvm.ptr")}
    %count = llvm.trunc %slot_bytes : i64 to i32
    %agreement = llvm.call @exchange(%rec, %iallgather, %slot, %slots, %count) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> i64
    %agreed = llvm.icmp "eq" %agreement, %c0 : i64
    %agreement_posted = llvm.icmp "eq" %agreement, %c2 : i64
    llvm.cond_br %agreed, ^check(%c0 : i64), ^agreement_left
  ^agreement_left:  // not posted: Python runs the op; posted: Python finishes it
    llvm.cond_br %agreement_posted, ^leave(%pending : i64), ^return(%c1 : i64)
  ^check(%j: i64):
    %more_check = llvm.icmp "slt" %j, %size : i64
    llvm.cond_br %more_check, ^compare, ^checked
  ^compare:
    %theirs_at = llvm.mul %j, %slot_bytes : i64
    %theirs = llvm.getelementptr %slots[%theirs_at] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %mine_v = llvm.load %slot {{alignment = 8 : i64}} : !llvm.ptr -> vector<{DIGEST_WORDS}xi64>
    %theirs_v = llvm.load %theirs {{alignment = 8 : i64}} : !llvm.ptr -> vector<{DIGEST_WORDS}xi64>
    %differ = llvm.xor %mine_v, %theirs_v : vector<{DIGEST_WORDS}xi64>
    %any = "llvm.intr.vector.reduce.or"(%differ) : (vector<{DIGEST_WORDS}xi64>) -> i64
    %same = llvm.icmp "eq" %any, %c0 : i64
    %j1 = llvm.add %j, %c1 : i64
    llvm.cond_br %same, ^check(%j1 : i64), ^leave(%mismatch : i64)
  ^checked:
    {_load("direct", M_DIRECT, "!llvm.ptr")}
    %null = llvm.mlir.zero : !llvm.ptr
    %inline = llvm.icmp "eq" %direct, %null : !llvm.ptr
    llvm.cond_br %inline, ^unpack(%c0 : i64), ^direct
  ^direct:  // M_DIRECT_KIND: which MPI call follows the agreement
    %send = llvm.call @address(%rec, %descriptors, %c0) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    %receive = llvm.call @address(%rec, %descriptors, %c1) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    {_load("direct_bytes", M_DIRECT_BYTES)}
    %per_member = llvm.trunc %direct_bytes : i64 to i32
    {_load("kind", M_DIRECT_KIND)}
    llvm.switch %kind : i64, ^collective [
      {SEND_RECEIVE}: ^send_receive,
      {RAGGED}: ^ragged
    ]
  ^collective:
    %exchanged = llvm.call @exchange(%rec, %direct, %send, %receive, %per_member) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> i64
    llvm.br ^moved(%exchanged : i64)
  ^send_receive:
    %sent_received = llvm.call @send_receive(%rec, %send, %receive, %per_member) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> i64
    llvm.br ^moved(%sent_received : i64)
  ^ragged:
    %ragged_done = llvm.call @ragged(%rec, %descriptors, %slots, %slot_bytes, %size) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64) -> i64
    %for_python = llvm.icmp "eq" %ragged_done, %c3 : i64
    llvm.cond_br %for_python, ^leave(%agreed_only : i64), ^moved(%ragged_done : i64)
  ^moved(%data: i64):
    %moved = llvm.icmp "eq" %data, %c0 : i64
    %data_posted = llvm.icmp "eq" %data, %c2 : i64
    llvm.cond_br %moved, ^flag, ^data_left
  ^data_left:
    llvm.cond_br %data_posted, ^leave(%data_pending : i64), ^leave(%data_failed : i64)
  ^unpack(%u: i64):
    %more_unpack = llvm.icmp "slt" %u, %noperands : i64
    llvm.cond_br %more_unpack, ^unpack_one, ^flag
  ^unpack_one:
    %result = llvm.add %u, %noperands : i64
    %dst = llvm.call @address(%rec, %descriptors, %result) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    %block = llvm.call @buffer_field(%rec, %u, %c3) : (!llvm.ptr, i64, i64) -> i64
    %source = llvm.call @buffer_field(%rec, %u, %c4) : (!llvm.ptr, i64, i64) -> i64
    %copies = llvm.call @buffer_field(%rec, %u, %c5) : (!llvm.ptr, i64, i64) -> i64
    %u1 = llvm.add %u, %c1 : i64
    llvm.br ^copy(%c0 : i64)
  ^copy(%m: i64):
    %more_copy = llvm.icmp "slt" %m, %copies : i64
    llvm.cond_br %more_copy, ^copy_one, ^unpack(%u1 : i64)
  ^copy_one:
    %member_at = llvm.mul %m, %slot_bytes : i64
    %src_at = llvm.add %member_at, %source : i64
    %src = llvm.getelementptr %slots[%src_at] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %dst_at = llvm.mul %m, %block : i64
    %into = llvm.getelementptr %dst[%dst_at] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    "llvm.intr.memcpy"(%into, %src, %block) <{{isVolatile = false}}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    %m1 = llvm.add %m, %c1 : i64
    llvm.br ^copy(%m1 : i64)
  ^flag:
    {_load("flag_buffer", M_FLAG_BUFFER)}
    %has_flag = llvm.icmp "sge" %flag_buffer, %c0 : i64
    llvm.cond_br %has_flag, ^set_flag, ^return(%c0 : i64)
  ^set_flag:
    %flag_byte = llvm.call @address(%rec, %descriptors, %flag_buffer) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    {_load("flag_value", M_FLAG_VALUE)}
    %flag8 = llvm.trunc %flag_value : i64 to i8
    llvm.store %flag8, %flag_byte : i8, !llvm.ptr
    llvm.br ^return(%c0 : i64)
  ^leave(%state: i64):
    %state_at = llvm.getelementptr %rec[{M_STATE}] : (!llvm.ptr) -> !llvm.ptr, i64
    llvm.store %state, %state_at : i64, !llvm.ptr
    llvm.br ^return(%state : i64)
  ^return(%r: i64):
    llvm.return %r : i64
  }}
}}
"""


_lock = threading.Lock()
_compiled: tuple[object, int] | None = None


def _handler_address() -> int:
    """``xhlo_mpi_fast``'s address, compiled on first use (the engine is kept for good)."""
    global _compiled
    with _lock:
        if _compiled is None:
            from .._mlir import ExecutionEngine, ir, new_context

            with new_context():
                engine = ExecutionEngine(ir.Module.parse(_MODULE), opt_level=2)
            address = ctypes.c_void_p()
            argument = ctypes.c_void_p(ctypes.addressof(address))
            packed = (ctypes.c_void_p * 1)(ctypes.addressof(argument))
            ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup("xhlo_mpi_fast_address"))(packed)
            _compiled = (engine, address.value)
        return _compiled[1]


def _libmpi(MPI) -> ctypes.CDLL | None:
    """The MPI library mpi4py uses, already loaded in this process (never a second one)."""
    mode = getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_LOCAL
    names = ["libmpi.so.12", "libmpi.so.40", "libmpi.so"]
    try:
        with open("/proc/self/maps") as maps:
            names += sorted({line.split()[-1] for line in maps if "/libmpi" in line})
    except OSError:
        pass
    for name in names:
        try:
            library = ctypes.CDLL(name, mode=mode)
            library.MPI_Iallgather, library.MPI_Test  # noqa: B018  (both must be there)
            return library
        except (OSError, AttributeError):
            continue
    return None


class FastPath:
    """Builds handler records for one MPI transport (None from ``create`` when unusable)."""

    def __init__(self, MPI, library: ctypes.CDLL):
        self.MPI = MPI
        address = lambda function: ctypes.cast(function, ctypes.c_void_p).value
        self._iallgather, self._test = address(library.MPI_Iallgather), address(library.MPI_Test)
        self._direct = {
            "all_gather": self._iallgather,
            "all_to_all": address(library.MPI_Ialltoall),
            "collective_permute": address(library.MPI_Isend),
        }
        self._irecv = address(library.MPI_Irecv)
        self._alltoallv = address(library.MPI_Ialltoallv)
        self._request_bytes = MPI._sizeof(MPI.Request)
        self._handler = _handler_address()

    @classmethod
    def create(cls, MPI) -> FastPath | None:
        if os.environ.get("XHLO_MPI_FAST_PATH", "1") == "0":
            return None
        if any(MPI._sizeof(kind) > 8 for kind in (MPI.Comm, MPI.Datatype, MPI.Request)):
            return None
        library = _libmpi(MPI)
        return cls(MPI, library) if library is not None else None

    def record(
        self, op, comm, members: tuple[int, ...], position: int, slot: int, slots: int,
        slot_bytes: int, record_bytes: int, inline: bool, peers: tuple = (None, 0),
    ) -> ctypes.Array | None:
        """The handler record of call site ``op`` on this rank, member ``position`` of
        ``members`` on ``comm`` (None: Python runs every call).

        ``slot``/``slots``: the agreement buffers (``slot_bytes`` per member, the record's
        ``record_bytes`` first). ``inline``: the operands travel in the slots; otherwise a
        one-operand all_gather or all_to_all follows the agreement, buffer to buffer, or
        a collective_permute's send and receive on ``peers``: (communicator, tag), ranks
        on it being device ids, or a ragged all-to-all's MPI_Ialltoallv.
        """
        if op.primitive == "ragged_all_to_all":
            layout = self._ragged_layout(op, len(members), slot_bytes - record_bytes, record_bytes)
        else:
            layout = self._layout(op, members, position, slot_bytes, record_bytes, inline)
        if layout is None:
            return None
        buffers, packed, direct, scratch = layout
        record = (ctypes.c_int64 * (M_BUFFERS + BUFFER_FIELDS * len(buffers) + scratch))()
        record[M_HANDLER], record[M_IALLGATHER], record[M_TEST] = self._handler, self._iallgather, self._test
        record[M_COMM], record[M_BYTE] = self.MPI._handleof(comm), self.MPI._handleof(self.MPI.BYTE)
        record[M_SLOT], record[M_SLOTS], record[M_SLOT_BYTES] = slot, slots, slot_bytes
        record[M_SIZE], record[M_SPINS] = len(members), SPINS  # SPINS: read when the record is made
        record[M_NOPERANDS] = packed  # operands packed after the agreement record (0: none)
        record[M_DIRECT], record[M_DIRECT_BYTES] = direct, buffers[0][3] if buffers else 0
        flagged = op.primitive in ("collective_broadcast", "collective_permute")  # results (y, received)
        record[M_FLAG_BUFFER] = len(op.operand_bytes) + 1 if flagged else -1
        sender = op.sender_position(members[position]) if flagged else None
        record[M_FLAG_VALUE] = int(sender is not None)
        record[M_DIRECT_KIND] = {"collective_permute": SEND_RECEIVE, "ragged_all_to_all": RAGGED}.get(
            op.primitive, COLLECTIVE
        )
        if direct and op.primitive == "collective_permute":
            p2p, tag = peers
            device, missing = members[position], self.MPI.PROC_NULL
            record[M_IRECV], record[M_P2P], record[M_TAG] = self._irecv, self.MPI._handleof(p2p), tag
            record[M_DEST] = _or(op.target_of(device), missing)
            record[M_SOURCE] = _or(op.source_of(device), missing)
        if op.primitive == "ragged_all_to_all":
            record[M_POSITION] = position
            record[M_ROW] = op.operand_bytes[0] // op.attrs["input_rows"]
            record[M_IN_ROWS], record[M_OUT_ROWS] = op.attrs["input_rows"], op.attrs["output_rows"]
            record[M_COUNTS] = ctypes.addressof(record) + 8 * (len(record) - scratch)
        for b, fields in enumerate(buffers):
            record[M_BUFFERS + b * BUFFER_FIELDS : M_BUFFERS + (b + 1) * BUFFER_FIELDS] = list(fields)
        return record

    def _layout(self, op, members, position: int, slot_bytes: int, record_bytes: int, inline: bool):
        """``(buffer fields, operands packed, direct MPI function, scratch fields)`` of an
        all_gather, all_to_all, collective_broadcast or collective_permute; None if Python
        must run it."""
        count, buffers, offset = len(members), [], record_bytes
        for nbytes, itemsize in zip(op.operand_bytes, op.operand_itemsize):
            if op.primitive == "all_to_all":  # member j's block for this rank
                block, source, copies = nbytes // count, offset + position * (nbytes // count), count
            elif op.primitive == "all_gather":  # every member's operand
                block, source, copies = nbytes, offset, count
            else:  # collective_broadcast, collective_permute: the sender's operand, if any
                sender = op.sender_position(members[position])
                block, source, copies = nbytes, offset + (sender or 0) * slot_bytes, int(sender is not None)
            buffers.append((nbytes, itemsize, offset, block, source, copies))
            offset += nbytes
        buffers += [(n, item, 0, 0, 0, 0) for n, item in zip(op.result_bytes, op.result_itemsize)]
        if inline:
            return buffers, len(op.operand_bytes), 0, 0
        direct = self._direct.get(op.primitive, 0)
        per_member = buffers[0][3] if buffers else 0  # MPI counts are C ints
        if not direct or len(op.operand_bytes) != 1 or per_member >= 2**31:
            return None
        return buffers, 0, direct, 0

    def _ragged_layout(self, op, count: int, room: int, record_bytes: int):
        """As ``_layout`` for a ragged all-to-all of one update per member whose send sizes
        and output offsets fit in the agreement slot (``room`` bytes after the record), and
        whose byte counts are C ints; scratch: i32 counts and displacements, 4 per member."""
        width = op.operand_bytes[3]
        if op.attrs["num_updates"] != 1 or 2 * width > room or not op.attrs["input_rows"]:
            return None
        if max(op.operand_bytes[0], op.result_bytes[0]) >= 2**31:
            return None
        packed_at = {3: record_bytes, 4: record_bytes + width}  # as MpiTransport._agree packs them
        buffers = [
            (width if b in packed_at else 0, itemsize, packed_at.get(b, 0), 0, 0, 0)
            for b, itemsize in enumerate(op.operand_itemsize)
        ]
        buffers += [(n, item, 0, 0, 0, 0) for n, item in zip(op.result_bytes, op.result_itemsize)]
        return buffers, len(op.operand_bytes), self._alltoallv, 2 * count

    def take_state(self, record: ctypes.Array) -> tuple[int, list]:
        """The state native code left, with its pending requests as mpi4py Requests; resets it."""
        state, record[M_STATE] = record[M_STATE], IDLE
        if state not in (PENDING, DATA_PENDING):
            return state, []
        both = state == DATA_PENDING and record[M_DIRECT_KIND] == SEND_RECEIVE
        fields = [M_REQUEST, M_RECV_REQUEST] if both else [M_REQUEST]
        mask = (1 << (8 * self._request_bytes)) - 1  # as mpi4py reads a handle
        return state, [self.MPI.Request.fromhandle(record[field] & mask) for field in fields]


def _or(value: int | None, default: int) -> int:
    return default if value is None else value

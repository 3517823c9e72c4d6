"""The MPI transport: one device per MPI rank, device index = rank.

Started as ``mpiexec -n N xhlo-run prog.mlir --inputs in.npz``; the compiled
program is the same as for in-process runs, only the transport differs.

* Every distinct set of device groups gets a communicator, made with
  ``Split(color=group, key=position)`` so communicator rank order is group
  order. All of them are made up front, in runtime-table order, because
  ``Split`` is collective over all ranks.
* all_gather / all_to_all / collective_broadcast map to ``Iallgather`` /
  ``Ialltoall`` / ``Ibcast`` on the group communicator; collective_permute and
  send/recv to ``Isend``/``Irecv`` on a duplicate of the world communicator;
  ragged all-to-all to an ``Ialltoallv`` of the rows, its sizes and output offsets
  having travelled with the agreement record (or, when they do not fit, in an
  ``Ialltoall`` of their own).
* Before each group collective the members all-gather a fixed-size record of
  the op they run, so ranks running different collectives are reported as such.
  Operands of up to ``_INLINE_BYTES`` of an all_gather, all_to_all,
  collective_broadcast or collective_permute travel in that exchange, after
  the record: one MPI collective instead of two. Every record exchange has the
  same size, so ranks that disagree (one small op, one large) still make
  matching MPI calls.
* After a call site's first call on a rank, its later calls run in native
  code (``mpi_fast``: the agreement and the exchange, calling MPI directly)
  when its operands travel inline or it is a one-operand all_gather,
  all_to_all or collective_permute, or a ragged all-to-all of one update per
  member; Python resumes on a late peer, a mismatch or rows it must report.
  ``XHLO_MPI_FAST_PATH=0`` keeps every call in Python.
* Ranks that share a node's cores split them: unless ``XHLO_NUM_THREADS`` or
  ``set_num_threads`` chose a count, each rank's parallel loops use its share.
* Everything is nonblocking and polled against the collective timeout, so a
  lost or stuck rank ends the job with an error instead of a hang. A failing
  rank prints its error (naming device and op) and calls ``Abort``, which ends
  every rank: MPI offers no way to resume peers blocked on a dead rank.
"""

from __future__ import annotations

import ctypes
import hashlib
import sys
import time
from collections.abc import Sequence

import numpy as np

from ..checks import CheckFailure
from . import mpi_fast, parallel
from .errors import CollectiveError, CollectiveMismatch, CollectiveTimeout
from .inprocess import RaggedPlan
from .program import DEFAULT_TIMEOUT, Buffer, Device, RuntimeOp, activate

_RECORD_BYTES = 512  # what each member says it runs: 32 bytes of digest + description
_INLINE_BYTES = 4096  # operands up to this size travel with the record
_SLOT_BYTES = _RECORD_BYTES + _INLINE_BYTES
_INLINE_PRIMITIVES = frozenset({"all_gather", "all_to_all", "collective_broadcast", "collective_permute"})
_GROUP_PRIMITIVES = (
    "all_gather",
    "all_reduce",
    "all_to_all",
    "collective_permute",
    "collective_broadcast",
    "ragged_all_to_all",
)
_TAG_SPACE = 16384
# Poll without sleeping for this long before backing off: MPI makes progress on a large
# message only inside MPI calls, so a sleeping rank stalls the transfer (MPI's own blocking
# calls spin too): a 16 MiB all_gather step went from 8.2 to 6.0 ms (mpi4py's Allgather 2.3).
_SPIN_SECONDS = 0.25
_POLLS_PER_CLOCK_READ = 256


def _agreement_record(op: RuntimeOp, members: tuple[int, ...]) -> np.ndarray:
    """A digest of what this member runs, followed by its description for the error."""
    text = f"{op.describe()} with group {list(members)}: {op.signature}"
    record = np.zeros(_RECORD_BYTES, np.uint8)
    digest = hashlib.blake2b(f"{op.signature}|{members}".encode(), digest_size=32).digest()
    record[:32] = np.frombuffer(digest, np.uint8)
    described = text.encode()[: _RECORD_BYTES - 32]
    record[32 : 32 + len(described)] = np.frombuffer(described, np.uint8)
    return record


def abort_job(comm, message: str) -> None:
    """Print ``message`` and end every rank of the job (MPI cannot resume blocked peers)."""
    sys.stdout.flush()
    sys.stderr.write(f"xhlo: {message}\n")
    sys.stderr.flush()
    time.sleep(0.5)  # let mpiexec forward the message before the job is torn down
    comm.Abort(1)


def load_mpi():
    """mpi4py's MPI module, or a CollectiveError saying how to get it."""
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise CollectiveError(
            "MPI runs need mpi4py and an MPI library: pip install 'xhlo[mpi]' (mpi4py, mpich)"
        ) from err
    return MPI


class MpiTransport:
    """Moves runtime-op bytes between MPI ranks."""

    def __init__(self, ops: Sequence[RuntimeOp], *, timeout: float = DEFAULT_TIMEOUT, comm=None):
        self.MPI = load_mpi()
        # mpi4py 4 names it ``buffer``, 3 ``memory``
        self._from_address = (getattr(self.MPI, "buffer", None) or self.MPI.memory).fromaddress
        self.world = comm if comm is not None else self.MPI.COMM_WORLD
        self.rank = self.world.Get_rank()
        self.size = self.world.Get_size()
        self.timeout = timeout
        # Dup and Split block until every rank calls them: first make sure all ranks are here
        self._wait([self.world.Ibarrier()], None, "waiting for all ranks to start the program")
        self._p2p = self.world.Dup()
        parallel.share_cores(self._ranks_sharing_cores())
        self._comms: dict[tuple, object] = {}
        self._site_comms: dict[int, object] = {}  # the same by call site, without hashing groups
        self._sends: list[tuple[object, bytes]] = []
        # per call site and group: the agreement record, the all-gathered records and a view
        self._records: dict[tuple, tuple] = {}
        self._fast = mpi_fast.FastPath.create(self.MPI)  # None: every call goes through Python
        self._fast_records: dict[int, ctypes.Array] = {}  # per call site, for the native fast path
        self._device: Device | None = None
        self._staging: dict[int, list[np.ndarray]] = {}  # all_reduce: the blocks received, per call site
        for op in ops:  # same order on every rank: Split is collective
            if op.primitive in _GROUP_PRIMITIVES:
                self._group_comm(op.groups)

    def device(self, num_replicas: int, num_partitions: int) -> Device:
        """This rank's device, kept from run to run: the call sites its earlier runs
        enabled in its fast-path table stay native, so a program that makes each
        collective once per run (a training step) runs them natively from its second run."""
        kept = self._device
        if kept is None or kept.error is not None or (kept.num_replicas, kept.num_partitions) != (
            num_replicas, num_partitions
        ):
            kept = self._device = Device(self.rank, num_replicas, num_partitions, self)
        return kept

    def _ranks_sharing_cores(self) -> int:
        """Ranks on this node (this one included) that may run on any core this one may."""
        node = self.world.Split_type(self.MPI.COMM_TYPE_SHARED)
        try:
            mine = parallel.usable_cores()
            return sum(1 for cores in node.allgather(mine) if cores & mine)
        finally:
            node.Free()

    def _group_comm(self, groups: tuple[tuple[int, ...], ...]):
        if groups not in self._comms:
            color, key = self.MPI.UNDEFINED, 0
            for index, group in enumerate(groups):
                if self.rank in group:
                    color, key = index, group.index(self.rank)
            self._comms[groups] = self.world.Split(color, key)
        return self._comms[groups]

    # -- failure and completion ----------------------------------------------------------

    def device_failed(self, device: int, error: BaseException) -> None:
        """Report and end the whole job: peers blocked on this rank cannot be resumed."""
        abort_job(self.world, f"device {device} (MPI rank {self.rank}) failed: {error}")

    def finish(self) -> None:
        """Complete outstanding sends (their payload copies stay alive until then)."""
        if self._sends:
            self._wait([request for request, _ in self._sends], None, "completing sends")
            self._sends.clear()

    def _wait(self, requests: list, op: RuntimeOp | None, what: str) -> None:
        """Poll ``requests`` to completion: spin first (_SPIN_SECONDS; a collective of a
        few KiB takes microseconds, and any sleep costs ~50 us), then back off up to 1 ms."""
        test_all = self.MPI.Request.Testall
        spin_until = time.monotonic() + _SPIN_SECONDS
        while time.monotonic() < spin_until:
            for _ in range(_POLLS_PER_CLOCK_READ):
                if test_all(requests):
                    return
        deadline = time.monotonic() + self.timeout
        delay = 1e-5
        while not test_all(requests):
            if time.monotonic() > deadline:
                where = op.describe() if op else what
                raise CollectiveTimeout(
                    f"device {self.rank}: {where} timed out after {self.timeout:g} s waiting for its peers "
                    "(a lost or stuck rank, or ranks running different collectives)",
                    device=self.rank,
                    op=op,
                )
            time.sleep(delay)
            delay = min(1e-3, delay * 2)

    def _slots(self, op: RuntimeOp, comm, members: tuple[int, ...]) -> tuple:
        """This member's slot (its agreement record, then room for inline operands) and the
        buffer its peers' slots land in, made on the call site's first run:
        ``(slot, slot address, slots, slots address, slots as bytes)``."""
        key = (op.index, members)
        if key not in self._records:
            slot = np.zeros(_SLOT_BYTES, np.uint8)
            slot[:_RECORD_BYTES] = _agreement_record(op, members)
            slots = np.empty((comm.Get_size(), _SLOT_BYTES), np.uint8)
            self._records[key] = (slot, slot.ctypes.data, slots, slots.ctypes.data, slots.data.cast("B"))
        return self._records[key]

    def _agree(self, op: RuntimeOp, comm, members: tuple[int, ...], inline: Sequence[Buffer]) -> int:
        """All-gather what each member runs, followed by the ``inline`` operands (packed);
        disagreeing members are a mismatch. Returns the address of the gathered slots
        (member j's at ``j * _SLOT_BYTES``, its operands from ``_RECORD_BYTES`` on)."""
        slot, cursor, slots, _, _ = self._slots(op, comm, members)
        cursor += _RECORD_BYTES
        for buffer in inline:
            ctypes.memmove(cursor, buffer.address, buffer.nbytes)
            cursor += buffer.nbytes
        self._wait([comm.Iallgather(slot, slots)], op, "")
        return self._agreed(op, comm, members)

    def _agreed(self, op: RuntimeOp, comm, members: tuple[int, ...]) -> int:
        """The gathered slots' address once every member's digest equals this one's."""
        _, _, slots, gathered, received = self._slots(op, comm, members)
        digest = received[:32]
        peers = range(_SLOT_BYTES, len(received), _SLOT_BYTES)
        if all(received[j : j + 32] == digest for j in peers):
            return gathered
        lines = [
            f"device {members[j]} runs "
            + bytes(slots[j, 32:_RECORD_BYTES]).rstrip(b"\0").decode(errors="replace")
            for j in range(len(members))
        ]
        raise CollectiveMismatch(
            f"device {self.rank}: the devices run different collectives: " + "; ".join(lines),
            device=self.rank,
            op=op,
        )

    # -- the native fast path (mpi_fast) ----------------------------------------------------

    def _resume(self, op: RuntimeOp, comm, members: tuple[int, ...]) -> int:
        """Finish what native code left of this call (a pending exchange, a mismatch to
        report) and return the state it left it in (``mpi_fast.IDLE``: nothing)."""
        record = self._fast_records.get(op.index)
        if record is None:
            return mpi_fast.IDLE
        state, requests = self._fast.take_state(record)
        if requests:
            self._wait(requests, op, "")
        if state in (mpi_fast.PENDING, mpi_fast.MISMATCH):
            self._agreed(op, comm, members)
        elif state == mpi_fast.DATA_FAILED:
            raise CollectiveError(f"{op.describe()}: MPI could not start the exchange", device=self.rank, op=op)
        return state

    def _enable_fast_path(self, device: Device, op: RuntimeOp, comm, members, position: int, inline: bool) -> None:
        """Let native code run this call site's later calls on this rank, if it can."""
        if self._fast is None:
            return
        if op.index not in self._fast_records:
            _, slot, _, slots, _ = self._slots(op, comm, members)
            self._fast_records[op.index] = self._fast.record(
                op, comm, members, position, slot, slots, _SLOT_BYTES, _RECORD_BYTES, inline,
                peers=(self._p2p, op.index % _TAG_SPACE),
            )
        record = self._fast_records[op.index]
        if record is not None:
            device.enable_fast_path(op.index, ctypes.addressof(record))

    # -- the primitives -------------------------------------------------------------------

    def execute(
        self, device: Device, op: RuntimeOp, operands: list[Buffer], results: list[Buffer]
    ) -> None:
        if op.primitive == "device_id":
            results[0].view()[:] = np.array([device.replica, device.partition], np.int64).view(
                np.uint8
            )
            return
        if op.primitive == "send":
            return self._send(op, operands)
        if op.primitive == "recv":
            return self._recv(op, results)
        membership = op.group_of(self.rank)
        if membership is None:
            if op.primitive != "collective_broadcast":
                raise CollectiveError(
                    f"device {self.rank} is in no group of {op.describe()}", device=self.rank, op=op
                )
            results[-1].view()[0] = 0
            return
        members, position = membership
        comm = self._site_comms.get(op.index)
        if comm is None:
            comm = self._site_comms[op.index] = self._group_comm(op.groups)
        inline = op.primitive in _INLINE_PRIMITIVES and sum(op.operand_bytes) <= _INLINE_BYTES
        state = self._resume(op, comm, members)
        if state == mpi_fast.DATA_PENDING:  # native code agreed and exchanged the data
            if op.primitive == "collective_permute":
                results[1].view()[0] = int(op.sender_position(self.rank) is not None)
        elif inline:
            gathered = self._slots(op, comm, members)[3] if state else self._agree(op, comm, members, operands)
            _unpack_inline(op, gathered, members, position, operands, results)
        else:
            if not state:
                self._agree(op, comm, members, _agreement_extras(op, operands))
            getattr(self, f"_{op.primitive}")(op, comm, position, operands, results)
        self._enable_fast_path(device, op, comm, members, position, inline)

    def _memory(self, buffer: Buffer):
        """``buffer`` as an mpi4py buffer (cheaper to make than a numpy view)."""
        return self._from_address(buffer.address, buffer.nbytes) if buffer.nbytes else buffer.view()

    def _all_gather(self, op, comm, position, operands, results) -> None:
        memory = self._memory
        requests = [comm.Iallgather(memory(x), memory(y)) for x, y in zip(operands, results)]
        self._wait(requests, op, "")

    def _all_reduce(self, op, comm, position, operands, results) -> None:
        """Blocks to their folders (all-to-all), the op's compiled fold kernel on the
        received blocks into this rank's block of the result (every output of the kernel,
        one per member, bound to it), then all-gather in place."""
        count = comm.Get_size()
        staged = self._staging.get(op.index)
        if staged is None:  # kept per call site: fresh pages would fault on every call
            staged = self._staging[op.index] = [np.empty(x.nbytes, np.uint8) for x in operands]
        self._wait([comm.Ialltoall(self._memory(x), s) for x, s in zip(operands, staged)], op, "")
        inputs = [s.ctypes.data + j * (s.nbytes // count) for s in staged for j in range(count)]
        outputs = [y.address + position * (y.nbytes // count) for y in results for _ in range(count)]
        op.run_kernel(inputs + outputs)
        self._wait([comm.Iallgather(self.MPI.IN_PLACE, self._memory(y)) for y in results], op, "")

    def _all_to_all(self, op, comm, position, operands, results) -> None:
        memory = self._memory
        requests = [comm.Ialltoall(memory(x), memory(y)) for x, y in zip(operands, results)]
        self._wait(requests, op, "")

    def _collective_broadcast(self, op, comm, position, operands, results) -> None:
        (x,), (y, flag) = operands, results
        if position == 0:
            ctypes.memmove(y.address, x.address, y.nbytes)
        self._wait([comm.Ibcast(y.view(), root=0)], op, "")
        flag.view()[0] = 1

    def _collective_permute(self, op, comm, position, operands, results) -> None:
        (x,), (y, flag) = operands, results
        tag = op.index % _TAG_SPACE
        requests = []
        target, source = op.target_of(self.rank), op.source_of(self.rank)
        if target is not None:
            requests.append(self._p2p.Isend(x.view(), dest=target, tag=tag))
        if source is not None:
            requests.append(self._p2p.Irecv(y.view(), source=source, tag=tag))
        self._wait(requests, op, "")
        flag.view()[0] = int(source is not None)

    def _ragged_all_to_all(self, op, comm, position, operands, results) -> None:
        """Rows straight from the input and into the result where it can (one update per
        peer, receive regions apart), else packed and unpacked; one MPI_Ialltoallv."""
        plan = RaggedPlan(op)
        count, updates, row = comm.Get_size(), plan.updates, plan.row_bytes
        input_offsets, sizes = plan.metadata(operands, 2), plan.metadata(operands, 3)
        for k in range(count * updates):  # our own reads must stay inside our input
            start, rows = int(input_offsets[k]), int(sizes[k])
            if rows and (rows < 0 or start < 0 or start + rows > plan.input_rows):
                raise _out_of_bounds(
                    op, self.rank, f"device {self.rank} sends rows [{start}, {start + rows}) of its "
                    f"{plan.input_rows}-row input"
                )
        incoming = self._ragged_incoming(plan, comm, position, operands)  # [sender, update, (rows, dest)]
        for sender, (rows, dest) in ((j, u) for j in range(count) for u in incoming[j]):
            if rows and (rows < 0 or dest < 0 or dest + rows > plan.output_rows):
                raise _out_of_bounds(
                    op, self.rank, f"device {members_of(op, self.rank)[sender]} writes rows "
                    f"[{dest}, {dest + rows}) of device {self.rank}'s {plan.output_rows}-row output"
                )
        (out,) = results
        send_counts = [int(sizes[j * updates : (j + 1) * updates].sum()) * row for j in range(count)]
        recv_counts = [int(incoming[j, :, 0].sum()) * row for j in range(count)]
        if updates == 1:
            starts = [int(o) * row if n else 0 for o, n in zip(input_offsets, sizes)]  # C ints
            send = [self._memory(operands[0]), (send_counts, starts), self.MPI.BYTE]
        else:
            data = operands[0].view().reshape(-1, row) if row else np.empty((0, 0), np.uint8)
            packed = [data[int(input_offsets[k]) : int(input_offsets[k] + sizes[k])] for k in range(count * updates)]
            sendbuf = np.concatenate([p.reshape(-1) for p in packed]) if packed else np.empty(0, np.uint8)
            send = [sendbuf, (send_counts, _displacements(send_counts)), self.MPI.BYTE]
        regions = incoming.reshape(-1, 2)
        direct = updates == 1 and _apart(regions[regions[:, 0] > 0])
        if not (direct and sum(recv_counts) == out.nbytes):  # rows nobody sends keep `output`
            ctypes.memmove(out.address, operands[1].address, out.nbytes)
        if direct:  # each sender's rows land where they belong
            starts = [int(d) * row if n else 0 for n, d in incoming[:, 0]]
            receive = [self._memory(out), (recv_counts, starts), self.MPI.BYTE]
        else:
            recvbuf = np.empty(sum(recv_counts), np.uint8)
            receive = [recvbuf, (recv_counts, _displacements(recv_counts)), self.MPI.BYTE]
        self._wait([comm.Ialltoallv(send, receive)], op, "")
        if not direct:  # in sender and update order: a later update wins an overlap
            view, cursor = out.view(), 0
            for rows, dest in regions:
                view[dest * row : (dest + rows) * row] = recvbuf[cursor : cursor + rows * row]
                cursor += rows * row

    def _ragged_incoming(self, plan: RaggedPlan, comm, position, operands) -> np.ndarray:
        """What each member sends this one: ``[member, update, (rows, output row)]``. From the
        agreement slots when the metadata came with them, else an all-to-all of it."""
        op, count, updates = plan.op, comm.Get_size(), plan.updates
        if _agreement_extras(op, operands):
            slots = self._slots(op, comm, members_of(op, self.rank))[2]
            dtype = plan.metadata_dtype(3)
            width = op.operand_bytes[3]
            mine = slice(position * updates, (position + 1) * updates)
            sizes = np.stack([slots[j, _RECORD_BYTES : _RECORD_BYTES + width].view(dtype)[mine] for j in range(count)])
            dests = np.stack([slots[j, _RECORD_BYTES + width : _RECORD_BYTES + 2 * width].view(dtype)[mine] for j in range(count)])
            return np.stack([sizes, dests], axis=2).astype(np.int64)
        outgoing = np.stack([plan.metadata(operands, 3), plan.metadata(operands, 4)], axis=1)
        outgoing = outgoing.reshape(count, 2 * updates)
        incoming = np.empty_like(outgoing)
        self._wait([comm.Ialltoall(outgoing, incoming)], op, "")
        return incoming.reshape(count, updates, 2)

    def _send(self, op: RuntimeOp, operands: list[Buffer]) -> None:
        target = op.target_of(self.rank)
        if target is None:
            return
        payload = b"".join(ctypes.string_at(b.address, b.nbytes) for b in operands)
        request = self._p2p.Isend(payload, dest=target, tag=_TAG_SPACE + op.channel % _TAG_SPACE)
        self._sends.append((request, payload))

    def _recv(self, op: RuntimeOp, results: list[Buffer]) -> None:
        *payload, flag = results
        source = op.source_of(self.rank)
        if source is None:
            flag.view()[0] = 0
            return
        data = np.empty(sum(b.nbytes for b in payload), np.uint8)
        self._wait(
            [self._p2p.Irecv(data, source=source, tag=_TAG_SPACE + op.channel % _TAG_SPACE)], op, ""
        )
        cursor = 0
        for buffer in payload:
            buffer.view()[:] = data[cursor : cursor + buffer.nbytes]
            cursor += buffer.nbytes
        flag.view()[0] = 1


def _unpack_inline(
    op: RuntimeOp, gathered: int, members: tuple[int, ...], position: int,
    operands: list[Buffer], results: list[Buffer],
) -> None:
    """Finish an op whose operands came with the agreement records (``MpiTransport._agree``);
    ``gathered``: the address of the members' slots."""
    memmove = ctypes.memmove
    if op.primitive in ("collective_broadcast", "collective_permute"):
        (x,), (y, flag) = operands, results
        source = op.sender_position(members[position])
        if source is not None:
            memmove(y.address, gathered + source * _SLOT_BYTES + _RECORD_BYTES, y.nbytes)
        flag.view()[0] = int(source is not None)
        return
    offset = _RECORD_BYTES
    for x, y in zip(operands, results):
        block = x.nbytes if op.primitive == "all_gather" else x.nbytes // len(members)
        source = offset + (0 if op.primitive == "all_gather" else position * block)
        for j in range(len(members)):  # all_gather: member j's operand; all_to_all: its block for me
            memmove(y.address + j * block, gathered + j * _SLOT_BYTES + source, block)
        offset += x.nbytes


def _agreement_extras(op: RuntimeOp, operands: list[Buffer]) -> list[Buffer]:
    """What travels with the agreement record besides inline operands: a ragged
    all-to-all's send sizes and output offsets, when they fit."""
    if op.primitive == "ragged_all_to_all" and 2 * op.operand_bytes[3] <= _INLINE_BYTES:
        return [operands[3], operands[4]]
    return []


def _out_of_bounds(op: RuntimeOp, rank: int, rows: str) -> CollectiveError:
    return CollectiveError(f"{op.describe()}: {rows}: out of bounds", device=rank, op=op)


def _apart(regions: np.ndarray) -> bool:
    """Whether the ``(rows, first row)`` regions do not overlap."""
    order = np.argsort(regions[:, 1], kind="stable")
    starts, ends = regions[order, 1], regions[order, 1] + regions[order, 0]
    return bool(np.all(starts[1:] >= ends[:-1]))


def members_of(op: RuntimeOp, device: int) -> tuple[int, ...]:
    membership = op.group_of(device)
    return membership[0] if membership else ()


def _displacements(counts: Sequence[int]) -> list[int]:
    return [int(v) for v in np.concatenate([[0], np.cumsum(counts)[:-1]])] if counts else []


def _transport_for(binding, world, timeout: float | None) -> MpiTransport:
    """The program's transport on ``world``, built on its first run there and kept: its
    communicators take collective calls (Dup, Split) worth ~0.5 ms a run to create."""
    timeout = timeout or (binding.timeout if binding else DEFAULT_TIMEOUT)
    kept = getattr(binding, "mpi_transport", None)
    if kept is not None and kept.world == world:
        kept.timeout = timeout
        return kept
    transport = MpiTransport(binding.ops if binding else [], timeout=timeout, comm=world)
    if binding is not None:
        binding.mpi_transport = transport
    return transport


def run_on_rank(
    exe, args: Sequence, *, entry: str | None = None, timeout: float | None = None, comm=None
) -> tuple:
    """Run ``exe`` as the device of this MPI rank; any failure ends the job (see module doc)."""
    binding = getattr(exe, "_runtime", None)
    world = comm if comm is not None else load_mpi().COMM_WORLD
    try:
        transport = _transport_for(binding, world, timeout)
    except BaseException as err:
        abort_job(world, f"device {world.Get_rank()} (MPI rank {world.Get_rank()}) failed: {err}")
        raise
    num_devices = exe.num_replicas * exe.num_partitions
    device = transport.device(exe.num_replicas, exe.num_partitions)
    try:
        if transport.size != num_devices:
            raise CollectiveError(
                f"the program runs on {num_devices} devices ({exe.num_replicas} replicas x "
                f"{exe.num_partitions} partitions) but mpiexec started {transport.size} ranks"
            )
        with activate(device):
            result = exe.call_function(entry or exe.entry, *args)
        transport.finish()
    except CheckFailure:  # the program ran to its end: a test result, not a fault
        transport.finish()
        raise
    except BaseException as err:
        device.fail(err)
        raise
    return result if isinstance(result, tuple) else (result,)

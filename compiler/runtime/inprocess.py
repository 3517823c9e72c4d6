"""The in-process transport: every device is a thread, and memory is shared.

A collective synchronizes the devices of one group twice: each member posts
the addresses of its buffers and *arrives*; once all members arrived, each
*pulls* what it needs from its peers' buffers into its own, and departs; once
all departed, nobody reads a buffer its owner may release. The devices of a
member set count their arrivals in one shared native word (``_Group``), and
the wait, the check that all members run the same collective, the copies and
the departure run in one JIT-compiled call per device (``spin_wait.exchange``)
that spins, yields and naps without the GIL: no condition variable, no GIL
hand-over per barrier. The copies of all_gather, all_to_all, permute and
broadcast are fixed per op (``_Exchange``). After a call site's first
successful exchange on a device, its record goes to the device's native fast
path (``spin_wait``): later calls post, arrive and exchange without entering
Python unless a peer is late or something fails. A large all_reduce runs two
exchanges around the op's compiled fold kernel; a ragged all-to-all, whose
copies depend on its operands' contents, runs two exchanges around a pull of
every member's updates for this one (``spin_wait``'s ``xhlo_ragged_pull``,
called from Python on the first call).

Nothing waits forever. The native wait returns to Python after a bounded slice
or at once when the world's event counter moves, and a waiting device gives up
with a ``CollectiveError``

* at once when a peer it waits for failed (``CollectiveAborted``, naming it)
  or finished its program without joining (``CollectiveMismatch``);
* when the members disagree on the op (signature or group order), or when
  every live device waits and none can proceed (``CollectiveMismatch``,
  listing what each device waits in);
* after ``timeout`` seconds otherwise (``CollectiveTimeout``).

A device that gives up withdraws its arrival (unless the barrier completed
meanwhile) and poisons the group, so peers fail too instead of reading memory
the leaver may reuse. ``send``/``recv`` use mailboxes: a send copies its
payload and returns, a recv waits for the payload of its source.
"""

from __future__ import annotations

import ctypes
import queue
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Sequence

import numpy as np

from .errors import (
    CollectiveAborted,
    CollectiveError,
    CollectiveMismatch,
    CollectiveTimeout,
    DeviceArgumentError,
)
from .program import DEFAULT_TIMEOUT, Buffer, Device, RuntimeOp, activate
from .spin_wait import (
    DISAGREE,
    R_AGREEMENT,
    R_BARRIER,
    R_COPIES,
    R_COUNT,
    R_EVENTS,
    R_FAILURE,
    R_FLAG_SLOT,
    R_FLAG_VALUE,
    R_IDS,
    R_ITEMSIZES,
    R_KERNEL,
    R_KERNEL_ARGS,
    R_KERNEL_NPLAN,
    R_KERNEL_PLAN,
    R_KERNEL_STATUS,
    R_NBUFS,
    R_NCOPIES,
    R_NEXT,
    R_PENDING_STATUS,
    R_PENDING_TARGET,
    R_ROW,
    R_SIZE,
    R_SLOT,
    R_TABLE,
    READY,
    RG_DEST,
    RG_IN_ROWS,
    RG_ITEMSIZE,
    RG_OUT_ROWS,
    RG_POSITION,
    RG_RESULT_BYTES,
    RG_ROW,
    RG_ROWS,
    RG_SENDER,
    RG_SIZE,
    RG_START,
    RG_STATUS,
    RG_STRIDE,
    RG_TABLE,
    RG_UPDATES,
    exchange_function,
    native,
    wait_function,
)

_Arrival = tuple[RuntimeOp, tuple[int, ...], list[Buffer], list[Buffer]]


class _Group:
    """What the devices of one member set share across all the collectives they run together.

    ``count`` is a native word holding the number of barrier arrivals of all
    members so far. Members pass barriers in lockstep (two per collective:
    after posting their buffers, and after pulling), so the b-th barrier of a
    member is complete once ``count >= b * size``; the first member to see that
    knows every member arrived, because none can be a barrier ahead before it.
    Arrivals are atomic adds and withdrawals compare-and-swaps (native, as the
    fast path arrives without Python); ``barrier_counts`` holds the barriers each
    member arrived at, written by that member's thread only.
    """

    def __init__(self, members: frozenset[int]):
        self.size = len(members)
        self.lock = threading.Lock()
        self.count = ctypes.c_int64(0)
        self.count_address = ctypes.addressof(self.count)
        self.arrivals: dict[int, _Arrival] = {}  # each member's buffers in its current collective
        # what each member runs (``_agreement_id``), at its slot in sorted member order
        self.slot_of = {device: slot for slot, device in enumerate(sorted(members))}
        self.barrier_counts = (ctypes.c_int64 * self.size)()
        self.ids = (ctypes.c_int64 * self.size)()
        self.ids_address = ctypes.addressof(self.ids)
        self.failed = ctypes.c_int64(0)  # nonzero once poisoned: the fast path steps aside
        self.failure: tuple[type[CollectiveError], str] | None = None
        self.tables: dict[int, ctypes.Array] = {}  # agreement id -> the members' buffer addresses
        self._native = native()

    def barrier_address(self, device: int) -> int:
        return ctypes.addressof(self.barrier_counts) + 8 * self.slot_of[device]

    def table(self, agreement: int, buffers_per_member: int) -> ctypes.Array:
        """The address table the members running the same collective share."""
        with self.lock:
            table = self.tables.get(agreement)
            if table is None:
                table = self.tables[agreement] = (ctypes.c_int64 * (self.size * buffers_per_member))()
            return table

    def arrive(self, device: int) -> int:
        """Count ``device`` in at its next barrier; the count that completes that barrier."""
        return self._native.arrive(self.count_address, self.barrier_address(device), self.size)

    def departed(self, device: int) -> None:
        """Record the departure the native exchange counted for ``device``."""
        self.barrier_counts[self.slot_of[device]] += 1

    def withdraw(self, device: int, target: int) -> bool:
        """Take back an arrival whose barrier is incomplete; False if it completed meanwhile."""
        if not self._native.withdraw(self.count_address, target):
            return False
        self.barrier_counts[self.slot_of[device]] -= 1
        return True

    def poison(self, failure: tuple[type[CollectiveError], str]) -> None:
        self.failure = failure
        self.failed.value = 1

    def missing(self, members: tuple[int, ...], target: int) -> list[int]:
        barrier = target // self.size
        return [m for m in members if self.barrier_counts[self.slot_of[m]] < barrier]


def _agreement_id(op: RuntimeOp, members: tuple[int, ...]) -> int:
    """Equal on every member exactly when they run the same collective (signature and group)."""
    return hash(_agreement(op, members))


def _agreement(op: RuntimeOp, members: tuple[int, ...]) -> tuple:
    # the primitive and byte sizes too: the two runtime calls of one all_reduce share a signature
    return (op.signature, members, op.primitive, op.operand_bytes, op.result_bytes)


class _Exchange:
    """One device's part of one collective op, run by native code (``spin_wait.exchange``).

    The copies are fixed by the op (a pull of each block from a peer's operand
    into this device's result); only the buffer addresses change per call, and
    each member posts them in the group's shared table before it arrives.
    """

    def __init__(self, op: RuntimeOp, members: tuple[int, ...], position: int, group: _Group):
        self.group = group
        self.agreement = _agreement_id(op, members)
        self.slot = group.slot_of[members[position]]
        self.stride = op.num_buffers
        self.table = group.table(self.agreement, self.stride)
        self.table_address = ctypes.addressof(self.table)
        self.row = position * self.stride
        records = _copies(op, members, position, self.stride)
        self.count = len(records)
        self.copies = (ctypes.c_int64 * max(1, 5 * self.count))(*[v for r in records for v in r])
        self.copies_address = ctypes.addressof(self.copies)
        self.record: ctypes.Array | None = None  # for the native fast path, once enabled

    def post(self, device: int, operands: list[Buffer], results: list[Buffer]) -> None:
        row = self.row
        for k, buffer in enumerate(operands):
            self.table[row + k] = buffer.address
        row += len(operands)
        for k, buffer in enumerate(results):
            self.table[row + k] = buffer.address
        self.group.ids[self.slot] = self.agreement

    def fast_record(self, world: InProcessWorld, op: RuntimeOp, device: int) -> int:
        """Address of this exchange's native record for ``xhlo_rt_fast`` (built once)."""
        if self.record is None:
            group = self.group
            fields = [0] * (R_ITEMSIZES + self.stride)
            fields[R_COUNT] = group.count_address
            fields[R_BARRIER] = group.barrier_address(device)
            fields[R_SIZE] = group.size
            fields[R_EVENTS] = world._events_address
            fields[R_IDS] = group.ids_address
            fields[R_SLOT] = self.slot
            fields[R_AGREEMENT] = self.agreement
            fields[R_TABLE] = self.table_address
            fields[R_ROW] = self.row
            fields[R_NBUFS] = self.stride
            fields[R_COPIES] = self.copies_address
            fields[R_NCOPIES] = self.count
            fields[R_FAILURE] = ctypes.addressof(group.failed)
            fields[R_FLAG_SLOT], fields[R_FLAG_VALUE] = -1, 0
            if op.primitive in ("collective_permute", "collective_broadcast"):
                fields[R_FLAG_SLOT] = self.stride - 1  # the ``received`` result
                fields[R_FLAG_VALUE] = int(_receives(op, device))
            fields[R_ITEMSIZES:] = [*op.operand_itemsize, *op.result_itemsize]
            self.record = (ctypes.c_int64 * len(fields))(*fields)
        return ctypes.addressof(self.record)

    def link_fold(self, second: _Exchange, kernel: int, block, plan: list[tuple[int, int, int]]) -> None:
        """Make this (first) exchange's record run the fold kernel and then ``second``
        natively: an in-place all_reduce without Python. ``plan``: per kernel argument,
        (table slot, byte offset, descriptor address)."""
        self.kernel_block = block  # the record points into these: keep them alive
        self.kernel_plan = (ctypes.c_int64 * max(1, 3 * len(plan)))(*[v for p in plan for v in p])
        self.record[R_NEXT] = ctypes.addressof(second.record)
        self.record[R_KERNEL] = kernel
        self.record[R_KERNEL_ARGS] = ctypes.addressof(block.packed)
        self.record[R_KERNEL_PLAN] = ctypes.addressof(self.kernel_plan)
        self.record[R_KERNEL_NPLAN] = len(plan)

    def pending(self) -> bool:
        return self.record is not None and self.record[R_PENDING_TARGET] != 0

    def take_pending(self) -> tuple[int, int] | None:
        """(target, status) of an arrival the fast path made but could not complete."""
        record = self.record
        if record is None or not record[R_PENDING_TARGET]:
            return None
        pending = record[R_PENDING_TARGET], record[R_PENDING_STATUS]
        record[R_PENDING_TARGET] = 0
        return pending

    def run(self, world: InProcessWorld, target: int) -> int:
        group = self.group
        return world._exchange(
            group.count_address, target, world._events_address, world._events.value,
            group.ids_address, group.size, self.table_address, self.copies_address, self.count,
        )


def _copies(op: RuntimeOp, members: tuple[int, ...], position: int, stride: int) -> list[tuple]:
    """(source slot, source offset, destination slot, destination offset, bytes) of each copy
    (all_reduce: none; its fold kernel writes every member's result, and both of its
    exchanges only synchronize)."""
    operands = len(op.operand_bytes)
    mine = position * stride

    def slot(member_position: int, buffer: int) -> int:
        return member_position * stride + buffer

    count = len(members)
    if op.primitive in ("all_gather", "all_to_all"):
        records = []
        for i, nbytes in enumerate(op.result_bytes):
            block = nbytes // count
            source_offset = position * block if op.primitive == "all_to_all" else 0
            for j in range(count):
                records.append((slot(j, i), source_offset, mine + operands + i, j * block, block))
        return records
    if op.primitive == "all_reduce":
        return []
    if op.primitive in ("collective_permute", "collective_broadcast"):
        sender = op.sender_position(members[position])
        return [] if sender is None else [(slot(sender, 0), 0, mine + operands, 0, op.result_bytes[0])]
    if op.primitive == "ragged_all_to_all":  # pulled between the exchanges
        return []
    raise CollectiveError(f"no copy plan for runtime primitive '{op.primitive}'", op=op)


def _fold_arguments(op: RuntimeOp, members: tuple[int, ...], position: int) -> list[tuple[int, int]]:
    """The fold kernel's arguments as (table slot, byte offset): block ``position`` of every
    member's operands (operand by operand, members in group order), then of every member's
    results (result by result, members in group order): the kernel writes its folded block
    into all of them."""
    count, stride, operands = len(members), op.num_buffers, len(op.operand_bytes)
    inputs = [
        (j * stride + i, position * (nbytes // count))
        for i, nbytes in enumerate(op.operand_bytes)
        for j in range(count)
    ]
    outputs = [
        (j * stride + operands + i, position * (nbytes // count))
        for i, nbytes in enumerate(op.result_bytes)
        for j in range(count)
    ]
    return inputs + outputs


def _set_flag(buffer: Buffer, value: bool) -> None:
    ctypes.memset(buffer.address, int(value), 1)


def _receives(op: RuntimeOp, device: int) -> bool:
    """The ``received`` flag of a permute or broadcast for a member ``device``."""
    return op.sender_position(device) is not None


class InProcessWorld:
    """The shared state of one multi-device run in this process."""

    def __init__(self, num_devices: int, timeout: float = DEFAULT_TIMEOUT):
        self.num_devices = num_devices
        self.timeout = timeout
        self._cond = threading.Condition()
        self._waiting: dict[int, tuple[Callable[[], bool], str]] = {}
        self._failed: dict[int, BaseException] = {}
        self._first_failure_at: float | None = None
        self._finished: set[int] = set()
        self._mailboxes: dict[tuple[int, int, int], deque] = defaultdict(deque)
        self._groups: dict[frozenset[int], _Group] = {}
        # bumped (under the condition's lock) whenever a waiting device should look again
        self._events = ctypes.c_int64(0)
        self._events_address = ctypes.addressof(self._events)
        self._wait_at_least = wait_function()
        self._exchange = exchange_function()
        self._exchanges: dict[tuple[int, int, int], _Exchange] = {}
        self._ragged_pulls: dict[tuple[int, int], _RaggedPull] = {}  # per call site and device
        self._agreements: dict[int, tuple[RuntimeOp, tuple[int, ...]]] = {}  # for mismatch reports

    # -- device lifecycle -----------------------------------------------------------------

    def device_failed(self, device: int, error: BaseException) -> None:
        with self._cond:
            self._failed.setdefault(device, error)
            if self._first_failure_at is None:
                self._first_failure_at = time.monotonic()
            self._notify()

    def device_finished(self, device: int) -> None:
        with self._cond:
            self._finished.add(device)
            self._notify()

    def stuck_devices(self) -> list[int]:
        """Devices still running ``timeout`` seconds after a device failed.

        A device stuck outside the collectives (in a host callback, in converting an
        argument) never sees its peers' failure; the run gives up on it instead of waiting.
        """
        with self._cond:
            if self._first_failure_at is None or time.monotonic() - self._first_failure_at < self.timeout:
                return []
            return [d for d in range(self.num_devices) if d not in self._finished]

    def _notify(self) -> None:
        """Wake every waiter, in Python and in native code (hold the condition's lock)."""
        self._events.value += 1
        self._cond.notify_all()

    # -- the primitives -----------------------------------------------------------------

    def execute(
        self, device: Device, op: RuntimeOp, operands: list[Buffer], results: list[Buffer]
    ) -> None:
        if op.primitive == "device_id":
            ids = (ctypes.c_int64 * 2)(device.replica, device.partition)
            ctypes.memmove(results[0].address, ids, ctypes.sizeof(ids))
        elif op.primitive == "send":
            self._send(device.index, op, operands)
        elif op.primitive == "recv":
            self._recv(device.index, op, results)
        elif op.primitive in _COLLECTIVES:
            self._collective(device.index, op, operands, results, device)
        else:
            raise CollectiveError(
                f"unknown runtime primitive '{op.primitive}'", device=device.index, op=op
            )

    def _collective(
        self, device: int, op: RuntimeOp, operands: list[Buffer], results: list[Buffer],
        owner: Device | None = None,
    ) -> None:
        membership = op.group_of(device)
        if membership is None:
            if op.primitive == "collective_broadcast":  # devices in no group receive zeros
                _set_flag(results[-1], False)
                return
            raise CollectiveError(
                f"device {device} is in no group of {op.describe()}", device=device, op=op
            )
        members, position = membership
        group = self._groups.get(frozenset(members))
        if group is None:
            with self._cond:
                group = self._groups.setdefault(frozenset(members), _Group(frozenset(members)))
        group.arrivals[device] = (op, members, operands, results)
        if op.primitive == "ragged_all_to_all":  # what moves depends on the operands' contents
            self._ragged_all_to_all(device, op, members, position, group, operands, results, owner)
            return
        if op.primitive == "all_reduce":
            self._all_reduce(device, op, members, position, group, operands, results, owner)
            return
        exchange = self._run_exchange(device, op, members, position, group, operands, results)
        if op.primitive in ("collective_permute", "collective_broadcast"):
            _set_flag(results[-1], _receives(op, device))
        if owner is not None:  # from now on this call site runs natively while all goes well
            owner.enable_fast_path(op.index, exchange.fast_record(self, op, device))

    def _run_exchange(
        self, device: int, op: RuntimeOp, members, position: int, group: _Group,
        operands: list[Buffer], results: list[Buffer], phase: int = 0,
    ) -> _Exchange:
        """Post the buffers, wait for every member, check they agree, copy, depart (or resume
        where the native fast path left off)."""
        exchange = self._exchanges.get((op.index, device, phase))
        if exchange is None:
            exchange = _Exchange(op, members, position, group)
            self._exchanges[(op.index, device, phase)] = exchange
            self._agreements.setdefault(exchange.agreement, (op, members))
        pending = exchange.take_pending()
        if pending is None:
            exchange.post(device, operands, results)
            target = group.arrive(device)
            status = exchange.run(self, target)
        else:
            target, status = pending
        if status != READY and status != DISAGREE:
            self._await(device, op, members, group, target, give_up=True)
            status = exchange.run(self, target)  # the arrival is complete: no more waiting
        if status == DISAGREE:
            self._raise_mismatch(device, op, members, group)
            raise CollectiveMismatch(
                f"device {device}: {op.describe()} (group {list(members)}): the devices run "
                "different collectives", device=device, op=op,
            )
        group.departed(device)  # the exchange counted it
        return exchange

    def _all_reduce(
        self, device: int, op: RuntimeOp, members, position: int, group: _Group,
        operands: list[Buffer], results: list[Buffer], owner: Device | None = None,
    ) -> None:
        """Fold block ``position`` of every member's operands in place (the op's compiled
        kernel) into that block of every member's results, then wait for the other blocks.

        The members stay inside the collective until the last exchange has departed,
        so the operands read and the results written stay alive. After one such call the
        call site runs natively (``spin_wait``'s ``xhlo_fast_kernel`` between the two
        exchanges); when the native run stops in the second exchange, this resumes there.
        """
        second = self._exchanges.get((op.index, device, 1))
        if second is not None and second.pending():
            self._run_exchange(device, op, members, position, group, operands, results, phase=1)
            return
        first = self._run_exchange(device, op, members, position, group, operands, results, phase=0)
        # the peers' buffers as posted in the table (peers on the fast path post natively)
        op.run_kernel([first.table[slot] + offset for slot, offset in _fold_arguments(op, members, position)])
        second = self._run_exchange(device, op, members, position, group, operands, results, phase=1)
        if owner is not None and first.record is None:
            self._enable_native_fold(owner, op, device, members, position, first, second)

    def _enable_native_fold(
        self, owner: Device, op: RuntimeOp, device: int, members, position: int,
        first: _Exchange, second: _Exchange,
    ) -> None:
        native_kernel = op.native_kernel()
        if native_kernel is None:  # a kernel that needs a temporaries arena stays in Python
            return
        kernel, block = native_kernel
        arguments = _fold_arguments(op, members, position)
        plan = [(slot, offset, ctypes.addressof(d)) for (slot, offset), d in zip(arguments, block.descriptors)]
        first.fast_record(self, op, device)
        second.fast_record(self, op, device)
        first.link_fold(second, kernel, block, plan)
        owner.enable_fast_path(op.index, ctypes.addressof(first.record))

    def _ragged_all_to_all(
        self, device: int, op: RuntimeOp, members, position: int, group: _Group,
        operands: list[Buffer], results: list[Buffer], owner: Device | None = None,
    ) -> None:
        """Two exchanges without copies around a pull of every member's updates for this
        one from the buffers the members posted (what moves depends on their contents):
        the members stay until the last has pulled, so the inputs read stay alive. The
        pull is native code (``xhlo_ragged_pull``), called from here on the first call
        and between the native exchanges after it; this resumes where a native run
        stopped, and reports the rows the pull refused."""
        pull = self._ragged_pulls.get((op.index, device))
        second = self._exchanges.get((op.index, device, 1))
        if second is not None and second.pending():  # native code pulled; the departure was late
            self._run_exchange(device, op, members, position, group, operands, results, phase=1)
            pull.raise_refusal(members, device)
            return
        if pull is not None:
            pull.raise_refusal(members, device)
        first = self._run_exchange(device, op, members, position, group, operands, results, phase=0)
        if pull is None:
            pull = self._ragged_pulls[(op.index, device)] = _RaggedPull(op, first, position, len(members))
        pull.run()
        second = self._run_exchange(device, op, members, position, group, operands, results, phase=1)
        pull.raise_refusal(members, device)
        if owner is not None and first.record is None:
            first.fast_record(self, op, device)
            second.fast_record(self, op, device)
            first.link_fold(second, native().ragged_pull, pull, [])
            first.record[R_KERNEL_STATUS] = pull.status_address
            owner.enable_fast_path(op.index, ctypes.addressof(first.record))

    def _mismatch(self, group: _Group, members: tuple[int, ...]) -> str | None:
        """Why the members disagree on the collective they run (from the ids they posted), or None."""
        ids = {member: group.ids[group.slot_of[member]] for member in members}
        if len(set(ids.values())) == 1:
            return None
        lines = []
        for member in sorted(members):
            op, group_members = self._agreements.get(ids[member], (None, ()))
            lines.append(
                f"device {member} runs {op.describe()} with group {list(group_members)}: {op.signature}"
                if op else f"device {member} runs an unknown collective"
            )
        return "the devices run different collectives: " + "; ".join(lines)

    def _raise_mismatch(self, device: int, op: RuntimeOp, members, group: _Group) -> None:
        reason = self._mismatch(group, members)
        if reason:
            raise CollectiveMismatch(
                f"device {device}: {op.describe()} (group {list(members)}): {reason}",
                device=device,
                op=op,
            )

    def _await(
        self, device: int, op: RuntimeOp, members: tuple[int, ...], group: _Group, target: int,
        *, give_up: bool,
    ) -> None:
        """Wait until ``group``'s count reaches ``target``: natively first, then checking peers.

        With ``give_up`` the wait raises when it cannot complete (a peer failed
        or finished, nobody can proceed, the timeout) and poisons the group, so
        peers never read this device's buffers afterwards. Without, it waits for
        members that are certain to come (they passed the previous barrier).
        """
        if group.failure is not None and give_up:
            cls, reason = group.failure
            raise cls(
                f"device {device}: {op.describe()} (group {list(members)}): {reason}",
                device=device,
                op=op,
            )
        start = time.monotonic()
        status = self._wait_at_least(group.count_address, target, self._events_address, self._events.value)
        if status == READY:
            return
        where = f"{op.describe()} (group {list(members)})"

        def ready() -> bool:
            return group.count.value >= target or (give_up and group.failure is not None)

        with self._cond:
            self._waiting[device] = (ready, where)
            self._notify()
        try:
            while True:
                with self._cond:
                    if group.count.value >= target:
                        return
                    seen = self._events.value
                    if give_up:
                        self._check_group(device, op, members, group, target, where, start)
                status = self._wait_at_least(group.count_address, target, self._events_address, seen)
                if status == READY:
                    return
        finally:
            with self._cond:
                del self._waiting[device]

    def _check_group(self, device, op, members, group: _Group, target: int, where: str, start: float):
        """Raise (withdrawing this device's arrival) when the barrier cannot complete."""
        if group.failure is not None:
            cls, reason = group.failure
            raise cls(f"device {device}: {where}: {reason}", device=device, op=op)
        try:
            missing = group.missing(members, target)
            self._check_peers(device, where, missing)
            self._check_progress(device, where)
            if time.monotonic() - start >= self.timeout:
                raise CollectiveTimeout(
                    f"device {device}: {where} timed out after {self.timeout:g} s "
                    f"waiting for device(s) {missing}",
                    device=device,
                )
        except CollectiveError as err:
            if group.withdraw(device, target):
                group.poison((CollectiveAborted, f"device {device} gave up: {err}"))
                self._notify()
                raise
            # the last member arrived meanwhile: the collective goes ahead

    def _send(self, device: int, op: RuntimeOp, operands: list[Buffer]) -> None:
        target = op.target_of(device)
        if target is None:
            return
        payload = [ctypes.string_at(b.address, b.nbytes) for b in operands]
        with self._cond:
            self._mailboxes[(op.channel, device, target)].append((op, payload))
            self._cond.notify_all()

    def _recv(self, device: int, op: RuntimeOp, results: list[Buffer]) -> None:
        *payload, flag = results
        source = op.source_of(device)
        if source is None:
            _set_flag(flag, False)
            return
        box = self._mailboxes[(op.channel, source, device)]
        where = f"{op.describe()} (receiving from device {source} on channel {op.channel})"
        with self._cond:
            self._wait(device, lambda: bool(box), where, lambda: [] if box else [source])
            sent_op, data = box.popleft()
        if [len(d) for d in data] != [b.nbytes for b in payload]:
            raise CollectiveMismatch(
                f"device {device}: {where}: device {source} sent {[len(d) for d in data]} bytes with "
                f"{sent_op.describe()}, expected {[b.nbytes for b in payload]}",
                device=device,
                op=op,
            )
        for buffer, data_bytes in zip(payload, data):
            ctypes.memmove(buffer.address, data_bytes, buffer.nbytes)
        _set_flag(flag, True)

    # -- waiting ------------------------------------------------------------------------

    def _wait(
        self, device: int, ready: Callable[[], bool], where: str, missing: Callable[[], list[int]]
    ) -> None:
        """Wait (holding the condition's lock) until ``ready()``; raise when it cannot come."""
        deadline = time.monotonic() + self.timeout
        self._waiting[device] = (ready, where)
        try:
            while not ready():
                self._check_peers(device, where, missing())
                self._check_progress(device, where)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise CollectiveTimeout(
                        f"device {device}: {where} timed out after {self.timeout:g} s "
                        f"waiting for device(s) {missing()}",
                        device=device,
                    )
                self._cond.wait(remaining)
        finally:
            del self._waiting[device]

    def _check_peers(self, device: int, where: str, missing: Sequence[int]) -> None:
        for peer in missing:
            if peer in self._failed:
                raise CollectiveAborted(
                    f"device {device}: {where} aborted: device {peer} failed: {self._failed[peer]}",
                    device=device,
                )
            if peer in self._finished:
                raise CollectiveMismatch(
                    f"device {device}: {where}: device {peer} finished its program without joining "
                    "(the devices ran different collectives)",
                    device=device,
                )

    def _check_progress(self, device: int, where: str) -> None:
        """Every live device waits and none can go on: the devices run different collectives."""
        alive = [
            d for d in range(self.num_devices) if d not in self._failed and d not in self._finished
        ]
        if not all(d in self._waiting for d in alive):
            return
        if any(ready() for ready, _ in self._waiting.values()):
            return
        waits = "; ".join(f"device {d} waits in {w}" for d, (_, w) in sorted(self._waiting.items()))
        raise CollectiveMismatch(
            f"device {device}: {where}: no device can proceed, the devices run mismatched collectives: {waits}",
            device=device,
        )


# -- ragged all-to-all: what a member pulls from its peers -----------------------------------


_PULL = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _RaggedPull:
    """The argument block of one device's native pull (``spin_wait.xhlo_ragged_pull``)."""

    def __init__(self, op: RuntimeOp, first: _Exchange, position: int, size: int):
        self.plan = RaggedPlan(op)
        self.packed = (ctypes.c_int64 * (RG_DEST + 1))()
        fields = self.packed
        fields[RG_TABLE], fields[RG_STRIDE] = first.table_address, first.stride
        fields[RG_POSITION], fields[RG_SIZE], fields[RG_ROW] = position, size, self.plan.row_bytes
        fields[RG_IN_ROWS], fields[RG_OUT_ROWS] = self.plan.input_rows, self.plan.output_rows
        fields[RG_ITEMSIZE], fields[RG_UPDATES] = op.operand_itemsize[3], self.plan.updates
        fields[RG_RESULT_BYTES] = op.result_bytes[0]
        self.status_address = ctypes.addressof(fields) + 8 * RG_STATUS

    def run(self) -> None:
        """Pull, from Python (between exchanges Python ran)."""
        _PULL(native().ragged_pull)(ctypes.addressof(self.packed))

    def raise_refusal(self, members, me: int) -> None:
        """Raise what the native pull refused (rows out of bounds), if it refused; resets it."""
        fields = self.packed
        if not fields[RG_STATUS]:
            return
        fields[RG_STATUS] = 0
        raise self.plan.out_of_bounds(
            members[fields[RG_SENDER]], me, fields[RG_START], fields[RG_ROWS], fields[RG_DEST]
        )


class RaggedPlan:
    """Shapes of a ragged all-to-all and how to read its offset/size operands."""

    def __init__(self, op: RuntimeOp):
        self.op = op
        self.updates = op.attrs["num_updates"]
        self.input_rows = op.attrs["input_rows"]
        self.output_rows = op.attrs["output_rows"]
        self.row_bytes = op.operand_bytes[0] // self.input_rows if self.input_rows else 0

    def metadata_dtype(self, index: int) -> type:
        """The integer type of operand ``index`` (2..5: offsets and sizes)."""
        return {4: np.int32, 8: np.int64, 2: np.int16, 1: np.int8}[self.op.operand_itemsize[index]]

    def metadata(self, buffers: Sequence[Buffer], index: int) -> np.ndarray:
        """Operand ``index`` (2..5: offsets and sizes) as int64, read from memory."""
        return buffers[index].view(self.metadata_dtype(index)).astype(np.int64)

    def out_of_bounds(self, sender: int, receiver: int, start: int, rows: int, dest: int) -> CollectiveError:
        return CollectiveError(
            f"{self.op.describe()}: device {sender} sends rows [{start}, {start + rows}) of its "
            f"{self.input_rows}-row input to rows [{dest}, {dest + rows}) of device {receiver}'s "
            f"{self.output_rows}-row output: out of bounds",
            device=receiver,
            op=self.op,
        )


_COLLECTIVES = (
    "all_gather",
    "all_reduce",
    "all_to_all",
    "collective_permute",
    "collective_broadcast",
    "ragged_all_to_all",
)


# -- running a program on every device ------------------------------------------------------


class DeviceThreads:
    """Long-lived threads, one per device, that run one multi-device call at a time.

    Reusing threads keeps their stacks and malloc arenas warm: a fresh thread
    per call pays thread start-up and page faults on every large buffer the
    program allocates, which dominates small collectives and slows large ones.
    """

    def __init__(self, count: int):
        self.busy = threading.Lock()
        self._queues = [queue.SimpleQueue() for _ in range(count)]
        for d, tasks in enumerate(self._queues):
            threading.Thread(target=self._serve, args=(tasks,), name=f"xhlo-device-{d}", daemon=True).start()

    @staticmethod
    def _serve(tasks: queue.SimpleQueue) -> None:
        while True:
            task, done = tasks.get()
            try:
                task()
            finally:
                del task  # do not keep the last program (and its JIT engine) alive
                done.release()

    def run(self, tasks: Sequence[Callable[[], None]], give_up: Callable[[], bool]) -> bool:
        """Run the tasks; False if ``give_up`` said to stop waiting before all finished."""
        done = threading.Semaphore(0)
        for pending, task in zip(self._queues, tasks):
            pending.put((task, done))
        return all(_wait(lambda: done.acquire(timeout=_GIVE_UP_POLL), give_up) for _ in tasks)


_device_threads: dict[int, DeviceThreads] = {}
_device_threads_lock = threading.Lock()
_GIVE_UP_POLL = 0.1  # seconds between looks at give_up while devices run


def _wait(finished: Callable[[], bool], give_up: Callable[[], bool]) -> bool:
    while not finished():
        if give_up():
            return False
    return True


def run_on_device_threads(tasks: Sequence[Callable[[], None]], give_up: Callable[[], bool]) -> None:
    """Run every task on its own thread and wait for all (tasks must not raise), or until
    ``give_up`` returns True: the threads still running are then left to themselves."""
    with _device_threads_lock:
        pool = _device_threads.get(len(tasks))
        if pool is None:
            pool = _device_threads[len(tasks)] = DeviceThreads(len(tasks))
    if pool.busy.acquire(blocking=False):
        try:
            if not pool.run(tasks, give_up):
                with _device_threads_lock:  # a thread of it is stuck: the next run gets new ones
                    if _device_threads.get(len(tasks)) is pool:
                        del _device_threads[len(tasks)]
        finally:
            pool.busy.release()
        return
    # a concurrent run: fresh threads
    threads = [threading.Thread(target=task, daemon=True) for task in tasks]
    for thread in threads:
        thread.start()
    for thread in threads:
        if not _wait(lambda t=thread: _joined(t), give_up):
            return


def _joined(thread: threading.Thread) -> bool:
    thread.join(_GIVE_UP_POLL)
    return not thread.is_alive()


def run_replicated(
    exe, args_per_device: Sequence[Sequence], *, entry: str, timeout: float | None = None
) -> list[tuple]:
    """Run ``entry`` of ``exe`` on all its devices, one thread each; one result tuple per device."""
    num_devices = exe.num_replicas * exe.num_partitions
    if len(args_per_device) != num_devices:
        raise ValueError(
            f"the program runs on {num_devices} devices ({exe.num_replicas} replicas x "
            f"{exe.num_partitions} partitions) but {len(args_per_device)} argument tuples were given"
        )
    binding = getattr(exe, "_runtime", None)
    world = InProcessWorld(
        num_devices, timeout or (binding.timeout if binding else DEFAULT_TIMEOUT)
    )
    outputs: list[tuple | None] = [None] * num_devices
    errors: dict[int, BaseException] = {}

    def run_device(index: int) -> None:
        device = Device(index, exe.num_replicas, exe.num_partitions, world)
        try:
            with activate(device):
                result = exe.call_function(entry, *args_per_device[index])
            outputs[index] = result if isinstance(result, tuple) else (result,)
        except BaseException as err:  # noqa: BLE001 - reported for the whole run below
            errors[index] = err
            world.device_failed(index, err)
        finally:
            world.device_finished(index)

    run_on_device_threads([lambda d=d: run_device(d) for d in range(num_devices)],
                          give_up=lambda: bool(world.stuck_devices()))
    failures = dict(errors)  # a copy: a stuck device's thread may still add to ``errors``
    for device in world.stuck_devices():
        failures[device] = CollectiveTimeout(
            f"device {device} did not finish within {world.timeout:g} s of the first failure: it is "
            "stuck outside the collectives (in a host callback, or converting an argument); "
            "its thread is left running", device=device)
    if failures:
        raise _run_error(failures, num_devices)
    return outputs


def _run_error(errors: dict[int, BaseException], num_devices: int) -> CollectiveError:
    """One error for the run: the devices that failed first, then those that gave up."""
    primary = {d: e for d, e in errors.items() if not isinstance(e, CollectiveAborted)} or errors
    order = sorted(primary) + sorted(d for d in errors if d not in primary)
    lines = [f"  device {d}: {type(errors[d]).__name__}: {errors[d]}" for d in order]
    first = errors[order[0]]
    if all(isinstance(e, ValueError) for e in primary.values()):  # bad arguments (before any collective)
        cls = DeviceArgumentError
    else:
        cls = type(first) if isinstance(first, CollectiveError) else CollectiveError
    summary = (
        f"{len(errors)} of {num_devices} device(s) failed; first failure on device {order[0]}:\n"
    )
    error = cls(
        summary + "\n".join(lines), device=order[0], op=getattr(first, "op", None), errors=errors
    )
    error.__cause__ = first
    return error

"""The in-process transport: every device is a thread, and memory is shared.

A collective is a *rendezvous* of the devices of one group: each member posts
the addresses of its buffers and waits until all members have arrived; then
every member *pulls* what it needs from its peers' buffers into its own
(``ctypes.memmove`` releases the GIL, so members copy in parallel) and waits
until all have pulled, so no buffer is released while a peer still reads it.
Rendezvous are keyed by the set of members and a per-device count of the
collectives it ran on that set, so independent groups never interfere.

Nothing waits forever. A waiting device gives up with a ``CollectiveError``

* at once when a peer it waits for failed (``CollectiveAborted``, naming it)
  or finished its program without joining (``CollectiveMismatch``);
* when the members disagree on the op (signature or group order), or when
  every live device waits and none can proceed (``CollectiveMismatch``,
  listing what each device waits in);
* after ``timeout`` seconds otherwise (``CollectiveTimeout``).

A device that gives up poisons the rendezvous, so peers that already posted
their buffers fail too instead of reading memory the leaver may reuse.
``send``/``recv`` use mailboxes: a send copies its payload and returns, a
recv waits for the payload of its source.
"""

from __future__ import annotations

import ctypes
import queue
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Sequence

import numpy as np

from .errors import CollectiveAborted, CollectiveError, CollectiveMismatch, CollectiveTimeout
from .program import DEFAULT_TIMEOUT, Buffer, Device, RuntimeOp, activate

_Arrival = tuple[RuntimeOp, tuple[int, ...], list[Buffer], list[Buffer]]


class _Rendezvous:
    def __init__(self, key: tuple, members: tuple[int, ...]):
        self.key = key
        self.members = members
        self.arrivals: dict[int, _Arrival] = {}
        self.failure: tuple[type[CollectiveError], str] | None = None
        self.departed = 0

    @property
    def complete(self) -> bool:
        return len(self.arrivals) == len(self.members)

    def ready(self) -> bool:
        return self.complete or self.failure is not None

    def missing(self) -> list[int]:
        return [m for m in self.members if m not in self.arrivals]

    def operands(self, device: int) -> list[Buffer]:
        return self.arrivals[device][2]

    def results(self, device: int) -> list[Buffer]:
        return self.arrivals[device][3]


def _set_flag(buffer: Buffer, value: bool) -> None:
    ctypes.memset(buffer.address, int(value), 1)


def _mismatch(rendezvous: _Rendezvous) -> str | None:
    """Why the arrived members disagree, or None."""
    seen = {(op.signature, members) for op, members, _, _ in rendezvous.arrivals.values()}
    if len(seen) == 1:
        return None
    lines = [
        f"device {d} runs {op.describe()} with group {list(members)}: {op.signature}"
        for d, (op, members, _, _) in sorted(rendezvous.arrivals.items())
    ]
    return "the devices run different collectives: " + "; ".join(lines)


class InProcessWorld:
    """The shared state of one multi-device run in this process."""

    def __init__(self, num_devices: int, timeout: float = DEFAULT_TIMEOUT):
        self.num_devices = num_devices
        self.timeout = timeout
        self._cond = threading.Condition()
        self._pending: dict[tuple, _Rendezvous] = {}
        self._sequence: dict[tuple, int] = defaultdict(int)
        self._waiting: dict[int, tuple[Callable[[], bool], str]] = {}
        self._failed: dict[int, BaseException] = {}
        self._finished: set[int] = set()
        self._mailboxes: dict[tuple[int, int, int], deque] = defaultdict(deque)

    # -- device lifecycle -----------------------------------------------------------------

    def device_failed(self, device: int, error: BaseException) -> None:
        with self._cond:
            self._failed.setdefault(device, error)
            self._cond.notify_all()

    def device_finished(self, device: int) -> None:
        with self._cond:
            self._finished.add(device)
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
        elif op.primitive in _PULLS:
            self._collective(device.index, op, operands, results)
        else:
            raise CollectiveError(
                f"unknown runtime primitive '{op.primitive}'", device=device.index, op=op
            )

    def _collective(
        self, device: int, op: RuntimeOp, operands: list[Buffer], results: list[Buffer]
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
        rendezvous = self._arrive(device, op, members, operands, results)
        try:
            _PULLS[op.primitive](op, rendezvous, device, position)
        finally:
            self._depart(rendezvous)

    def _arrive(self, device, op, members, operands, results) -> _Rendezvous:
        with self._cond:
            group = frozenset(members)
            count = self._sequence[(device, group)]
            self._sequence[(device, group)] = count + 1
            key = (group, count)
            rendezvous = self._pending.get(key)
            if rendezvous is None:
                rendezvous = self._pending[key] = _Rendezvous(key, members)
            rendezvous.arrivals[device] = (op, members, operands, results)
            if rendezvous.complete and rendezvous.failure is None:
                reason = _mismatch(rendezvous)
                if reason:
                    rendezvous.failure = (CollectiveMismatch, reason)
                self._cond.notify_all()
            where = f"{op.describe()} (group {list(members)})"
            try:
                self._wait(device, rendezvous.ready, where, rendezvous.missing)
            except CollectiveError as err:
                if rendezvous.failure is None:  # poison: peers must not read our buffers later
                    rendezvous.failure = (CollectiveAborted, f"device {device} gave up: {err}")
                    self._cond.notify_all()
                raise
            if rendezvous.failure is not None:
                cls, reason = rendezvous.failure
                raise cls(f"device {device}: {where}: {reason}", device=device, op=op)
            return rendezvous

    def _depart(self, rendezvous: _Rendezvous) -> None:
        with self._cond:
            rendezvous.departed += 1
            self._cond.notify_all()
            while rendezvous.departed < len(rendezvous.members):
                self._cond.wait()
            self._pending.pop(rendezvous.key, None)

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


# -- what each member pulls from its peers ------------------------------------------------


def _pull_all_gather(op: RuntimeOp, rv: _Rendezvous, me: int, position: int) -> None:
    for i, out in enumerate(rv.results(me)):
        size = rv.operands(me)[i].nbytes
        for j, member in enumerate(rv.members):
            ctypes.memmove(out.address + j * size, rv.operands(member)[i].address, size)


def _pull_all_to_all(op: RuntimeOp, rv: _Rendezvous, me: int, position: int) -> None:
    for i, out in enumerate(rv.results(me)):
        block = out.nbytes // len(rv.members)
        for j, member in enumerate(rv.members):
            ctypes.memmove(
                out.address + j * block, rv.operands(member)[i].address + position * block, block
            )


def _pull_permute(op: RuntimeOp, rv: _Rendezvous, me: int, position: int) -> None:
    out, flag = rv.results(me)
    source = op.source_of(me)
    if source is not None:
        ctypes.memmove(out.address, rv.operands(source)[0].address, out.nbytes)
    _set_flag(flag, source is not None)


def _pull_broadcast(op: RuntimeOp, rv: _Rendezvous, me: int, position: int) -> None:
    out, flag = rv.results(me)
    ctypes.memmove(out.address, rv.operands(rv.members[0])[0].address, out.nbytes)
    _set_flag(flag, True)


def _pull_ragged(op: RuntimeOp, rv: _Rendezvous, me: int, position: int) -> None:
    (out,) = rv.results(me)
    mine = rv.operands(me)
    ctypes.memmove(out.address, mine[1].address, out.nbytes)  # untouched rows keep `output`
    plan = RaggedPlan(op)
    for j, member in enumerate(rv.members):
        peer = rv.operands(member)
        for source_row, dest_row, rows in plan.updates_from(
            peer, position, sender=member, receiver=me
        ):
            ctypes.memmove(
                out.address + dest_row * plan.row_bytes,
                peer[0].address + source_row * plan.row_bytes,
                rows * plan.row_bytes,
            )


class RaggedPlan:
    """Shapes of a ragged all-to-all and how to read its offset/size operands."""

    def __init__(self, op: RuntimeOp):
        self.op = op
        self.updates = op.attrs["num_updates"]
        self.input_rows = op.attrs["input_rows"]
        self.output_rows = op.attrs["output_rows"]
        self.row_bytes = op.operand_bytes[0] // self.input_rows if self.input_rows else 0

    def metadata(self, buffers: Sequence[Buffer], index: int) -> np.ndarray:
        """Operand ``index`` (2..5: offsets and sizes) as int64, read from memory."""
        itemsize = self.op.operand_itemsize[index]
        dtype = {4: np.int32, 8: np.int64, 2: np.int16, 1: np.int8}[itemsize]
        raw = (ctypes.c_char * buffers[index].nbytes).from_address(buffers[index].address)
        return np.frombuffer(raw, dtype=dtype).astype(np.int64)

    def updates_from(self, sender_operands, receiver_position: int, *, sender: int, receiver: int):
        """(input row, output row, rows) of every non-empty update ``sender`` sends ``receiver``."""
        input_offsets = self.metadata(sender_operands, 2)
        send_sizes = self.metadata(sender_operands, 3)
        output_offsets = self.metadata(sender_operands, 4)
        first = receiver_position * self.updates
        for k in range(first, first + self.updates):
            rows = int(send_sizes[k])
            if rows == 0:
                continue
            start, dest = int(input_offsets[k]), int(output_offsets[k])
            if (
                rows < 0
                or start < 0
                or dest < 0
                or start + rows > self.input_rows
                or dest + rows > self.output_rows
            ):
                raise CollectiveError(
                    f"{self.op.describe()}: device {sender} sends rows [{start}, {start + rows}) of its "
                    f"{self.input_rows}-row input to rows [{dest}, {dest + rows}) of device {receiver}'s "
                    f"{self.output_rows}-row output: out of bounds",
                    device=receiver,
                    op=self.op,
                )
            yield start, dest, rows


_PULLS = {
    "all_gather": _pull_all_gather,
    "all_to_all": _pull_all_to_all,
    "collective_permute": _pull_permute,
    "collective_broadcast": _pull_broadcast,
    "ragged_all_to_all": _pull_ragged,
}


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

    def run(self, tasks: Sequence[Callable[[], None]]) -> None:
        done = threading.Semaphore(0)
        for pending, task in zip(self._queues, tasks):
            pending.put((task, done))
        for _ in tasks:
            done.acquire()


_device_threads: dict[int, DeviceThreads] = {}
_device_threads_lock = threading.Lock()


def run_on_device_threads(tasks: Sequence[Callable[[], None]]) -> None:
    """Run every task on its own thread and wait for all (tasks must not raise)."""
    with _device_threads_lock:
        pool = _device_threads.get(len(tasks))
        if pool is None:
            pool = _device_threads[len(tasks)] = DeviceThreads(len(tasks))
    if pool.busy.acquire(blocking=False):
        try:
            pool.run(tasks)
        finally:
            pool.busy.release()
        return
    threads = [threading.Thread(target=task) for task in tasks]  # a concurrent run: fresh threads
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


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

    run_on_device_threads([lambda d=d: run_device(d) for d in range(num_devices)])
    if errors:
        raise _run_error(errors, num_devices)
    return outputs


def _run_error(errors: dict[int, BaseException], num_devices: int) -> CollectiveError:
    """One error for the run: the devices that failed first, then those that gave up."""
    primary = {d: e for d, e in errors.items() if not isinstance(e, CollectiveAborted)} or errors
    order = sorted(primary) + sorted(d for d in errors if d not in primary)
    lines = [f"  device {d}: {type(errors[d]).__name__}: {errors[d]}" for d in order]
    first = errors[order[0]]
    cls = type(first) if isinstance(first, CollectiveError) else CollectiveError
    summary = (
        f"{len(errors)} of {num_devices} device(s) failed; first failure on device {order[0]}:\n"
    )
    error = cls(
        summary + "\n".join(lines), device=order[0], op=getattr(first, "op", None), errors=errors
    )
    error.__cause__ = first
    return error

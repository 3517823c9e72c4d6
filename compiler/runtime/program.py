"""The runtime ABI: the ops a compiled program calls, and how a call reaches a transport.

``xhlo-lower-runtime-calls`` leaves call site ``k`` as a call of the external
function ``@xhlo_rt_op<k>(memref...)`` and describes it in the module attribute
``xhlo.runtime_calls[k]``; ``xhlo-runtime-fast-path`` makes that call try the
native ``xhlo_rt_fast`` first (``spin_wait``) and call ``xhlo_rt_slow_op<k>``
when it cannot finish. ``bind`` reads the table into ``RuntimeOp``s and
registers one ctypes callback per call site as ``xhlo_rt_slow_op<k>``. A
callback turns the memref descriptors into ``Buffer`` addresses and hands the
op to the transport of the *current device* (a thread-local set by whoever
runs the program: ``run_replicated`` threads, the MPI driver, or a one-device
call). The transports (``inprocess``, ``mpi``) implement the primitives; the
in-process one also hands the device's fast-path records to native code.

A callback must never raise into JIT code: a failure is recorded on the
device, reported to the transport (so peers stop waiting for it), and every
later runtime call of that device returns zeros at once. The error is raised
in Python when the JIT call returns.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import math
import threading
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, Protocol

import numpy as np

from .._mlir import ir
from ..errors import format_location
from .errors import CollectiveError, DeviceError
from .host import HOST_PRIMITIVES, HostQueues
from .spin_wait import native

RUNTIME_CALLS_ATTR = "xhlo.runtime_calls"
SLOW_SYMBOL_PREFIX = "xhlo_rt_slow_op"  # + call site index: the Python callback
FAST_FUNCTION = "xhlo_rt_fast"  # the native fast path (xhlo.runtime.spin_wait)
DEFAULT_TIMEOUT = 300.0  # seconds a device waits for its peers in one collective


def packed_function(program, name: str) -> int:
    """Address of the ``_mlir_<name>`` wrapper (arguments and result through a pointer array), 0 if none."""
    library = getattr(program, "_library", None)  # a program the disk cache loaded
    try:
        if library is not None:
            return ctypes.cast(getattr(library, f"_mlir_{name}"), ctypes.c_void_p).value or 0
        return program.raw_lookup(name) or 0  # the ExecutionEngine adds the _mlir_ prefix
    except (AttributeError, RuntimeError, ValueError):
        return 0


def free_cached_blocks(program) -> None:
    """Free the heap blocks ``xhlo-cache-large-allocations`` parked for reuse in ``program``
    (called when its Executable is released; a program without the cache has no such function)."""
    address = packed_function(program, "xhlo_free_cached_blocks")
    if address:
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)(None)


class Buffer(NamedTuple):
    address: int
    nbytes: int

    def view(self, dtype=np.uint8, shape=None) -> np.ndarray:
        """The buffer's memory as a writable numpy array of ``dtype`` (no copy)."""
        if self.nbytes == 0:
            array = np.empty(0, dtype)
        else:
            raw = (ctypes.c_char * self.nbytes).from_address(self.address)
            array = np.frombuffer(raw, dtype)
        return array if shape is None else array.reshape(shape)


@dataclasses.dataclass
class RuntimeOp:
    """One runtime call site: which primitive, between which devices, on how many bytes."""

    index: int
    primitive: str
    op_name: str
    location: str
    signature: str
    groups: tuple[tuple[int, ...], ...] = ()
    pairs: tuple[tuple[int, int], ...] = ()
    channel: int = 0
    operand_bytes: tuple[int, ...] = ()
    operand_itemsize: tuple[int, ...] = ()
    result_bytes: tuple[int, ...] = ()
    result_itemsize: tuple[int, ...] = ()
    attrs: dict[str, int] = dataclasses.field(default_factory=dict)
    # the program whose compiled kernel the op runs (``all_reduce``: the fold): a weak
    # reference to its Executable, set by ``RuntimeBinding.attach_kernels``
    kernel_owner: Callable[[], Any] | None = None

    def __post_init__(self):
        self._membership = {d: (g, i) for g in self.groups for i, d in enumerate(g)}
        self._source = {t: s for s, t in self.pairs}
        self._targets = {s: t for s, t in self.pairs}

    def describe(self) -> str:
        return f"{self.op_name} at {self.location}"

    def group_of(self, device: int) -> tuple[tuple[int, ...], int] | None:
        """(members in group order, position of ``device``), or None outside every group."""
        return self._membership.get(device)

    def source_of(self, device: int) -> int | None:
        return self._source.get(device)

    def target_of(self, device: int) -> int | None:
        return self._targets.get(device)

    def sender_position(self, device: int) -> int | None:
        """The position in ``device``'s group of the member whose operand becomes its result
        (collective_broadcast: the root, the group's first member; collective_permute: its
        source), None if none does."""
        members, _ = self._membership[device]
        if self.primitive == "collective_broadcast":
            return 0
        source = self._source.get(device)
        return None if source is None else members.index(source)

    @property
    def num_buffers(self) -> int:
        return len(self.operand_bytes) + len(self.result_bytes)

    def _kernel_program(self):
        program = self.kernel_owner() if self.kernel_owner else None
        if program is None:
            raise CollectiveError(f"{self.describe()}: its compiled kernel is gone", op=self)
        return program

    def run_kernel(self, addresses: list[int]) -> None:
        """Run the op's compiled kernel on the buffers at ``addresses`` (inputs, then outputs)."""
        self._kernel_program().call_kernel(self.attrs["fold"], addresses)

    def native_kernel(self):
        """``(packed entry address, argument block)`` for native code to call the kernel
        (``Executable.native_kernel``), or None when it cannot be called that way."""
        return self._kernel_program().native_kernel(self.attrs["fold"])


class Transport(Protocol):
    """Moves the bytes of a runtime op between devices (threads or MPI ranks)."""

    def execute(
        self, device: Device, op: RuntimeOp, operands: list[Buffer], results: list[Buffer]
    ) -> None: ...

    def device_failed(self, device: int, error: BaseException) -> None: ...


class Device:
    """One device of a run: its ids, its transport and its first failure."""

    def __init__(self, index: int, num_replicas: int, num_partitions: int, transport: Transport):
        self.index = index
        self.replica, self.partition = divmod(index, num_partitions)
        self.num_replicas = num_replicas
        self.num_partitions = num_partitions
        self.transport = transport
        self.error: BaseException | None = None
        self.running = False  # a program runs as this device (a host call may start another)
        self._fast_table: ctypes.Array | None = None

    def fast_table(self, num_ops: int) -> ctypes.Array:
        """``[num_ops, record address per call site (0: none)]``: what ``xhlo_rt_fast`` may
        run natively for this device (the in-process transport fills it)."""
        if self._fast_table is None or len(self._fast_table) != num_ops + 1:
            self._fast_table = (ctypes.c_int64 * (num_ops + 1))(num_ops if self.error is None else 0)
        return self._fast_table

    def enable_fast_path(self, op_index: int, record_address: int) -> None:
        if self._fast_table is not None and self.error is None and op_index < len(self._fast_table) - 1:
            self._fast_table[op_index + 1] = record_address

    def execute(
        self, op: RuntimeOp, operands: list[Buffer], results: list[Buffer], handler=None
    ) -> None:
        """Run ``op`` with ``handler`` (default: the transport), never raising into JIT code."""
        if self.error is None:
            try:
                (handler or self.transport.execute)(self, op, operands, results)
                return
            except BaseException as err:  # noqa: BLE001 - must not unwind into JIT code
                self.fail(err, op)
        for buffer in results:  # a failed device computes on zeros until its program returns
            ctypes.memset(buffer.address, 0, buffer.nbytes)

    def fail(self, err: BaseException, op: RuntimeOp | None = None) -> None:
        if self.error is not None:
            return
        if not isinstance(err, CollectiveError):
            where = f" in {op.describe()}" if op else ""
            wrapped = DeviceError(
                f"device {self.index}{where}: {type(err).__name__}: {err}", device=self.index, op=op
            )
            wrapped.__cause__ = err
            err = wrapped
        self.error = err
        if self._fast_table is not None:
            self._fast_table[0] = 0  # every later call goes through ``execute``: zeros
        self.transport.device_failed(self.index, err)


_local = threading.local()


def current_device() -> Device | None:
    return getattr(_local, "device", None)


@contextlib.contextmanager
def activate(device: Device) -> Iterator[Device]:
    """Make ``device`` the one runtime calls of this thread act for."""
    previous = current_device()
    _local.device = device
    try:
        yield device
    finally:
        _local.device = previous


# -- reading the op table --------------------------------------------------------------


def _decode(attr: ir.Attribute):
    for cast, convert in (
        (ir.StringAttr, lambda a: a.value),
        (ir.BoolAttr, lambda a: a.value),
        (ir.IntegerAttr, lambda a: a.value),
        (ir.DenseI64ArrayAttr, lambda a: tuple(a)),
        (ir.DenseIntElementsAttr, _dense_rows),
    ):
        try:
            return convert(cast(attr))
        except (ValueError, TypeError):
            continue
    return str(attr)


def _dense_rows(attr: ir.DenseIntElementsAttr) -> tuple[tuple[int, ...], ...]:
    shape = ir.RankedTensorType(attr.type).shape
    if not shape or 0 in shape:
        return ()
    values = np.full(shape, attr[0]) if attr.is_splat else np.array(attr).reshape(shape)
    return tuple(tuple(int(v) for v in row) for row in values.reshape(shape[0], -1))


_FIELDS = {f.name for f in dataclasses.fields(RuntimeOp)}


def ops_from_module(module: ir.Module, filename: str | None = None) -> list[RuntimeOp]:
    """The runtime call table ``xhlo-lower-runtime-calls`` left in ``module``."""
    attrs = module.operation.attributes
    if RUNTIME_CALLS_ATTR not in attrs:
        return []
    ops = []
    for entry in ir.ArrayAttr(attrs[RUNTIME_CALLS_ATTR]):
        fields = {a.name: _decode(a.attr) for a in ir.DictAttr(entry)}
        fields["op_name"] = fields.pop("op")
        fields["location"] = format_location(fields["location"], filename)
        known = {k: v for k, v in fields.items() if k in _FIELDS}
        known["attrs"] = {k: v for k, v in fields.items() if k not in _FIELDS}
        ops.append(RuntimeOp(**known))
    return ops


def check_timeout(name: str, seconds) -> float:
    """``seconds`` as a float: a positive finite number (a peer waits this long)."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float, np.integer, np.floating)) \
            or not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {seconds!r}")
    return float(seconds)


def record_device_counts(
    module: ir.Module, num_replicas: int | None, num_partitions: int | None
) -> None:
    """Write explicit device counts into the module, where the collective passes read them."""
    i32 = ir.IntegerType.get_signless(32)
    for name, value in (
        ("mhlo.num_replicas", num_replicas),
        ("mhlo.num_partitions", num_partitions),
    ):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name.split('.')[1]} must be an integer of at least 1, got {value!r}")
            module.operation.attributes[name] = ir.IntegerAttr.get(i32, value)


# -- binding to an ExecutionEngine -------------------------------------------------------


class _Prefix(ctypes.Structure):
    """The fields every ranked memref descriptor starts with."""

    _fields_ = [
        ("allocated", ctypes.c_void_p),
        ("aligned", ctypes.c_void_p),
        ("offset", ctypes.c_int64),
    ]


def _buffer(descriptor: int, nbytes: int, itemsize: int) -> Buffer:
    prefix = _Prefix.from_address(descriptor)
    return Buffer((prefix.aligned or 0) + prefix.offset * itemsize, nbytes)


class RuntimeBinding:
    """The runtime ops of one compiled program, with their callbacks registered."""

    def __init__(
        self,
        ops: list[RuntimeOp],
        num_replicas: int,
        num_partitions: int,
        timeout: float,
        layout=None,
    ):
        self.ops = ops
        self.layout = layout  # sharding.ShardLayout of programs localized from a shard_map
        self.num_replicas = num_replicas
        self.num_partitions = num_partitions
        self.timeout = timeout
        self.host = HostQueues(timeout)
        self._callbacks = []  # the ctypes objects must outlive the engine
        self.python_calls = 0  # runtime calls that entered Python (not the native fast path)
        self._count_lock = threading.Lock()

    @property
    def num_devices(self) -> int:
        return self.num_replicas * self.num_partitions

    def attach_kernels(self, owner: Callable[[], Any]) -> None:
        """``owner()`` (a weak reference to the Executable) runs public functions on raw buffers."""
        for op in self.ops:
            if "fold" in op.attrs:
                op.kernel_owner = owner

    def symbols(self) -> dict[str, int]:
        """The call sites' entries for the JIT to resolve: each site's Python callback
        and the native fast path (``xhlo-runtime-fast-path`` defines the call sites)."""
        table = {FAST_FUNCTION: native().fast}
        for op in self.ops:
            callback = self._callback(op)
            self._callbacks.append(callback)
            table[f"_mlir_ciface_{SLOW_SYMBOL_PREFIX}{op.index}"] = ctypes.cast(callback, ctypes.c_void_p).value
        return table

    def _callback(self, op: RuntimeOp):
        prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * op.num_buffers))
        sizes = list(zip(op.operand_bytes, op.operand_itemsize)) + list(
            zip(op.result_bytes, op.result_itemsize)
        )
        operand_count = len(op.operand_bytes)
        handler = self.host.execute if op.primitive in HOST_PRIMITIVES else None

        def call(*descriptors):
            with self._count_lock:
                self.python_calls += 1
            device = current_device()
            if device is None:  # cannot happen through invoke(); never raise into JIT code
                return
            buffers = [_buffer(d, n, item) for d, (n, item) in zip(descriptors, sizes)]
            device.execute(op, buffers[:operand_count], buffers[operand_count:], handler)

        return prototype(call)

    def invoke(self, func, packed) -> None:
        """Run a JIT entry point as the current device (or as the only device)."""
        device = current_device()
        if device is not None and not device.running:
            self._run_as(device, func, packed)
        else:  # called directly, or from a host call of a running program: a device of its own
            if self.num_devices != 1:
                where = f" from a host call on device {device.index}" if device is not None else ""
                raise CollectiveError(
                    f"this program runs on {self.num_devices} devices ({self.num_replicas} replicas x "
                    f"{self.num_partitions} partitions): use Executable.run_replicated or mpiexec, "
                    f"not a direct call{where}"
                )
            from .inprocess import InProcessWorld

            device = Device(0, 1, 1, InProcessWorld(1, self.timeout))
            with activate(device):
                self._run_as(device, func, packed)
        if device.error is not None:
            raise device.error

    def _run_as(self, device: Device, func, packed) -> None:
        """Run with ``device``'s fast-path records as this thread's native context."""
        set_context = native().set_context
        previous = set_context(ctypes.addressof(device.fast_table(len(self.ops))))
        device.running = True
        try:
            func(packed)
        finally:
            device.running = False
            set_context(previous)


def bind(module: ir.Module, *, timeout: float | None = None, filename: str | None = None) -> RuntimeBinding | None:
    """The runtime of ``module``'s collectives and host calls (None: a one-device program);
    its ``symbols()`` go to the JIT."""
    from .sharding import layout_from_module

    ops = ops_from_module(module, filename)
    layout = layout_from_module(module)
    if not ops and layout is None:
        return None
    attrs = module.operation.attributes

    def count(name: str) -> int:
        return ir.IntegerAttr(attrs[name]).value if name in attrs else 1

    return RuntimeBinding(
        ops,
        count("mhlo.num_replicas"),
        count("mhlo.num_partitions"),
        timeout or DEFAULT_TIMEOUT,
        layout,
    )

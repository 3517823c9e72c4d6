"""Host calls: infeed and outfeed queues, and custom calls to Python functions.

``xhlo-lower-host-calls`` turns ``stablehlo.infeed``/``outfeed`` and custom
calls of registered targets into runtime calls; this module serves them. Each
device of an executable has one infeed and one outfeed FIFO of host arrays
(XLA's ``TransferToInfeed``/``TransferFromOutfeed``). A custom call runs the
function registered under its target name on numpy copies of its operands.

These calls only touch the calling device's own queues, so they work the same
in a one-device call, in ``run_replicated`` threads and under MPI.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence

import numpy as np

from .. import dtypes

HOST_PRIMITIVES = ("infeed", "outfeed", "host_callback")

_targets: dict[str, Callable] = {}
_targets_lock = threading.Lock()


def register_custom_call_target(name: str, fn: Callable) -> None:
    """Run ``fn(*operands) -> result | tuple of results`` for ``custom_call @name``.

    Operands and results are numpy arrays of the call's types; a result of the
    wrong shape or dtype fails the call with an error naming the target.
    Register before compiling: an unregistered target is a compile error.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a custom call target needs a non-empty name, got {name!r}")
    if not callable(fn):
        raise TypeError(f"the custom call target {name!r} must be callable, got {fn!r}")
    with _targets_lock:
        _targets[name] = fn


def unregister_custom_call_target(name: str) -> None:
    with _targets_lock:
        _targets.pop(name, None)


def is_registered(name: str) -> bool:
    return name in _targets


def parse_types(text: str) -> list[tuple[tuple[int, ...], np.dtype]]:
    """``"2x3xf32;i32"`` (the pass's encoding of tensor types) -> [(shape, dtype)]."""
    types = []
    for item in filter(None, text.split(";")):
        *dims, element = item.split("x") if "x" in item else [item]
        types.append((tuple(int(d) for d in dims), dtypes.to_numpy_dtype(element)))
    return types


def _fill(op, buffers, arrays: Sequence[np.ndarray], types, what: str) -> None:
    """Copy ``arrays`` into the result ``buffers``, checking them against ``types``."""
    if len(arrays) != len(types):
        raise ValueError(f"{what} gave {len(arrays)} array(s), {op.describe()} expects {len(types)}")
    for i, (array, buffer, (shape, dtype)) in enumerate(zip(arrays, buffers, types)):
        array = np.asarray(array)
        if array.shape != shape or array.dtype != dtype:
            raise ValueError(
                f"{what}: result {i} is {array.dtype}{list(array.shape)}, "
                f"{op.describe()} expects {dtype}{list(shape)}"
            )
        buffer.view(dtype, shape)[...] = array


class HostQueues:
    """Per-device infeed and outfeed FIFOs of one executable."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self._lock = threading.Lock()
        self._infeed: dict[int, queue.Queue] = {}
        self._outfeed: dict[int, queue.Queue] = {}

    def _queue(self, table: dict[int, queue.Queue], device: int) -> queue.Queue:
        with self._lock:
            return table.setdefault(device, queue.Queue())

    def infeed(self, device: int) -> queue.Queue:
        return self._queue(self._infeed, device)

    def outfeed(self, device: int) -> queue.Queue:
        return self._queue(self._outfeed, device)

    def execute(self, device, op, operands, results) -> None:
        """Serve runtime op ``op`` of ``device`` (a ``program.Device``)."""
        if op.primitive == "infeed":
            self._read_infeed(device.index, op, results)
        elif op.primitive == "outfeed":
            operand_types = parse_types(op.attrs.get("operand_types", ""))
            arrays = tuple(b.view(d, s).copy() for b, (s, d) in zip(operands, operand_types))
            self.outfeed(device.index).put(arrays)
        else:
            _call_target(op, operands, results)

    def _read_infeed(self, device: int, op, results) -> None:
        try:
            arrays = self.infeed(device).get(timeout=self.timeout)
        except queue.Empty:
            raise TimeoutError(
                f"no data in device {device}'s infeed after {self.timeout:g} s "
                "(Executable.transfer_to_infeed puts it there)"
            ) from None
        types = parse_types(op.attrs.get("result_types", ""))
        _fill(op, results, arrays, types, "the infeed item")


def _call_target(op, operands, results) -> None:
    target = op.attrs.get("target", "")
    fn = _targets.get(target)
    if fn is None:
        raise LookupError(f"custom call target {target!r} is no longer registered")
    operand_types = parse_types(op.attrs.get("operand_types", ""))
    args = [b.view(d, s).copy() for b, (s, d) in zip(operands, operand_types)]
    out = fn(*args)
    types = parse_types(op.attrs.get("result_types", ""))
    if len(types) == 1 and not isinstance(out, (tuple, list)):
        out = (out,)
    _fill(op, results, list(out or ()), types, f"custom call target {target!r}")

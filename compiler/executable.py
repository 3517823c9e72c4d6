"""Compiled programs: numpy in, numpy out, through the ExecutionEngine.

Every public function is lowered with its results as out-parameters, so
results are numpy arrays xhlo allocates before the call: they own their memory
and nothing has to be freed by hand.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import math
import threading
import warnings
import weakref
from typing import Any

import numpy as np

from . import dtypes
from ._mlir import ExecutionEngine, ir, quant
from .checks import Check, evaluate
from .runtime.memory import result_array
from .runtime.program import check_timeout, free_cached_blocks


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """Shape and element type of one argument or result."""

    shape: tuple[int, ...]
    element_type: str  # MLIR spelling, e.g. "f32", "ui8", "complex<f32>"

    @functools.cached_property
    def dtype(self) -> np.dtype:
        return dtypes.to_numpy_dtype(self.element_type)

    @functools.cached_property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    def __str__(self) -> str:
        return f"tensor<{'x'.join(map(str, self.shape))}{'x' if self.shape else ''}{self.element_type}>"

    @staticmethod
    def from_type(t: ir.Type) -> "TensorSpec":
        if not isinstance(t, ir.RankedTensorType):
            raise TypeError(f"only ranked tensors cross the call boundary, got {t}")
        rt = ir.RankedTensorType(t)
        if not rt.has_static_shape:
            raise TypeError(f"dynamic shape {t} at the call boundary: refine shapes first")
        elem = rt.element_type
        text = str(elem)
        if text.startswith("!quant."):
            text = str(_quant_storage_type(elem))
        return TensorSpec(tuple(rt.shape), text)


def _quant_storage_type(elem: ir.Type) -> ir.Type:
    return quant.QuantizedType(elem).storage_type


SCRATCH_ATTR = "xhlo.scratch_bytes"  # set by xhlo-scratch-arena on functions taking an arena last


@dataclasses.dataclass(frozen=True)
class FunctionSignature:
    name: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    checks: tuple[Check, ...] = ()
    scratch_bytes: int = 0  # size of the temporaries arena passed after the outputs (0: none)

    @property
    def num_user_outputs(self) -> int:
        return len(self.outputs) - 2 * len(self.checks)


_DESCRIPTOR_TYPES: dict[int, type] = {}


def _descriptor_type(rank: int) -> type:
    """The ctypes struct of a ranked memref descriptor of ``rank``."""
    if rank not in _DESCRIPTOR_TYPES:
        fields = [
            ("allocated", ctypes.c_void_p),
            ("aligned", ctypes.c_void_p),
            ("offset", ctypes.c_int64),
        ]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTOR_TYPES[rank] = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    return _DESCRIPTOR_TYPES[rank]


def _address(array: np.ndarray) -> int:
    """The array's data address; ``c_char.from_buffer`` is 4x faster than ``array.ctypes.data``."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError, BufferError):  # read-only or empty arrays
        return array.ctypes.data


class _CallBlock:
    """The packed ctypes arguments of one function, built once per thread and refilled per call.

    Shapes are static, so sizes and strides are written once; a call only
    stores each array's address (arrays are C-contiguous: xhlo made them so).
    """

    def __init__(self, shapes: list[tuple[int, ...]]):
        self.descriptors = []
        for shape in shapes:
            desc = _descriptor_type(len(shape))()
            if shape:
                desc.sizes[:] = shape
                desc.strides[:] = [int(np.prod(shape[i + 1 :], dtype=np.int64)) for i in range(len(shape))]
            self.descriptors.append(desc)
        self._pointers = [ctypes.pointer(d) for d in self.descriptors]
        self.packed = (ctypes.c_void_p * len(shapes))(*[ctypes.addressof(p) for p in self._pointers])
        self.shapes = list(shapes)

    def bind(self, arrays: list[np.ndarray]):
        for desc, array in zip(self.descriptors, arrays):  # the hot path of every call
            desc.allocated = desc.aligned = _address(array)
        return self.packed

    def bind_addresses(self, addresses: list[int]):
        for desc, address in zip(self.descriptors, addresses):
            desc.allocated = desc.aligned = address
        return self.packed


class Executable:
    """A compiled StableHLO module. Call it with numpy arrays or Python scalars."""

    def __init__(
        self,
        engine: ExecutionEngine,
        signatures: dict[str, FunctionSignature],
        entry: str,
        *,
        stage_ir: dict[str, object],
        pipeline: str,
        context: ir.Context,
        num_replicas: int = 1,
        num_partitions: int = 1,
        runtime=None,
    ):
        self._engine = engine
        self._runtime = runtime  # xhlo.runtime.RuntimeBinding of programs with collectives
        self._context = context  # the engine's IR lives in this context
        self.signatures = signatures
        self.entry = entry
        self.stage_ir = stage_ir
        self.pipeline = pipeline
        self.num_replicas = num_replicas
        self.num_partitions = num_partitions
        self._entry_points: dict[str, Any] = {}
        self._scratch = threading.local()  # one temporaries arena per calling thread
        weakref.finalize(self, free_cached_blocks, engine)  # the heap blocks the program parked
        if runtime is not None:  # the runtime calls the program's fold kernels (no cycle)
            runtime.attach_kernels(weakref.ref(self))

    @property
    def signature(self) -> FunctionSignature:
        return self.signatures[self.entry]

    def ir(self, stage: str = "input") -> str:
        """The module's IR after ``stage`` (``input``, a stage name, or ``llvm``)."""
        try:
            kept = self.stage_ir[stage]
        except KeyError:
            raise KeyError(f"no IR kept for stage '{stage}'; stages: {list(self.stage_ir)}") from None
        if not isinstance(kept, str):  # compile keeps a copy of the module: print it once, now
            with self._context:
                kept = self.stage_ir[stage] = str(kept)
        return kept

    def __call__(self, *args):
        """Run the entry function. A program localized from a JAX ``shard_map`` over
        several devices takes and returns global arrays, sharded as its shardings say."""
        if getattr(self._runtime, "layout", None) is not None:
            from .runtime.sharding import run_sharded

            results = run_sharded(self, *args)
            return results[0] if len(results) == 1 else results
        return self.call_function(self.entry, *args)

    def call_function(self, name: str, *args):
        """Run public function ``name``; one result is an array, several a tuple."""
        sig = self.signatures.get(name)
        if sig is None:
            raise ValueError(f"no public function '{name}'; functions: {sorted(self.signatures)}")
        inputs = self._convert_args(sig, args)
        outputs = [result_array(spec.shape, spec.dtype, spec.nbytes) for spec in sig.outputs]
        self._invoke(name, inputs + outputs)
        for spec, out in zip(sig.outputs, outputs):
            dtypes.canonicalize_sub_byte(out, spec.element_type)
        if sig.checks:
            evaluate(list(sig.checks), tuple(outputs))
        user = tuple(outputs[: sig.num_user_outputs])
        return user[0] if len(user) == 1 else user

    def materialize(self) -> None:
        """Generate the machine code of every public function now (the JIT does it
        lazily, on first use), so the first call is as fast as later ones."""
        for name in self.signatures:
            self._entry_point(name)

    def _entry_point(self, name: str):
        func = self._entry_points.get(name)
        if func is None:
            func = self._entry_points[name] = self._engine.lookup(name)
        return func

    def _invoke(self, name: str, arrays: list[np.ndarray]) -> None:
        func = self._entry_point(name)
        sig = self.signatures.get(name)
        # A host call of this program that calls it again gets an arena and argument
        # block of its own: the thread's are in use by the outer call.
        reentered = getattr(self._scratch, "busy", False)
        if sig is not None and sig.scratch_bytes:
            arrays = [*arrays, _aligned_arena(sig.scratch_bytes) if reentered else self._arena(sig.scratch_bytes)]
        shapes = [a.shape for a in arrays]
        block = _CallBlock(shapes) if reentered else self._call_block(name, shapes)  # alive until returned
        packed = block.bind(arrays)
        self._scratch.busy = True
        try:
            if self._runtime is None:
                func(packed)
            else:
                self._runtime.invoke(func, packed)
        finally:
            self._scratch.busy = reentered

    def call_kernel(self, name: str, addresses: list[int]) -> None:
        """Run public function ``name`` on raw buffers, inputs then outputs, of its
        signature's shapes: the runtime's fold kernels, called on peers' memory."""
        sig = self.signatures[name]
        shapes = [spec.shape for spec in (*sig.inputs, *sig.outputs)]
        if sig.scratch_bytes:  # a fresh arena: the caller's program is using this thread's
            arena = _aligned_arena(sig.scratch_bytes)
            addresses = [*addresses, arena.ctypes.data]
            shapes.append((sig.scratch_bytes,))
        self._entry_point(name)(self._call_block(name, shapes).bind_addresses(addresses))

    def native_kernel(self, name: str) -> tuple[int, _CallBlock] | None:
        """``(packed entry address, a fresh argument block)`` of public function ``name``
        for native code (the collective runtime's fast path) to bind and call; None when
        it needs a temporaries arena, which only ``call_kernel`` provides."""
        sig = self.signatures[name]
        raw_lookup = getattr(self._engine, "raw_lookup", None)
        if sig.scratch_bytes or raw_lookup is None:
            return None
        block = _CallBlock([spec.shape for spec in (*sig.inputs, *sig.outputs)])
        return raw_lookup("_mlir_ciface_" + name), block  # what ExecutionEngine.lookup calls

    def _call_block(self, name: str, shapes: list[tuple[int, ...]]) -> _CallBlock:
        """This thread's argument block of ``name`` (rebuilt if called with other shapes)."""
        blocks = getattr(self._scratch, "blocks", None)
        if blocks is None:
            blocks = self._scratch.blocks = {}
        block = blocks.get(name)
        if block is None or block.shapes != shapes:
            block = blocks[name] = _CallBlock(shapes)
        return block

    def _arena(self, size: int) -> np.ndarray:
        """This thread's arena for the program's temporaries, kept between calls."""
        arena = getattr(self._scratch, "buffer", None)
        if arena is None or arena.nbytes < size:
            arena = self._scratch.buffer = _aligned_arena(size)
        return arena[:size]

    # -- host transfers (infeed / outfeed) ------------------------------------------------

    def _host_queues(self, what: str):
        if self._runtime is None:
            raise ValueError(f"{what}: this program has no infeed, outfeed or host calls")
        return self._runtime.host

    def transfer_to_infeed(self, *arrays, device: int = 0) -> None:
        """Queue one item (one array per infeed result) for ``device``'s next infeed."""
        self._host_queues("transfer_to_infeed").infeed(device).put(
            tuple(np.array(a) for a in arrays)  # a copy: the caller may reuse its arrays
        )

    def transfer_from_outfeed(self, *, device: int = 0, timeout: float | None = 0.0):
        """The oldest item ``device``'s outfeed holds: one array, or a tuple of them.

        Waits up to ``timeout`` seconds (None: forever) for one to arrive."""
        import queue

        outfeed = self._host_queues("transfer_from_outfeed").outfeed(device)
        try:
            item = outfeed.get(block=timeout != 0.0, timeout=timeout or None)
        except queue.Empty:
            raise ValueError(f"device {device}'s outfeed is empty") from None
        return item[0] if len(item) == 1 else item

    def run_replicated(self, args_per_device, *, entry: str | None = None, timeout: float | None = None):
        """Run on every device, one thread each: device d = replica_id * num_partitions + partition_id.

        ``args_per_device[d]`` are device d's arguments; returns one tuple of
        results per device. A failure on any device raises
        ``xhlo.runtime.CollectiveError`` naming every failed device;
        ``timeout`` overrides the ``collective_timeout`` compile option.
        """
        from .runtime.inprocess import run_replicated

        name = entry or self.entry
        if name not in self.signatures:
            raise ValueError(f"no public function '{name}'; found {sorted(self.signatures)}")
        self._entry_point(name)  # resolve once, not in every thread
        if timeout is not None:
            timeout = check_timeout("timeout", timeout)
        return run_replicated(self, args_per_device, entry=name, timeout=timeout)

    @staticmethod
    def _convert_args(sig: FunctionSignature, args) -> list[np.ndarray]:
        if len(args) != len(sig.inputs):
            raise ValueError(
                f"{sig.name} takes {len(sig.inputs)} argument(s) "
                f"({', '.join(map(str, sig.inputs)) or 'none'}), got {len(args)}"
            )
        arrays = []
        for i, (arg, spec) in enumerate(zip(args, sig.inputs)):
            if type(arg) is np.ndarray and arg.dtype == spec.dtype and arg.shape == spec.shape \
                    and arg.flags.c_contiguous:
                arrays.append(arg)  # the common case, checked in a fraction of a microsecond
                continue
            if isinstance(arg, (bool, int, float, complex)):
                array = scalar_argument(arg, spec.dtype, f"argument {i} of {sig.name}")
            else:
                array = np.asarray(arg)
                if array.dtype.type is np.void and array.dtype.names is None \
                        and array.dtype.itemsize == spec.dtype.itemsize:
                    array = array.view(spec.dtype)  # npz files keep bf16/f8 as raw bytes ('V2')
                if array.dtype != spec.dtype:
                    raise ValueError(
                        f"argument {i} of {sig.name}: expected dtype {spec.dtype} "
                        f"({spec}), got {array.dtype}"
                    )
            if array.shape != spec.shape:
                raise ValueError(
                    f"argument {i} of {sig.name}: expected shape {spec.shape} ({spec}), "
                    f"got {array.shape}"
                )
            arrays.append(np.ascontiguousarray(array))
        return arrays


def _aligned_arena(size: int) -> np.ndarray:
    """``size`` bytes for a program's temporaries, 64-byte aligned."""
    raw = np.empty(size + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start : start + size]


def scalar_argument(value: complex, dtype: np.dtype, where: str) -> np.ndarray:
    """A Python number passed for an argument of ``dtype`` (``where`` names it), as
    ``python_scalar`` converts it; ValueError if the type does not hold it."""
    array = python_scalar(value, dtype)
    if array is None:
        raise ValueError(f"{where}: {value!r} does not fit {dtype}")
    return array


def python_scalar(value: complex, dtype: np.dtype) -> np.ndarray | None:
    """A Python number as a 0-d array of ``dtype``; None unless ``dtype`` holds it (floats
    round, as in numpy, but a finite one must stay finite; an integer or bool must be exact,
    a complex needs a complex type)."""
    if isinstance(value, complex) and dtype.kind != "c":
        return None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            array = np.asarray(value, dtype=dtype)
        except (OverflowError, TypeError, ValueError):
            return None
    if dtype.kind in "fc":
        return array if np.isfinite(array) or not np.isfinite(value) else None  # 1e39 in f32: inf
    return array if array.item() == value else None

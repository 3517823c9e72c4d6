"""xhlo-memref-copy-to-linalg: memref.copy -> linalg.copy, or memcpy when contiguous.

``memref.copy`` of a non-contiguous view lowers to a call of ``memrefCopy`` from
``libmlir_c_runner_utils``, which the bindings wheel does not ship; a
``linalg.copy`` lowers to plain loops instead.

A large copy between row-major buffers (a loop's result into the function's
out-parameter) stays a ``memref.copy`` of flat views, which lowers to
``llvm.memcpy``; from ``PARALLEL_COPY_MIN_BYTES`` it is split into chunks by
an ``scf.for`` marked ``xhlo.parallel_loop``, so ``xhlo-parallelize-loops``
spreads it over the cores (16 MiB: 1.8 ms as an element loop, 1.2 ms as one
``memcpy``, ~0.7 ms on two cores).

A buffer whose strides are only known at run time (a loop-carried slice:
bufferization gives ``scf.for`` iter_args a fully dynamic layout) would be
copied element by element with a stride multiply, which LLVM neither
vectorizes nor turns into ``memcpy``. Large copies of such buffers are
versioned: when every stride is the row-major one at run time, both sides are
viewed as flat unit-stride buffers and copied with ``memref.copy`` (which
lowers to ``llvm.memcpy`` for contiguous types); otherwise with the loops.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import arith, ir, linalg, memref, scf

from .base import ModulePass, walk_ops
from .lower_collectives import element_bytes
from .vectorize import PARALLEL_LOOP

_DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset()
# below this many elements a copy is cheap and the run-time check not worth its code
MIN_VERSIONED_ELEMENTS = 4096
PARALLEL_COPY_MIN_BYTES = 1 << 20  # from here a copy is worth the thread pool (~50 us of memcpy)
COPY_CHUNK_BYTES = 1 << 16


def row_major_strides(shape: list[int]) -> list[int]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return strides[::-1]


def _has_dynamic_strides(t: ir.MemRefType) -> bool:
    strides, _ = t.get_strides_and_offset()
    return _DYNAMIC in strides


def _large(t: ir.MemRefType) -> bool:
    return t.has_static_shape and math.prod(t.shape) >= MIN_VERSIONED_ELEMENTS


def _worth_flat_copy(src: ir.MemRefType, dst: ir.MemRefType, item_bytes: int | None) -> bool:
    """Large, and row-major at run time (dynamic strides: checked there) or statically."""
    if not _large(src):
        return False
    if _has_dynamic_strides(src) or _has_dynamic_strides(dst):
        return True
    return item_bytes is not None and is_row_major(src) and is_row_major(dst)


def contiguous_elements(t: ir.MemRefType) -> int:
    """Elements of the innermost dims that lie back to back (sizes 1 aside)."""
    strides, _ = t.get_strides_and_offset()
    block = 1
    for size, stride in zip(reversed(t.shape), reversed(strides)):
        if size == 1:
            continue
        if stride != block:
            break
        block *= size
    return block


def is_row_major(t: ir.MemRefType) -> bool:
    """Statically known to be row-major (any offset)."""
    return t.has_static_shape and contiguous_elements(t) == math.prod(t.shape)


def memcpy_item_bytes(t: ir.MemRefType) -> int | None:
    """Bytes per element (``element_bytes``) when elements are whole bytes; None for the
    padded ones (i1, i4: kept as element loops) and types without a known size."""
    element = t.element_type
    scalar = ir.ComplexType(element).element_type if isinstance(element, ir.ComplexType) else element
    if not isinstance(scalar, (ir.IntegerType, ir.FloatType)) or scalar.width % 8:
        return None
    return element_bytes(element)


def row_major_view(value: ir.Value, shape: list[int] | None = None) -> tuple[ir.Value, ir.Value | None]:
    """``value`` viewed as a row-major buffer of ``shape`` (default: flat) at its offset, and
    the i1 that says the view is valid (its strides are row-major; None when that is known
    statically)."""
    t = ir.MemRefType(value.type)
    rank = t.rank
    shape = [math.prod(t.shape)] if shape is None else shape
    metadata = memref.ExtractStridedMetadataOp(value)
    base, offset = metadata.results[0], metadata.results[1]
    strides = metadata.results[2 + rank : 2 + 2 * rank]
    static_strides, _ = t.get_strides_and_offset()
    condition = None
    for size, stride, static, want in zip(t.shape, strides, static_strides, row_major_strides(list(t.shape))):
        if size == 1 or static == want:
            continue
        index = ir.IndexType.get()
        equal = arith.cmpi(arith.CmpIPredicate.eq, stride, arith.constant(index, want))
        condition = equal if condition is None else arith.andi(condition, equal)
    view_strides = row_major_strides(shape)
    view_type = ir.MemRefType.get(shape, t.element_type, layout=ir.StridedLayoutAttr.get(_DYNAMIC, view_strides))
    view = memref.reinterpret_cast(view_type, base, [offset], [], [], [_DYNAMIC], shape, view_strides)
    return view, condition


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _flat_copy(src: ir.Value, dst: ir.Value, item_bytes: int | None) -> None:
    """A memcpy between flat views; a large one in chunks (subviews) of a loop
    xhlo-parallelize-loops may spread over the cores (each chunk one memcpy)."""
    n = ir.MemRefType(src.type).shape[0]
    chunk = COPY_CHUNK_BYTES // item_bytes if item_bytes else n
    if item_bytes is None or n * item_bytes < PARALLEL_COPY_MIN_BYTES or n < 2 * chunk:
        memref.copy(src, dst)
        return
    whole = n - n % chunk
    loop = scf.ForOp(_index(0), _index(whole), _index(chunk))
    loop.operation.attributes[PARALLEL_LOOP] = ir.UnitAttr.get()
    with ir.InsertionPoint(loop.body):
        start = loop.induction_variable
        memref.copy(memref.subview(src, [start], [chunk], [1]), memref.subview(dst, [start], [chunk], [1]))
        scf.yield_([])
    if whole < n:
        memref.copy(memref.subview(src, [whole], [n - whole], [1]), memref.subview(dst, [whole], [n - whole], [1]))


def _flat_copy_if_row_major(src: ir.Value, dst: ir.Value, item_bytes: int | None) -> None:
    """A flat memcpy if both sides are row-major (``scf.if`` they are, when only known at
    run time; else linalg.copy)."""
    flat_src, src_ok = row_major_view(src)
    flat_dst, dst_ok = row_major_view(dst)
    conditions = [c for c in (src_ok, dst_ok) if c is not None]
    if not conditions:
        _flat_copy(flat_src, flat_dst, item_bytes)
        return
    contiguous = conditions[0] if len(conditions) == 1 else arith.andi(*conditions)
    branch = scf.IfOp(contiguous, has_else=True)
    with ir.InsertionPoint(branch.then_block):
        _flat_copy(flat_src, flat_dst, item_bytes)
        scf.yield_([])
    with ir.InsertionPoint(branch.else_block):
        linalg.copy(src, outs=[dst])
        scf.yield_([])


@dataclasses.dataclass(frozen=True)
class MemrefCopyToLinalg(ModulePass):
    """Rewrite memref.copy into linalg.copy (memcpy when contiguous, at run time or statically)."""

    NAME = "xhlo-memref-copy-to-linalg"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "memref.copy"):
            src, dst = op.operands
            src_type = ir.MemRefType(src.type)
            item_bytes = memcpy_item_bytes(src_type)
            with ir.InsertionPoint(op), op.location:
                if _worth_flat_copy(src_type, ir.MemRefType(dst.type), item_bytes):
                    _flat_copy_if_row_major(src, dst, item_bytes)
                else:
                    linalg.copy(src, outs=[dst])
            op.erase()

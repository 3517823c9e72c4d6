"""xhlo-memref-copy-to-linalg: memref.copy -> linalg.copy, or memcpy when contiguous at run time.

``memref.copy`` of a non-contiguous view lowers to a call of ``memrefCopy`` from
``libmlir_c_runner_utils``, which the bindings wheel does not ship; a
``linalg.copy`` lowers to plain loops instead.

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

_DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset()
# below this many elements a copy is cheap and the run-time check not worth its code
MIN_VERSIONED_ELEMENTS = 4096


def row_major_strides(shape: list[int]) -> list[int]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return strides[::-1]


def _has_dynamic_strides(t: ir.MemRefType) -> bool:
    strides, _ = t.get_strides_and_offset()
    return _DYNAMIC in strides


def _worth_versioning(src: ir.MemRefType, dst: ir.MemRefType) -> bool:
    return (src.has_static_shape and math.prod(src.shape) >= MIN_VERSIONED_ELEMENTS
            and (_has_dynamic_strides(src) or _has_dynamic_strides(dst)))


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


def _versioned_copy(src: ir.Value, dst: ir.Value) -> None:
    """``scf.if`` both sides are contiguous: a flat memref.copy; else: linalg.copy."""
    flat_src, src_ok = row_major_view(src)
    flat_dst, dst_ok = row_major_view(dst)
    conditions = [c for c in (src_ok, dst_ok) if c is not None]
    contiguous = conditions[0] if len(conditions) == 1 else arith.andi(*conditions)
    branch = scf.IfOp(contiguous, has_else=True)
    with ir.InsertionPoint(branch.then_block):
        memref.copy(flat_src, flat_dst)
        scf.yield_([])
    with ir.InsertionPoint(branch.else_block):
        linalg.copy(src, outs=[dst])
        scf.yield_([])


@dataclasses.dataclass(frozen=True)
class MemrefCopyToLinalg(ModulePass):
    """Rewrite memref.copy into linalg.copy (memcpy when contiguous at run time)."""

    NAME = "xhlo-memref-copy-to-linalg"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "memref.copy"):
            src, dst = op.operands
            with ir.InsertionPoint(op), op.location:
                if _worth_versioning(ir.MemRefType(src.type), ir.MemRefType(dst.type)):
                    _versioned_copy(src, dst)
                else:
                    linalg.copy(src, outs=[dst])
            op.erase()

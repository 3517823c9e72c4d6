"""xhlo-split-buffer-fills: large fills and copies on buffers -> a parallel loop of slices.

Bufferization writes some ops only as buffer ops, after ``xhlo-vectorize`` has
run: the padding of a convolution's input is a ``linalg.map`` filling the
padded buffer and a ``linalg.copy`` into its interior. Lowered to loops they
run on one core (a 3x3 "SAME" convolution over 8x56x56x64: 0.35 ms of its 4.2).

Here a ``linalg.fill``, ``linalg.copy`` or ``linalg.map`` (elementwise by
definition) of at least ``min_elements`` elements becomes an ``scf.for`` over
its outermost dimension longer than one, marked ``xhlo.parallel_loop``, that
applies the op to one slice of every buffer per step (one index of the dim, or a
block of ``CHUNK_ELEMENTS`` of the innermost one): ``xhlo-parallelize-loops``
hands the loop to the thread pool when it is worth it.

Then a fill or copy (a slice, or a whole op of any size) whose buffers are
row-major (size-1 dims aside) runs on flat views: a copy is one ``memcpy``, a
fill one loop (LLVM makes a zero fill a ``memset``). A ``linalg.map`` that
only yields a value from outside counts as a fill. As nested element loops,
LLVM vectorized each with run-time checks and remainders: the padding of the
56x56x64 convolution of ``benchmarks/`` cost 7 ms of LLVM's 15.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir, linalg, memref, scf

from .base import ModulePass, walk_ops
from .gemm_to_blas import index_constant
from .loop_annotations import mark_no_unroll
from .memref_copy_to_linalg import (
    contiguous_elements,
    is_row_major,
    memcpy_item_bytes,
    row_major_view,
)
from .vectorize import PARALLEL_LOOP

_SPLIT = ("linalg.fill", "linalg.copy", "linalg.map")
CHUNK_ELEMENTS = 1 << 14  # elements per step of a loop over the innermost dim


def _shape(op: ir.Operation) -> list[int] | None:
    """The common static shape of the op's buffers, None unless they all have one."""
    shapes = {tuple(ir.MemRefType(v.type).shape) for v in op.operands if isinstance(v.type, ir.MemRefType)}
    if len(shapes) != 1:
        return None
    shape = list(shapes.pop())
    return shape if all(size >= 0 for size in shape) else None


def _split(op: ir.Operation, shape: list[int], dim: int, parallel: bool) -> list[ir.Operation]:
    """A loop over slices of ``dim`` applying ``op`` to one (and, when the slices are
    blocks that do not divide the dim, ``op`` once more on the rest); returns those ops.

    A slice is one index of ``dim`` unless ``dim`` is the innermost dim longer than
    one: then it is a block of up to ``CHUNK_ELEMENTS`` (one element per step made a
    1-D copy of 16 MiB four million memcpy calls of 4 bytes).
    """
    innermost = all(size == 1 for size in shape[dim + 1:])
    block = min(shape[dim], CHUNK_ELEMENTS) if innermost else 1
    whole = shape[dim] - shape[dim] % block
    loop = scf.ForOp(index_constant(0), index_constant(whole), index_constant(block))
    mark_no_unroll(loop.operation)  # a step is a memcpy, a fill loop or an element loop of a row
    if parallel:
        loop.operation.attributes[PARALLEL_LOOP] = ir.UnitAttr.get()
    with ir.InsertionPoint(loop.body):
        pieces = [_on_slice(op, dim, loop.induction_variable, block)]
        scf.yield_([])
    if whole < shape[dim]:
        pieces.append(_on_slice(op, dim, whole, shape[dim] - whole))
    op.erase()
    return pieces


def _on_slice(op: ir.Operation, dim: int, start: ir.Value | int, length: int) -> ir.Operation:
    """A copy of ``op`` on the slices ``[start, start + length)`` of ``dim`` of its buffers."""
    slices = [_subview(v, dim, start, length) if isinstance(v.type, ir.MemRefType) else v for v in op.operands]
    piece = op.clone()  # after the slices it reads
    for index, value in enumerate(slices):
        piece.operands[index] = value
    return piece


def _subview(buffer: ir.Value, dim: int, start: ir.Value | int, length: int) -> ir.Value:
    """A slice of ``buffer`` along ``dim``. Its type is spelled out for dynamic strides
    (a loop-carried buffer's), which the bindings do not infer it for."""
    t = ir.MemRefType(buffer.type)
    offsets = [start if d == dim else 0 for d in range(t.rank)]
    sizes = [length if d == dim else size for d, size in enumerate(t.shape)]
    strides, _ = t.get_strides_and_offset()
    result_type = None
    if any(t.is_dynamic_stride_or_offset(stride) for stride in strides):
        layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(), strides)
        result_type = ir.MemRefType.get(sizes, t.element_type, layout, t.memory_space)
    return memref.subview(buffer, offsets, sizes, [1] * t.rank, result_type=result_type)


def _fill_value(op: ir.Operation) -> ir.Value | None:
    """What a fill writes: ``linalg.fill``'s scalar, or the value from outside that a
    ``linalg.map`` without inputs yields; None for other ops."""
    if op.name == "linalg.fill":
        return op.operands[0]
    if op.name != "linalg.map" or len(op.operands) != 1:
        return None
    body = op.regions[0].blocks[0]
    if len(body.operations) != 1:
        return None
    value = body.operations[0].operands[0]
    inside = isinstance(value, ir.BlockArgument) and value.owner == body
    return None if inside else value


def _is_memcpy(op: ir.Operation, buffers: list[ir.Value]) -> bool:
    """A copy that ``memcpy`` can do: one element type of whole bytes, distinct buffers."""
    if op.name != "linalg.copy" or buffers[0] == buffers[1]:
        return False
    src, dst = (ir.MemRefType(v.type) for v in buffers)
    return src.element_type == dst.element_type and memcpy_item_bytes(src) is not None


def _flat(buffer: ir.Value) -> ir.Value:
    return buffer if ir.MemRefType(buffer.type).rank <= 1 else row_major_view(buffer)[0]


def _on_flat_views(op: ir.Operation, min_block_bytes: int) -> None:
    """A fill or memcpy-able copy on flat views of its row-major buffers; else, when its
    buffers share contiguous blocks of ``min_block_bytes``, loops over the blocks."""
    buffers = [v for v in op.operands if isinstance(v.type, ir.MemRefType)]
    value = _fill_value(op)
    if value is None and not _is_memcpy(op, buffers):
        return
    if not all(is_row_major(ir.MemRefType(v.type)) for v in buffers):
        block = min(contiguous_elements(ir.MemRefType(v.type)) for v in buffers)
        if block * (memcpy_item_bytes(ir.MemRefType(buffers[0].type)) or 1) >= min_block_bytes:
            shape = _shape(op)
            dim = next(d for d, size in enumerate(shape) if size > 1)
            with ir.InsertionPoint(op), op.location:
                for piece in _split(op, shape, dim, parallel=False):
                    _on_flat_views(piece, min_block_bytes)
        return
    if op.name == "linalg.fill" and ir.MemRefType(buffers[0].type).rank <= 1:
        return  # flat already
    with ir.InsertionPoint(op), op.location:
        if value is not None:
            linalg.fill(value, outs=[_flat(buffers[0])])
        else:
            memref.copy(_flat(buffers[0]), _flat(buffers[1]))
    op.erase()


@dataclasses.dataclass(frozen=True)
class SplitBufferFills(ModulePass):
    """Large fills/copies/maps on buffers -> a parallel-marked loop over slices; fills and
    copies on flat views of contiguous blocks (a copy: memcpy)."""

    NAME = "xhlo-split-buffer-fills"
    min_elements: int = 1 << 16
    min_block_bytes: int = 64

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, _SPLIT):
            if op.results:
                continue  # on tensors: xhlo-vectorize's
            shape = _shape(op)
            if shape is None:
                continue
            dim = next((d for d, size in enumerate(shape) if size > 1), None)
            pieces = [op]
            if dim is not None and math.prod(shape) >= self.min_elements:
                with ir.InsertionPoint(op), op.location:
                    pieces = _split(op, shape, dim, parallel=True)
            for piece in pieces:
                _on_flat_views(piece, self.min_block_bytes)

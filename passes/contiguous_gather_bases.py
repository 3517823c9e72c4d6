"""xhlo-contiguous-gather-bases: a vector.gather reads a row-major copy of a strided buffer.

The linalg vectorizer turns a ``tensor.extract`` at data-dependent indices into a
``vector.gather`` whose index vector is the element's linear position in the
tensor, row-major. Bufferized, the tensor may be a view with other strides (a
slice ``a[..., :1]``, ``a[:, ::2]``), and ``vector.gather`` reads its indices as
element offsets in memory from the base: it read the wrong elements (the rows of
a batched ``take_along_axis`` of a slice, hence a batched ``solve`` of
``a[..., :1]``), or failed to lower where the innermost stride is not 1.

This pass gives every ``vector.gather`` whose base is not statically row-major a
row-major copy of it. The copy is made right before the outermost op around the
gather that sits in the block defining the base (outside the tile loops: once per
call) and freed after that op.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir, memref

from .base import ModulePass, walk_ops
from .gemm_to_blas import index_constant
from .memref_copy_to_linalg import is_row_major


def _outermost_in_block(op: ir.Operation, block: ir.Block) -> ir.Operation | None:
    """The ancestor of ``op`` (or ``op``) whose block is ``block``; None if none is."""
    while op.block != block:
        parent = op.parent
        if parent is None or parent.name == "builtin.module":
            return None
        op = parent.operation
    return op


def _defining_block(value: ir.Value) -> ir.Block:
    return value.owner if isinstance(value, ir.BlockArgument) else value.owner.operation.block


def _row_major_copy(base: ir.Value, before: ir.Operation) -> ir.Value:
    """A row-major copy of ``base`` made before ``before``, freed after it."""
    t = ir.MemRefType(base.type)
    with ir.InsertionPoint(before), before.location:
        sizes = [memref.dim(base, index_constant(i)) for i, size in enumerate(t.shape) if size == ir.ShapedType.get_dynamic_size()]
        copy = memref.alloc(ir.MemRefType.get(t.shape, t.element_type, memory_space=t.memory_space), sizes, [])
        memref.copy(base, copy)
    with ir.InsertionPoint.after(before), before.location:
        memref.dealloc(copy)
    return copy


@dataclasses.dataclass(frozen=True)
class ContiguousGatherBases(ModulePass):
    """Give vector.gather ops on strided buffers a row-major copy of the buffer to read."""

    NAME = "xhlo-contiguous-gather-bases"

    def run(self, module: ir.Operation) -> None:
        copies: dict[tuple[ir.Value, ir.Operation], ir.Value] = {}
        for gather in walk_ops(module, "vector.gather"):
            base = gather.operands[0]
            if not isinstance(base.type, ir.MemRefType) or is_row_major(ir.MemRefType(base.type)):
                continue
            around = _outermost_in_block(gather, _defining_block(base))
            if around is None:
                continue
            key = (base, around)
            if key not in copies:
                copies[key] = _row_major_copy(base, around)
            gather.operands[0] = copies[key]

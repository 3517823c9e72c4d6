"""xhlo-scalar-transfer-reads: a one-element vector read from a strided memref is a scalar load.

A tile of one element (the lhs element a small contraction broadcasts, a
gather's row index) is read by ``xhlo-vectorize`` as a ``vector.transfer_read``
of a 0-d or one-element vector. When the buffer it reads has a non-unit
innermost stride (every other element of a row: a slice with stride 2 of an
interleaved array), the upstream transfer lowering cannot make it a
``vector.load`` and leaves casts between ``vector<f32>`` and ``vector<1xf32>``
that LLVM translation rejects: a valid program failed to compile. One
element needs no vector load: this pass makes such reads a ``memref.load``
and a ``vector.broadcast``. Runs on buffers, before ``convert-vector-to-scf``.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir

from .base import ModulePass, walk_ops


def _unit_innermost_stride(memref_type: ir.MemRefType) -> bool:
    if memref_type.rank == 0:
        return True
    strides, _ = memref_type.get_strides_and_offset()
    return strides[-1] == 1


def _rewrite(read: ir.Operation) -> None:
    source, rank = read.operands[0], ir.MemRefType(read.operands[0].type).rank
    indices = list(read.operands[1 : 1 + rank])
    with ir.InsertionPoint(read), read.location:
        element = ir.Operation.create(
            "memref.load", results=[ir.MemRefType(source.type).element_type], operands=[source, *indices]
        ).result
        splat = ir.Operation.create("vector.broadcast", results=[read.results[0].type], operands=[element]).result
    read.results[0].replace_all_uses_with(splat)
    read.erase()


@dataclasses.dataclass(frozen=True)
class ScalarTransferReads(ModulePass):
    """One-element in-bounds vector.transfer_read ops of strided memrefs -> memref.load + vector.broadcast."""

    NAME = "xhlo-scalar-transfer-reads"

    def run(self, module: ir.Operation) -> None:
        for read in walk_ops(module, "vector.transfer_read"):
            source_type = read.operands[0].type
            if not isinstance(source_type, ir.MemRefType) or "operandSegmentSizes" not in read.attributes:
                continue
            segments = list(ir.DenseI32ArrayAttr(read.attributes["operandSegmentSizes"]))
            masked = len(segments) > 3 and segments[3] > 0
            shape = ir.VectorType(read.results[0].type).shape
            in_bounds = not shape or all(ir.BoolAttr(b).value for b in read.attributes["in_bounds"])
            if masked or not in_bounds or math.prod(shape) != 1:
                continue
            if not _unit_innermost_stride(ir.MemRefType(source_type)):
                _rewrite(read)

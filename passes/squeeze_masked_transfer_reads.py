"""xhlo-squeeze-masked-transfer-reads: a masked vector read with unit dims is a 1-D read.

Vectorizing a reduction over the outer dim of a 3-D array with a masked tile
(``sum(x, axis=0)`` of a 5x7x100 array, the 100 not a multiple of the SIMD
width) reads each tile as ``vector<16x1xf32>`` through the permutation map
``(d0, d1, d2) -> (d2, d0)``, masked by ``vector<1x16xi1>``. The upstream
``convert-vector-to-scf`` unrolls that read into reads whose mask has the wrong
type, and the valid program failed to compile. A vector with one non-unit dim
is a 1-D vector: this pass reads ``vector<16xf32>`` through the map's result of
that dim with the mask reshaped to ``vector<16xi1>`` (the unit dims read
index 0 of their memref dims either way), and reshapes the result back.
Runs on buffers, before ``convert-vector-to-scf``.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir

from .base import ModulePass, walk_ops


def _shape_cast(value: ir.Value, shape: list[int]) -> ir.Value:
    vector_type = ir.VectorType.get(shape, ir.VectorType(value.type).element_type)
    return ir.Operation.create("vector.shape_cast", results=[vector_type], operands=[value]).result


def _squeezable(read: ir.Operation) -> int | None:
    """The position of the one non-unit dim of a masked multi-dim read of a buffer through
    a map of plain dims, else None."""
    if not isinstance(read.operands[0].type, ir.MemRefType):
        return None
    segments = list(ir.DenseI32ArrayAttr(read.attributes["operandSegmentSizes"]))
    shape = ir.VectorType(read.results[0].type).shape
    if len(segments) < 4 or segments[3] == 0 or len(shape) < 2:
        return None
    kept = [i for i, size in enumerate(shape) if size != 1]
    results = ir.AffineMapAttr(read.attributes["permutation_map"]).value.results
    if len(kept) != 1 or not all(isinstance(e, ir.AffineDimExpr) for e in results):
        return None
    return kept[0]


def _squeeze(read: ir.Operation, kept: int) -> None:
    source, *rest = read.operands
    indices, padding, mask = rest[:-2], rest[-2], rest[-1]
    old_map = ir.AffineMapAttr(read.attributes["permutation_map"]).value
    in_bounds = ir.ArrayAttr(read.attributes["in_bounds"])
    lanes = ir.VectorType(read.results[0].type).shape[kept]
    with ir.InsertionPoint(read), read.location:
        attributes = {
            "permutation_map": ir.AffineMapAttr.get(ir.AffineMap.get(old_map.n_dims, 0, [old_map.results[kept]])),
            "in_bounds": ir.ArrayAttr.get([in_bounds[kept]]),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(indices), 1, 1]),
        }
        result_type = ir.VectorType.get([lanes], ir.VectorType(read.results[0].type).element_type)
        flat = ir.Operation.create("vector.transfer_read", results=[result_type],
                                   operands=[source, *indices, padding, _shape_cast(mask, [lanes])],
                                   attributes=attributes).result
        value = _shape_cast(flat, ir.VectorType(read.results[0].type).shape)
    read.results[0].replace_all_uses_with(value)
    read.erase()


@dataclasses.dataclass(frozen=True)
class SqueezeMaskedTransferReads(ModulePass):
    """Masked vector.transfer_read ops of one non-unit dim -> 1-D reads and a shape_cast."""

    NAME = "xhlo-squeeze-masked-transfer-reads"

    def run(self, module: ir.Operation) -> None:
        for read in walk_ops(module, "vector.transfer_read"):
            kept = _squeezable(read)
            if kept is not None and math.prod(ir.VectorType(read.results[0].type).shape) > 1:
                _squeeze(read, kept)

"""xhlo-unroll-strided-transfers: a short 1-D vector transfer of a strided row is one
scalar load (or store) per lane, at constant lanes.

``xhlo-vectorize`` puts a parallel loop in the vector when the reduction loop is
the contiguous one and the combiner is not recognized (argmax over the last
axis: each lane walks its own row), so every step reads one element of W
rows. ``convert-vector-to-scf`` lowers such a read (innermost stride not 1) to
an ``scf.for`` that inserts one loaded element per iteration at a *dynamic*
lane, which LLVM spills through the stack: argmax of [1024,4096] f32 took 8.2
ms on one core of an AVX2 machine. Unrolled, each lane is a load into a
register (6.0 ms; 2.5 ms on both cores, where XLA takes 5.0). Writes are
unrolled alike. Runs on buffers, before ``convert-vector-to-scf``; in-bounds,
unmasked transfers along the buffer's last dimension only (the others need
bounds checks or staging, which that pass does).
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import arith, ir

from .base import ModulePass, walk_ops

MAX_LANES = 64  # longer vectors keep the loop (code size)


def _unrollable(transfer: ir.Operation, vector_type: ir.Type, source_type: ir.Type) -> bool:
    if not isinstance(source_type, ir.MemRefType) or source_type.rank == 0:
        return False
    segments = list(ir.DenseI32ArrayAttr(transfer.attributes["operandSegmentSizes"]))
    if len(segments) > 3 and segments[-1] > 0:  # masked
        return False
    vector_type = ir.VectorType(vector_type)
    if vector_type.rank != 1 or vector_type.shape[0] > MAX_LANES or vector_type.scalable:
        return False
    if vector_type.element_type != source_type.element_type:  # a buffer of vectors
        return False
    if not all(ir.BoolAttr(b).value for b in transfer.attributes["in_bounds"]):
        return False
    rank = source_type.rank
    if ir.AffineMapAttr(transfer.attributes["permutation_map"]).value != ir.AffineMap.get_minor_identity(rank, 1):
        return False
    strides, _ = source_type.get_strides_and_offset()
    return strides[-1] != 1


def _lane_indices(indices: list[ir.Value], lanes: int) -> list[list[ir.Value]]:
    """The buffer indices of each lane: the last index advanced by the lane."""
    index_type = ir.IndexType.get()
    per_lane = [indices]
    for lane in range(1, lanes):
        step = arith.ConstantOp(index_type, lane).result
        per_lane.append([*indices[:-1], arith.AddIOp(indices[-1], step).result])
    return per_lane


def _unroll_read(read: ir.Operation) -> None:
    source = read.operands[0]
    memref_type = ir.MemRefType(source.type)
    vector_type = ir.VectorType(read.results[0].type)
    with ir.InsertionPoint(read), read.location:
        lanes = _lane_indices(list(read.operands[1 : 1 + memref_type.rank]), vector_type.shape[0])
        elements = [
            ir.Operation.create("memref.load", results=[memref_type.element_type], operands=[source, *at]).result
            for at in lanes
        ]
        vector = ir.Operation.create("vector.from_elements", results=[vector_type], operands=elements).result
    read.results[0].replace_all_uses_with(vector)
    read.erase()


def _unroll_write(write: ir.Operation) -> None:
    vector, dest = write.operands[0], write.operands[1]
    memref_type = ir.MemRefType(dest.type)
    with ir.InsertionPoint(write), write.location:
        lanes = _lane_indices(list(write.operands[2 : 2 + memref_type.rank]), ir.VectorType(vector.type).shape[0])
        for lane, at in enumerate(lanes):
            element = ir.Operation.create(
                "vector.extract",
                results=[memref_type.element_type],
                operands=[vector],
                attributes={"static_position": ir.DenseI64ArrayAttr.get([lane])},
            ).result
            ir.Operation.create("memref.store", operands=[element, dest, *at])
    write.erase()


@dataclasses.dataclass(frozen=True)
class UnrollStridedTransfers(ModulePass):
    """In-bounds 1-D vector transfers of strided memref rows -> one memref.load/store per lane."""

    NAME = "xhlo-unroll-strided-transfers"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, ("vector.transfer_read", "vector.transfer_write")):
            if op.name == "vector.transfer_read":
                if _unrollable(op, op.results[0].type, op.operands[0].type):
                    _unroll_read(op)
            elif not op.results and _unrollable(op, op.operands[0].type, op.operands[1].type):
                _unroll_write(op)  # on buffers: a write on tensors has a result

"""xhlo-split-buffer-fills: large fills and copies on buffers -> a parallel loop of slices.

Bufferization writes some ops only as buffer ops, after ``xhlo-vectorize`` has
run: the padding of a convolution's input is a ``linalg.map`` filling the
padded buffer and a ``linalg.copy`` into its interior. Lowered to loops they
run on one core (a 3x3 "SAME" convolution over 8x56x56x64: 0.35 ms of its 4.2).

Here a ``linalg.fill``, ``linalg.copy`` or ``linalg.map`` (elementwise by
definition) of at least ``min_elements`` elements becomes an ``scf.for`` over
its outermost dimension longer than one, marked ``xhlo.parallel_loop``, that
applies the op to one slice of every buffer per step: ``xhlo-parallelize-loops``
hands the loop to the thread pool when it is worth it, and LLVM vectorizes
each slice's innermost loop.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir, memref, scf

from .base import ModulePass, walk_ops
from .gemm_to_blas import index_constant
from .vectorize import PARALLEL_LOOP

_SPLIT = ("linalg.fill", "linalg.copy", "linalg.map")


def _shape(op: ir.Operation) -> list[int] | None:
    """The common static shape of the op's buffers, None unless they all have one."""
    shapes = {tuple(ir.MemRefType(v.type).shape) for v in op.operands if isinstance(v.type, ir.MemRefType)}
    if len(shapes) != 1:
        return None
    shape = list(shapes.pop())
    return shape if all(size >= 0 for size in shape) else None


def _split(op: ir.Operation, shape: list[int], dim: int) -> None:
    loop = scf.ForOp(index_constant(0), index_constant(shape[dim]), index_constant(1))
    loop.operation.attributes[PARALLEL_LOOP] = ir.UnitAttr.get()
    with ir.InsertionPoint(loop.body):
        position = loop.induction_variable
        offsets = [position if d == dim else 0 for d in range(len(shape))]
        sizes = [1 if d == dim else size for d, size in enumerate(shape)]
        slices = [memref.subview(v, offsets, sizes, [1] * len(shape)) if isinstance(v.type, ir.MemRefType) else v
                  for v in op.operands]
        piece = op.clone()
        for index, value in enumerate(slices):
            piece.operands[index] = value
        scf.yield_([])
    op.erase()


@dataclasses.dataclass(frozen=True)
class SplitBufferFills(ModulePass):
    """Large fills/copies/maps on buffers -> a parallel-marked loop over slices."""

    NAME = "xhlo-split-buffer-fills"
    min_elements: int = 1 << 16

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, _SPLIT):
            if op.results:
                continue  # on tensors: xhlo-vectorize's
            shape = _shape(op)
            if shape is None or math.prod(shape) < self.min_elements:
                continue
            dim = next((d for d, size in enumerate(shape) if size > 1), None)
            if dim is None:
                continue
            with ir.InsertionPoint(op), op.location:
                _split(op, shape, dim)

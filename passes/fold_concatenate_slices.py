"""xhlo-fold-concatenate-slices: slices within one operand of a concatenation read that operand.

JAX writes ``jnp.pad(x, ..., mode="reflect")`` (and "symmetric", "wrap", and
``jnp.roll`` of several axes) as a chain: concatenate reversed slices of ``x``
to it along one axis, then slice the next border out of that concatenation,
and so on, axis after axis. Each concatenation is read twice (by the next
slice and the next concatenation), so each is written out whole: four full
copies of the image for a reflect padding of two axes, where XLA fuses the
chain into one loop. Two rewrites, as XLA's algebraic simplifier has them:

* a ``slice`` whose range along the concatenated dimension lies within one
  operand becomes a slice of that operand;
* a ``concatenate`` operand that is itself a concatenation along the same
  dimension, read by nothing else, is replaced by its operands.

After them a padding is one concatenation per axis: its copies are fused
with the reversed slices they read (``xhlo-lower-concatenate``).
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, defining_op, walk_ops


def _dimension(op: ir.Operation) -> int:
    return ir.IntegerAttr(op.attributes["dimension"]).value


def _slice_of_operand(op: ir.Operation) -> bool:
    """Rewrite a slice that reads one operand of a concatenation; True if it did."""
    concat = defining_op(op.operands[0], "stablehlo.concatenate")
    if concat is None or not ir.RankedTensorType(concat.results[0].type).has_static_shape:
        return False
    dim = _dimension(concat)
    start, limit, strides = (list(ir.DenseI64ArrayAttr(op.attributes[name]))
                             for name in ("start_indices", "limit_indices", "strides"))
    offset = 0
    for operand in concat.operands:
        size = sh.shape_of(operand)[dim]
        if offset <= start[dim] and limit[dim] <= offset + size:
            start[dim] -= offset
            limit[dim] -= offset
            with ir.InsertionPoint(op), op.location:
                narrowed = sh.slice(operand, start, limit, strides)
            op.results[0].replace_all_uses_with(narrowed)
            op.erase()
            return True
        offset += size
    return False


def _flatten(op: ir.Operation) -> bool:
    """Splice single-use concatenations along the same dimension into ``op``; True if any."""
    dim = _dimension(op)
    operands: list[ir.Value] = []
    spliced = []
    for operand in op.operands:
        inner = defining_op(operand, "stablehlo.concatenate")
        if inner is not None and _dimension(inner) == dim and len(list(operand.uses)) == 1:
            operands.extend(inner.operands)
            spliced.append(inner)
        else:
            operands.append(operand)
    if not spliced:
        return False
    with ir.InsertionPoint(op), op.location:
        flat = sh.concatenate(operands, dim)
    op.results[0].replace_all_uses_with(flat)
    op.erase()
    for inner in spliced:
        inner.erase()
    return True


@dataclasses.dataclass(frozen=True)
class FoldConcatenateSlices(ModulePass):
    """Slices within one operand of a concatenation read that operand; single-use nested
    concatenations along the same dimension are flattened."""

    NAME = "xhlo-fold-concatenate-slices"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.slice"):
            _slice_of_operand(op)
        changed = True
        while changed:  # a flattened concatenation may now be its reader's only operand use
            changed = False
            for op in walk_ops(module, "stablehlo.concatenate"):
                changed |= _flatten(op)

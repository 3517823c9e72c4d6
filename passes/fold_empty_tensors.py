"""xhlo-fold-empty-tensors: data movement that yields no elements is an empty constant.

StableHLO lets a slice start at the end of a dimension (``x[:, 2:2]`` of a
dimension of 2) and a negative padding remove a whole dimension. The upstream
linalg lowering turns both into a ``tensor.extract_slice`` at that offset, which
the provider's verifier rejects ("offset 1 is out-of-bounds: 2 >= 2"), so the
program did not compile: ``jax.grad`` of ``lax.cumlogsumexp`` over an axis of
a power-of-two length slices its last level so. Such a result holds nothing
to compute, and no data-movement op has an effect besides its result, so it
becomes a ``stablehlo.constant`` with no elements.

A padding of an operand without elements is its padding value, broadcast. A
``concatenate`` drops its operands without elements, and one left with a
single operand is that operand. The upstream lowering of a concatenation of one
operand and an empty one is a copy through ``tensor.extract``, which the linalg
vectorizer turns into a ``vector.gather`` of linearized indices: wrong once the
operand is a strided view (it read across rows of the slice's source).

A computation whose results hold nothing (a ``reduce_window`` whose window does
not fit its operand, a convolution with a kernel larger than its input) is
empty constants too: the upstream lowering builds windows and paddings that do
not verify for it.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops

_DATA_MOVEMENT = (
    "stablehlo.slice", "stablehlo.pad", "stablehlo.dynamic_slice", "stablehlo.real_dynamic_slice",
    "stablehlo.reverse", "stablehlo.transpose", "stablehlo.reshape", "stablehlo.broadcast_in_dim",
    "stablehlo.concatenate", "stablehlo.gather",
)
# Computations without effects whose results may hold nothing while their operands do not
# (reduce, sort, select_and_scatter: lowered or folded by earlier passes of the stage).
_COMPUTATIONS = ("stablehlo.reduce_window", "stablehlo.convolution", "stablehlo.dot_general", "stablehlo.map")


def has_no_elements(value: ir.Value) -> bool:
    return isinstance(value.type, ir.RankedTensorType) and value.type.has_static_shape and 0 in sh.shape_of(value)


@dataclasses.dataclass(frozen=True)
class FoldEmptyTensors(ModulePass):
    """Replace data-movement ops and computations whose results have no elements by empty
    constants."""

    NAME = "xhlo-fold-empty-tensors"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, _COMPUTATIONS):
            if all(has_no_elements(r) for r in op.results):
                with ir.InsertionPoint(op), op.location:
                    for result in op.results:
                        result.replace_all_uses_with(sh.constant(0, result.type))
                op.erase()
        for op in walk_ops(module, _DATA_MOVEMENT):
            result = op.results[0]
            with ir.InsertionPoint(op), op.location:
                if has_no_elements(result):
                    replacement = sh.constant(0, result.type)
                elif op.name == "stablehlo.pad" and has_no_elements(op.operands[0]):
                    replacement = sh.broadcast_in_dim(op.operands[1], sh.shape_of(result), [])
                elif op.name == "stablehlo.concatenate":
                    replacement = _without_empty_operands(op)
                else:
                    replacement = None
            if replacement is not None:
                result.replace_all_uses_with(replacement)
                op.erase()


def _without_empty_operands(concatenate: ir.Operation) -> ir.Value | None:
    """The concatenation of the operands with elements (one such operand: itself), None
    when none is empty."""
    kept = [v for v in concatenate.operands if not has_no_elements(v)]
    if len(kept) == 1:
        return kept[0]
    if len(kept) == len(concatenate.operands):
        return None
    return sh.concatenate(kept, ir.IntegerAttr(concatenate.attributes["dimension"]).value)

"""xhlo-legalize-empty-reductions: a ``reduce`` over no dimensions applies its body once per element.

``jnp.unique`` (and other code that reduces over a computed, possibly empty,
axis list) exports ``stablehlo.reduce ... across dimensions = []``. Each
result element then reduces a single operand element, so the result is
``body(init, x)`` elementwise, as XLA evaluates it. The upstream linalg
lowering has no pattern for the empty case; here it becomes the body applied
elementwise (``stablehlo.map``) to the broadcast init values and the inputs.

A reduction over dimensions of extent 1 only is the same, on the inputs
reshaped to the result's shape. JAX's gathers in ``fill`` mode
(``take_along_axis``, ``jnp.take``) check their index vectors with such a
reduction (an ``and`` over the index vector's dimension of extent 1). Lowered
as a reduction, it is a scalar loop over an i1 buffer, and the gather that
reads that mask is neither vectorized nor parallel (``take_along_axis`` of
1024x1024: 2.8 ms); as an elementwise op it fuses into the gather.

A reduction of inputs without elements (``jnp.sum`` of a 0x3 array over its
first axis) is its init values, broadcast: the upstream lowering has no pattern
for it.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops
from .fold_empty_tensors import has_no_elements


def _one_element_per_result(op: ir.Operation) -> bool:
    """Does ``op`` reduce no dimensions, or static dimensions of extent 1 only?"""
    dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    if not dims:
        return True
    operand = op.operands[0].type
    return (isinstance(operand, ir.RankedTensorType) and operand.has_static_shape
            and all(operand.shape[d] == 1 for d in dims))


@dataclasses.dataclass(frozen=True)
class LegalizeEmptyReductions(ModulePass):
    """Rewrite stablehlo.reduce over no (or only unit) dimensions into its body, elementwise;
    of inputs without elements into its init values."""

    NAME = "xhlo-legalize-empty-reductions"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.reduce"):
            count = len(op.results)
            inputs, inits = list(op.operands)[:count], list(op.operands)[count:]
            empty = has_no_elements(inputs[0])
            if not empty and not _one_element_per_result(op):
                continue
            with ir.InsertionPoint(op), op.location:
                results = _elementwise(op, inputs, inits, empty)
            for old, new in zip(op.results, results):
                old.replace_all_uses_with(new)
            op.erase()


def _elementwise(op: ir.Operation, inputs: list[ir.Value], inits: list[ir.Value], empty: bool) -> list[ir.Value]:
    """The init values broadcast to the result's shape, combined by the body with the one
    element each result reduces (``empty``: with none, the init values alone)."""
    shape = sh.shape_of(op.results[0])
    if not empty and shape != sh.shape_of(inputs[0]):  # unit dimensions reduced: drop them
        inputs = [sh.reshape(x, shape) for x in inputs]
    broadcast = [sh.broadcast_in_dim(init, shape, []) for init in inits]
    return broadcast if empty else sh.apply_region_elementwise(op.regions[0], broadcast, inputs)

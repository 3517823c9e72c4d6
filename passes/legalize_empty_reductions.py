"""xhlo-legalize-empty-reductions: a ``reduce`` over no dimensions applies its body once per element.

``jnp.unique`` (and other code that reduces over a computed, possibly empty,
axis list) exports ``stablehlo.reduce ... across dimensions = []``. Each
result element then reduces a single operand element, so the result is
``body(init, x)`` elementwise, as XLA evaluates it. The upstream linalg
lowering has no pattern for the empty case; here it becomes the body applied
elementwise (``stablehlo.map``) to the broadcast init values and the inputs.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops


@dataclasses.dataclass(frozen=True)
class LegalizeEmptyReductions(ModulePass):
    """Rewrite stablehlo.reduce with no reduced dimensions into its body, elementwise."""

    NAME = "xhlo-legalize-empty-reductions"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.reduce"):
            if len(ir.DenseI64ArrayAttr(op.attributes["dimensions"])):
                continue
            count = len(op.results)
            inputs, inits = list(op.operands)[:count], list(op.operands)[count:]
            with ir.InsertionPoint(op), op.location:
                shape = sh.shape_of(inputs[0])
                broadcast = [sh.broadcast_in_dim(init, shape, []) for init in inits]
                results = sh.apply_region_elementwise(op.regions[0], broadcast, inputs)
            for old, new in zip(op.results, results):
                old.replace_all_uses_with(new)
            op.erase()

"""xhlo-legalize-bool-add: ``stablehlo.add`` on booleans is a logical OR.

The upstream linalg lowering emits ``arith.addi`` on ``i1``, which is XOR
(true + true = false); StableHLO defines addition of booleans as OR.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops


@dataclasses.dataclass(frozen=True)
class LegalizeBoolAdd(ModulePass):
    """Rewrite stablehlo.add on i1 tensors into stablehlo.or."""

    NAME = "xhlo-legalize-bool-add"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.add"):
            elem = sh.element_type(op.results[0])
            if isinstance(elem, ir.IntegerType) and ir.IntegerType(elem).width == 1:
                with ir.InsertionPoint(op), op.location:
                    new = sh.or_(*op.operands)
                op.results[0].replace_all_uses_with(new)
                op.erase()

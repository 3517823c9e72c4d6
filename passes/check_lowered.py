"""xhlo-check-lowered: fail with a named op if StableHLO/CHLO survived the lowering.

Without this, an op that no pattern lowered surfaces later as an anonymous
"op was not bufferized"; here the error names the op and its location.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, PassError


@dataclasses.dataclass(frozen=True)
class CheckLowered(ModulePass):
    """Reject any op of the given dialects left in the module."""

    NAME = "xhlo-check-lowered"
    dialects: tuple[str, ...] = ("stablehlo", "chlo", "vhlo", "sdy", "mhlo")

    def run(self, module: ir.Operation) -> None:
        prefixes = tuple(d + "." for d in self.dialects)
        leftover: list[ir.Operation] = []

        def visit(op):
            if op.name.startswith(prefixes):
                leftover.append(op.operation)
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.PRE_ORDER)
        if leftover:
            op = leftover[0]
            raise PassError(op, f"xhlo cannot lower '{op.name}' yet (no lowering pattern applied)")

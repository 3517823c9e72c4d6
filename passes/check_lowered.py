"""xhlo-check-lowered: fail with a named op if StableHLO/CHLO survived the lowering.

Without this, an op that no pattern lowered surfaces later as an anonymous
"op was not bufferized"; here the error names the op and its location. An op
of a dialect no one registered (parsed because unregistered dialects are
allowed, e.g. ``interpreter.run_parallel``) is rejected the same way.
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
        context = module.context
        self._check_dialect_names(context)
        prefixes = tuple(d + "." for d in self.dialects)
        leftover: list[ir.Operation] = []

        def visit(op):
            if op.name.startswith(prefixes) or not context.is_registered_operation(op.name):
                leftover.append(op.operation)
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.PRE_ORDER)
        if leftover:
            op = leftover[0]
            if not context.is_registered_operation(op.name):
                raise PassError(op, f"'{op.name}' is an op of no dialect xhlo knows (nothing lowers it)")
            raise PassError(op, f"xhlo cannot lower '{op.name}' yet (no lowering pattern applied)")

    def _check_dialect_names(self, context: ir.Context) -> None:
        """A misspelt dialect would check nothing: every name must be one MLIR can load
        or one of the unregistered dialects xhlo meets in its input."""
        for name in self.dialects:
            if name in _UNREGISTERED_INPUT_DIALECTS:
                continue
            try:
                context.dialects[name]
            except IndexError:
                raise PassError(None, f"no dialect named '{name}' (option 'dialects')") from None


# Dialects of JAX's and XLA's exports the provider's bindings do not register.
_UNREGISTERED_INPUT_DIALECTS = frozenset({"vhlo", "sdy", "mhlo"})

"""xhlo-legalize-custom-calls: resolve the custom calls xhlo knows, reject the rest.

An unknown ``stablehlo.custom_call`` cannot be compiled; failing here, with the
target's name and location, beats a "failed to legalize" from deep in the
linalg lowering. Identity-like targets (``Sharding`` on one device) and
``stablehlo.optimization_barrier`` are forwarded.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, PassError, walk_ops

# Targets that return their operands unchanged when the program runs on one device.
IDENTITY_TARGETS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")


def _forward(op: ir.Operation) -> None:
    for result, operand in zip(op.results, op.operands):
        result.replace_all_uses_with(operand)
    op.erase()


@dataclasses.dataclass(frozen=True)
class LegalizeCustomCalls(ModulePass):
    """Forward identity custom calls and optimization barriers; reject unknown targets."""

    NAME = "xhlo-legalize-custom-calls"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.optimization_barrier"):
            _forward(op)
        for op in walk_ops(module, "stablehlo.custom_call"):
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if target in IDENTITY_TARGETS and len(op.operands) == len(op.results):
                _forward(op)
            elif target.startswith("check."):
                raise PassError(
                    op, f"'{target}' outside the entry function cannot be evaluated"
                )
            else:
                raise PassError(op, f"unsupported custom call target '{target}'")

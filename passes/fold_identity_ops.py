"""xhlo-fold-identity-ops: reshapes, transposes, broadcasts and converts that change nothing go.

The wheel's StableHLO canonicalization does not fold an op whose result type is
its operand's type, and ``stablehlo-legalize-to-linalg`` crashes the process
(a segmentation fault) on such a reshape of a rank-0 unsigned tensor, as a
``reduce`` over no dimensions of a ``uint64`` scalar once produced. This pass
replaces every ``stablehlo.reshape``, ``convert``, ``transpose`` (identity
permutation) and ``broadcast_in_dim`` (identity dimensions) whose result type
equals its operand's by that operand.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, walk_ops

_PERMUTATION = {"stablehlo.transpose": "permutation", "stablehlo.broadcast_in_dim": "broadcast_dimensions"}


def _is_identity(op: ir.Operation) -> bool:
    if op.operands[0].type != op.results[0].type:
        return False
    name = _PERMUTATION.get(op.name)
    return name is None or list(ir.DenseI64ArrayAttr(op.attributes[name])) == list(range(len(
        ir.RankedTensorType(op.results[0].type).shape)))


@dataclasses.dataclass(frozen=True)
class FoldIdentityOps(ModulePass):
    """Replace reshape/convert/transpose/broadcast_in_dim ops that change nothing by their operand."""

    NAME = "xhlo-fold-identity-ops"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, ("stablehlo.reshape", "stablehlo.convert", *_PERMUTATION)):
            if isinstance(op.results[0].type, ir.RankedTensorType) and _is_identity(op):
                op.results[0].replace_all_uses_with(op.operands[0])
                op.erase()

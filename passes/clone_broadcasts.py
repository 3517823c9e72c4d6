"""xhlo-clone-broadcasts: a broadcast read by several linalg ops gets a copy per reader.

Upstream's elementwise fusion fuses a producer only into its one user, so a
broadcast read twice (the factor of a complex product, a bias added in two
places) is written out at full size and read back by each reader. A
broadcast computes nothing: a copy per reader, each fused into its reader,
costs nothing and saves the full-size buffer and two passes over memory.

Only broadcasts are copied (a ``linalg.generic`` whose body yields its one
input, read through a map that drops dims of the result): copying ops that
compute would repeat their work, and chains of them could grow
exponentially. Runs just before ``linalg-fuse-elementwise-ops``; no CSE may
run in between (it would merge the copies back).
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, defining_op, op_name, walk_ops


def _is_broadcast(op: ir.Operation) -> bool:
    """One input, one result, every loop parallel, the body yields the input, dims dropped."""
    if len(op.results) != 1 or len(op.operands) != 2:
        return False
    iterators = [str(a) for a in op.attributes["iterator_types"]]
    if any("parallel" not in it for it in iterators):
        return False
    body = op.regions[0].blocks[0]
    ops = list(body.operations)
    if len(ops) != 1 or ops[0].operands[0] != body.arguments[0]:
        return False
    source = ir.RankedTensorType(op.operands[0].type)
    result = ir.RankedTensorType(op.results[0].type)
    return source.rank < result.rank


def _clone_for(op: ir.Operation, user_operand) -> None:
    """A copy of ``op`` (and of its ``tensor.empty`` init) right before ``op``, for one reader."""
    init = defining_op(op.operands[1], "tensor.empty")
    with ir.InsertionPoint(op):
        fresh_init = init.clone() if init is not None else None  # before the clone: it dominates
        clone = op.clone()
    if fresh_init is not None:
        clone.operands[1] = fresh_init.results[0]
    user_operand.owner.operands[user_operand.operand_number] = clone.results[0]


@dataclasses.dataclass(frozen=True)
class CloneBroadcasts(ModulePass):
    """Give every linalg reader of a broadcast its own copy, so fusion takes it."""

    NAME = "xhlo-clone-broadcasts"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "linalg.generic"):
            if not _is_broadcast(op):
                continue
            uses = list(op.results[0].uses)
            if len(uses) < 2 or any(not op_name(u.owner).startswith("linalg.") for u in uses):
                continue
            for use in uses[1:]:
                _clone_for(op, use)

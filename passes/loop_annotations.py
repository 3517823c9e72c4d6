"""xhlo-loop-annotations: an ``scf.for``'s ``llvm.loop_annotation`` reaches LLVM.

``convert-scf-to-cf`` copies a loop's ``llvm.loop_annotation`` attribute to its
back edge, and ``convert-cf-to-llvm`` keeps it on the ``llvm.br`` as a
discardable attribute, which the translation to LLVM IR ignores: only the
branch's own ``loop_annotation`` becomes ``!llvm.loop`` metadata. This pass
moves the one into the other, after ``convert-cf-to-llvm``.

xhlo marks loops whose steps are whole memcpy calls or row loops
(``xhlo-split-buffer-fills``) ``unroll disable``: LLVM unrolled the loop of a
padded convolution's row copies eight times (-unroll-threshold=0 leaves partial
unrolling on): its code-generation part took 19 ms of LLVM time, 12 without.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass

DISCARDABLE = "llvm.loop_annotation"
NO_UNROLL = "#llvm.loop_annotation<unroll = #llvm.loop_unroll<disable = true>>"


def mark_no_unroll(loop: ir.Operation) -> None:
    """Ask LLVM not to unroll ``loop`` (an ``scf.for``)."""
    loop.attributes[DISCARDABLE] = ir.Attribute.parse(NO_UNROLL)


@dataclasses.dataclass(frozen=True)
class LoopAnnotations(ModulePass):
    """Move ``llvm.loop_annotation`` on LLVM branches into their ``loop_annotation``."""

    NAME = "xhlo-loop-annotations"

    def run(self, module: ir.Operation) -> None:
        # Only block terminators branch, and the LLVM dialect's functions are flat CFGs: a
        # walk of every op in Python took 11 ms of a CNN training step's compile.
        for func in module.regions[0].blocks[0].operations:
            for region in func.operation.regions:
                for block in region.blocks:
                    branch = block.operations[len(block.operations) - 1].operation
                    if DISCARDABLE in branch.attributes:
                        branch.attributes["loop_annotation"] = branch.attributes[DISCARDABLE]
                        del branch.attributes[DISCARDABLE]

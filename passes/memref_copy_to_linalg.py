"""xhlo-memref-copy-to-linalg: memref.copy -> linalg.copy.

``memref.copy`` of a non-contiguous view lowers to a call of ``memrefCopy`` from
``libmlir_c_runner_utils``, which the bindings wheel does not ship; a
``linalg.copy`` lowers to plain loops instead.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir, linalg

from .base import ModulePass, walk_ops


@dataclasses.dataclass(frozen=True)
class MemrefCopyToLinalg(ModulePass):
    """Rewrite memref.copy into linalg.copy so no runtime library is needed."""

    NAME = "xhlo-memref-copy-to-linalg"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "memref.copy"):
            src, dst = op.operands
            with ir.InsertionPoint(op), op.location:
                linalg.copy(src, outs=[dst])
            op.erase()

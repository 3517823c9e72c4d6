"""xhlo-distinct-results: give every returned memref its own buffer.

``buffer-results-to-out-params{hoist-static-allocs}`` crashes when a function
returns the same buffer twice (``return %a, %a``), which happens whenever a
program returns one value in two places. Each repeated result is copied into a
fresh allocation first.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, walk_ops


@dataclasses.dataclass(frozen=True)
class DistinctResults(ModulePass):
    """Copy repeated func.return operands into fresh buffers."""

    NAME = "xhlo-distinct-results"

    def run(self, module: ir.Operation) -> None:
        for ret in walk_ops(module, "func.return"):
            seen: list[ir.Value] = []
            operands = list(ret.operands)
            changed = False
            for i, value in enumerate(operands):
                if value in seen and isinstance(value.type, ir.MemRefType):
                    with ir.InsertionPoint(ret), ret.location:
                        plain = ir.MemRefType.get(value.type.shape, value.type.element_type)
                        fresh = ir.Operation.create("memref.alloc", results=[plain],
                                                    attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])}).result
                        ir.Operation.create("memref.copy", operands=[value, fresh])
                    operands[i] = fresh
                    changed = True
                seen.append(value)
            if changed:
                with ir.InsertionPoint(ret), ret.location:
                    ir.Operation.create("func.return", operands=operands)
                ret.erase()

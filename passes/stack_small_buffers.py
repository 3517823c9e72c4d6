"""xhlo-stack-small-buffers: small buffers freed where they were made live on the stack.

``xhlo-scratch-arena`` places a function's top-level temporaries; a buffer
made inside a loop body or a branch keeps ``malloc`` and ``free``, once per
iteration. A ``while_loop`` over a few numbers (an adaptive ODE step: a
two-element state, a step size, a stacked derivative) made and freed six such
buffers per iteration, about half of its time.

This pass turns each static ``memref.alloc`` of at most ``max-bytes`` bytes
that sits in a nested block, is freed by one ``memref.dealloc`` in that same
block and is never handed on (yielded, returned or passed to another block,
itself or through a view) into a ``memref.alloca``, and drops the dealloc.
Used only within the iteration that made it, it is one stack buffer for all of
them: ``xhlo-hoist-static-allocas``, which runs next, moves it to the
function's entry. A function's buffers so placed total at most
``max-function-bytes`` (each hoisted buffer has a stack slot of its own; the
parallel pool's threads run bodies on their own stacks).
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, functions, walk_ops
from .hoist_static_allocas import handed_on
from .scratch_arena import static_bytes


def _freed_in_its_block(alloc: ir.Operation) -> ir.Operation | None:
    """The one ``memref.dealloc`` of ``alloc``, when it is in the same block."""
    deallocs = [use.owner.operation for use in alloc.results[0].uses if use.owner.operation.name == "memref.dealloc"]
    if len(deallocs) != 1 or deallocs[0].block != alloc.block:
        return None
    return deallocs[0]


@dataclasses.dataclass(frozen=True)
class StackSmallBuffers(ModulePass):
    """Small static buffers made and freed in one loop iteration or branch become stack buffers."""

    NAME = "xhlo-stack-small-buffers"
    max_bytes: int = 1024
    max_function_bytes: int = 65536

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            if not len(func.regions[0].blocks):
                continue
            entry, placed = func.regions[0].blocks[0], 0
            for alloc in walk_ops(func, "memref.alloc"):
                size = static_bytes(alloc.results[0].type) if not len(alloc.operands) else None
                if size is None or size > self.max_bytes or placed + size > self.max_function_bytes:
                    continue
                dealloc = _freed_in_its_block(alloc) if alloc.block != entry else None
                if dealloc is None or handed_on(alloc.results[0]):
                    continue
                self._to_stack(alloc)
                dealloc.erase()
                placed += size

    @staticmethod
    def _to_stack(alloc: ir.Operation) -> None:
        attributes = {"alignment": alloc.attributes["alignment"]} if "alignment" in alloc.attributes else {}
        with ir.InsertionPoint(alloc), alloc.location:
            alloca = ir.Operation.create("memref.alloca", results=[alloc.results[0].type], operands=[],
                                         attributes={**attributes, "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])})
        alloc.results[0].replace_all_uses_with(alloca.results[0])
        alloc.erase()

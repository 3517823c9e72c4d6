"""xhlo-hoist-static-allocas: stack buffers of a fixed size are made once per function call.

``convert-vector-to-scf`` stages a multi-dimensional ``vector.transfer_read`` or
``transfer_write`` it cannot lower in place (a permuted read of unit dimensions
that fusion left) through a ``memref.alloca``, which it places in the closest
automatic allocation scope. ``scf.for`` is one, so in a loop nest the alloca
runs once per iteration, and the LLVM lowering frees nothing before the
function returns: a 32x32x32 loop nest staging two 128-byte vectors grew the
stack by 8 MiB and crashed (llvm/llvm-project#223187, open upstream).

This pass moves every ``memref.alloca`` without operands (a static shape)
out of its regions to the start of the function's entry block, unless the
buffer is handed on (yielded, returned, passed to another block): used only
within the iteration that made it, one buffer serves them all.
It runs after ``xhlo-parallelize-loops``: a parallel loop's body is then a
function of its own, called once per chunk of iterations on each thread, so
threads never share a hoisted buffer.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import MEMREF_VIEWS, ModulePass, functions, walk_ops

# ops through which a buffer would outlive the iteration that made it
_HAND_ON = frozenset({"scf.yield", "scf.condition", "func.return", "cf.br", "cf.cond_br"})


@dataclasses.dataclass(frozen=True)
class HoistStaticAllocas(ModulePass):
    """Move static-shape memref.alloca ops out of loops and branches to their function's entry."""

    NAME = "xhlo-hoist-static-allocas"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            if not len(func.regions[0].blocks):
                continue
            entry = func.regions[0].blocks[0]
            for alloca in walk_ops(func, "memref.alloca"):
                if len(alloca.operands) == 0 and alloca.block != entry and not handed_on(alloca.results[0]):
                    alloca.move_before(entry.operations[0])


def handed_on(value: ir.Value) -> bool:
    """``value`` or a view of it leaves the block that made it."""
    for use in value.uses:
        user = use.owner.operation
        if user.name in _HAND_ON:
            return True
        if user.name in MEMREF_VIEWS and use.operand_number == 0 and handed_on(user.results[0]):
            return True
    return False

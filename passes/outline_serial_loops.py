"""xhlo-outline-serial-loops: large serial loop nests become functions of their own.

``xhlo-partition-codegen`` shares LLVM's work between threads one outlined
function at a time, and what no function holds stays in the public function's
part. A sort's merge passes, a padding copy or a scan that
``xhlo-parallelize-loops`` left serial made that part the largest: sort_1m's
``main`` alone was most of its LLVM time. This pass outlines each top-level
``scf.for`` of a public function with at least ``min-ops`` ops in its nest
exactly as that pass outlines a parallel body (captured values in a struct on
the stack, ``(captures, begin, end)``), but calls it once, over the loop's
whole range, through its function pointer (``func.call_indirect`` of a
``func.constant``), which is what xhlo-partition-codegen redirects.

A loop is left in place when it yields values, when a value it uses cannot
travel in the struct, or when it calls ``xhlo_parallel_for`` (a body holding
nested parallel loops would stay in part 0 anyway). One indirect call per loop
nest per run is the run-time cost.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, symbol_names
from .parallelize_loops import PARALLEL_FOR, Nest, _Outliner, fresh_name, loop_owners


def _is_public(func: ir.Operation) -> bool:
    attrs = func.attributes
    return "sym_visibility" not in attrs or ir.StringAttr(attrs["sym_visibility"]).value == "public"


@dataclasses.dataclass(frozen=True)
class OutlineSerialLoops(ModulePass):
    """Outline large top-level serial loop nests into functions called through a pointer."""

    NAME = "xhlo-outline-serial-loops"
    min_ops: int = 30

    def run(self, module: ir.Operation) -> None:
        names = None
        for func in filter(_is_public, loop_owners(module)):  # the programs' entries
            for op in [op.operation for op in func.regions[0].blocks[0].operations]:
                nest = self._eligible(op)
                if nest is None:
                    continue
                names = names if names is not None else symbol_names(module)
                base = ir.StringAttr(func.attributes["sym_name"]).value
                _Outliner(module, func, nest, fresh_name(base, names, "serial"), serial=True).run()

    def _eligible(self, op: ir.Operation) -> Nest | None:
        if op.name != "scf.for" or len(op.results):
            return None
        nest = Nest.of(op)
        if len(nest.ops) < self.min_ops:
            return None
        if any(inner.name == "func.call" and ir.FlatSymbolRefAttr(inner.attributes["callee"]).value == PARALLEL_FOR
               for inner in nest.ops):
            return None
        return nest if nest.travels() else None

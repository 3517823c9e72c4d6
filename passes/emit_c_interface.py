"""xhlo-emit-c-interface: mark public functions with ``llvm.emit_c_interface``.

The ExecutionEngine calls functions through their ``_mlir_ciface_`` wrappers,
which take memref descriptors by pointer.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass


@dataclasses.dataclass(frozen=True)
class EmitCInterface(ModulePass):
    """Add llvm.emit_c_interface to every public function with a body."""

    NAME = "xhlo-emit-c-interface"

    def run(self, module: ir.Operation) -> None:
        for op in module.regions[0].blocks[0].operations:
            if op.operation.name != "func.func":
                continue
            attrs = op.operation.attributes
            private = "sym_visibility" in attrs and ir.StringAttr(attrs["sym_visibility"]).value != "public"
            if not private and len(op.operation.regions[0].blocks) > 0:
                attrs["llvm.emit_c_interface"] = ir.UnitAttr.get()

"""xhlo-readonly-arguments: the caller's input arrays are never written.

One-shot bufferization may update a function argument in place (e.g. a
``dynamic_update_slice`` of an argument), which would modify the numpy array
the user passed. Marking public-function arguments ``bufferization.writable =
false`` makes bufferization copy instead.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass


@dataclasses.dataclass(frozen=True)
class ReadonlyArguments(ModulePass):
    """Mark every tensor argument of public functions bufferization.writable = false."""

    NAME = "xhlo-readonly-arguments"

    def run(self, module: ir.Operation) -> None:
        for op in module.regions[0].blocks[0].operations:
            op = op.operation
            if op.name != "func.func" or len(op.regions[0].blocks) == 0:
                continue
            if "sym_visibility" in op.attributes and ir.StringAttr(op.attributes["sym_visibility"]).value == "private":
                continue
            n_args = len(op.regions[0].blocks[0].arguments)
            old = list(ir.ArrayAttr(op.attributes["arg_attrs"])) if "arg_attrs" in op.attributes else [ir.DictAttr.get({})] * n_args
            readonly = ir.BoolAttr.get(False)
            new = []
            for attrs in old:
                d = ir.DictAttr(attrs)
                entries = {d[i].name: d[i].attr for i in range(len(d))}
                entries["bufferization.writable"] = readonly
                new.append(ir.DictAttr.get(entries))
            op.attributes["arg_attrs"] = ir.ArrayAttr.get(new)

"""xhlo-precise-math-to-libm: call libm for math ops whose LLVM lowering is inexact.

``convert-math-to-llvm`` expands ``math.expm1`` to ``exp(x) - 1`` and
``math.log1p`` to ``log(1 + x)``, which lose all precision near zero. Scalar
f32/f64 instances become calls of ``expm1f``/``log1pf`` (and the f64 names);
f16/bf16 are computed in f32, as XLA does.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, walk_ops

LIBM_NAMES = {"math.expm1": "expm1", "math.log1p": "log1p"}


def _declare(module: ir.Operation, name: str, ftype: ir.Type) -> None:
    body = module.regions[0].blocks[0]
    for op in body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        ir.Operation.create(
            "func.func",
            attributes={
                "sym_name": ir.StringAttr.get(name),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get([ftype], [ftype])),
                "sym_visibility": ir.StringAttr.get("private"),
            },
            regions=1,
        )


@dataclasses.dataclass(frozen=True)
class PreciseMathToLibm(ModulePass):
    """Lower scalar math.expm1/log1p to libm calls (f16/bf16 through f32)."""

    NAME = "xhlo-precise-math-to-libm"

    def run(self, module: ir.Operation) -> None:
        f32, f64 = ir.F32Type.get(), ir.F64Type.get()
        for op in walk_ops(module, tuple(LIBM_NAMES)):
            t = op.operands[0].type
            if not isinstance(t, ir.FloatType):
                continue  # vectors keep the LLVM lowering
            wide = f64 if t == f64 else f32
            symbol = LIBM_NAMES[op.name] + ("" if wide == f64 else "f")
            _declare(module, symbol, wide)
            with ir.InsertionPoint(op), op.location:
                x = op.operands[0]
                if t != wide:
                    x = ir.Operation.create("arith.extf", results=[wide], operands=[x]).result
                call = ir.Operation.create(
                    "func.call",
                    results=[wide],
                    operands=[x],
                    attributes={"callee": ir.FlatSymbolRefAttr.get(symbol)},
                ).result
                if t != wide:
                    call = ir.Operation.create("arith.truncf", results=[t], operands=[call]).result
            op.results[0].replace_all_uses_with(call)
            op.erase()

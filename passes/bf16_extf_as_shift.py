"""xhlo-bf16-extf-as-shift: bf16 -> f32 extensions as the integer shift they are.

``xhlo-widen-half-floats`` computes a bf16 ``maximum`` as
``truncf(maximumf(extf a, extf b))``. LLVM's InstCombine narrows that back to
an ``llvm.maximum`` (or, written with compares and selects, an ``fcmp``) on
bf16, and the x86 backend cannot legalize such bf16 vectors of some widths
(9, 17 lanes): LLVM aborts the process ("Do not know how to soft promote this
operator's operand"). A bf16 is the top half of an f32, so this pass writes
each bf16 -> f32 ``arith.extf`` (scalar or vector) as

    bitcast(shli(extui(bitcast(x) : i16) : i32, 16)) : f32

which is the code LLVM emits for the extension anyway, and which InstCombine
does not see as an ``fpext``: nothing is narrowed back to bf16. Truncations
stay ``truncf`` (one ``vcvtneps2bf16`` on AVX512-BF16).
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import arith, ir

from .base import ModulePass, walk_ops


def _element(t: ir.Type) -> ir.Type:
    return ir.ShapedType(t).element_type if isinstance(t, ir.ShapedType) else t


def _like(t: ir.Type, element: ir.Type) -> ir.Type:
    """``t`` (a scalar or a vector) with ``element`` as its element type."""
    return ir.VectorType.get(ir.VectorType(t).shape, element) if isinstance(t, ir.VectorType) else element


def _as_shift(op: ir.Operation) -> None:
    (x,) = op.operands
    result_type = op.results[0].type
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    with ir.InsertionPoint(op), op.location:
        wide = arith.extui(_like(result_type, i32), arith.bitcast(_like(result_type, i16), x))
        sixteen = arith.constant(_like(result_type, i32), _splat(result_type, i32, 16))
        value = arith.bitcast(result_type, arith.shli(wide, sixteen))
    op.results[0].replace_all_uses_with(value)
    op.erase()


def _splat(t: ir.Type, element: ir.Type, value: int) -> ir.Attribute:
    scalar = ir.IntegerAttr.get(element, value)
    return ir.DenseElementsAttr.get_splat(_like(t, element), scalar) if isinstance(t, ir.VectorType) else scalar


@dataclasses.dataclass(frozen=True)
class Bf16ExtfAsShift(ModulePass):
    """Write bf16 -> f32 arith.extf as an integer shift (LLVM does not narrow it back)."""

    NAME = "xhlo-bf16-extf-as-shift"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "arith.extf"):
            source, result = _element(op.operands[0].type), _element(op.results[0].type)
            if isinstance(source, ir.BF16Type) and isinstance(result, ir.F32Type):
                _as_shift(op)

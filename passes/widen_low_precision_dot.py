"""xhlo-widen-low-precision-dot: compute f16/bf16 dots and convolutions in f32.

Accumulating a long dot product in bf16 loses most of its digits; XLA:CPU
upcasts such dots to f32 and rounds the result once, and JAX's numbers (the
conformance expectations) reflect that. The rewrite converts the operands,
runs the op with an f32 result and converts back.

A product with a wider preferred result (bf16 operands and an f32 result,
complex64 operands and a complex128 result) gets its operands converted
exactly to the result type: the linalg lowering builds no mixed-type complex
contraction, and a mixed-type real one is a scalar loop, not a BLAS call.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops

WIDENED_OPS = ("stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution")


@dataclasses.dataclass(frozen=True)
class WidenLowPrecisionDot(ModulePass):
    """Run f16/bf16 dot_general/dot/convolution in f32 and round the result once; float
    and complex operands take a wider result's type."""

    NAME = "xhlo-widen-low-precision-dot"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, WIDENED_OPS):
            result_elem = sh.element_type(op.results[0])
            if isinstance(result_elem, ir.ComplexType):  # the linalg lowering mixes no complex types
                _convert_operands(op, result_elem, lambda elem, to=result_elem: elem != to)
            elif sh.is_half_float(result_elem):
                _compute_in_f32(op, result_elem)
            elif isinstance(result_elem, ir.FloatType):  # bf16 x bf16 -> f32: an f32 GEMM (BLAS)
                width = ir.FloatType(result_elem).width
                _convert_operands(op, result_elem, lambda elem, width=width: isinstance(elem, ir.FloatType)
                                  and ir.FloatType(elem).width < width)


def _compute_in_f32(op: ir.Operation, result_elem: ir.Type) -> None:
    f32 = ir.F32Type.get()
    with ir.InsertionPoint(op), op.location:
        operands = [sh.convert(v, f32) if sh.is_half_float(sh.element_type(v)) else v for v in op.operands]
        if any(sh.element_type(v) != f32 for v in operands):
            return  # mixed integer operands: leave as is
        wide_type = sh.tensor_type(sh.shape_of(op.results[0]), f32)
        attrs = {name: op.attributes[name] for name in op.attributes}
        wide = sh.create(op.name, operands, [wide_type], attrs).result
        narrow = sh.convert(wide, result_elem)
    op.results[0].replace_all_uses_with(narrow)
    op.erase()


def _convert_operands(op: ir.Operation, to: ir.Type, converted) -> None:
    """Convert (exactly) each operand whose element type ``converted`` accepts to ``to``."""
    for index, value in enumerate(op.operands):
        if converted(sh.element_type(value)):
            with ir.InsertionPoint(op), op.location:
                op.operands[index] = sh.convert(value, to)

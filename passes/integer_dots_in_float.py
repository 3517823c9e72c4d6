"""xhlo-integer-dots-in-float: integer products whose sums floats hold exactly run in f32/f64.

A quantized matmul (``i8 x i8 -> i32``, JAX's ``preferred_element_type``) lowers
to integer loops, which no BLAS runs and which vectorize poorly (512^3 in 8 ms,
XLA 0.5). Every partial sum of such a product is an integer no larger than
``K * max|a| * max|b|``; when that bound is at most 2^24 (2^53), f32 (f64)
represents every partial sum exactly, so the product computed in floats, with
BLAS, and converted back equals the integer one. The bound must also keep the
sum inside the result type, where integer arithmetic would wrap: such products
stay integer.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops

EXACT_SUMS = ((24, ir.F32Type), (53, ir.F64Type))  # (mantissa bits with the implicit one, type)


def _range(elem: ir.Type) -> tuple[int, int] | None:
    """(lowest, highest) value of an integer type (None for other types and i1)."""
    if not isinstance(elem, ir.IntegerType) or ir.IntegerType(elem).width < 2:
        return None
    return sh.integer_range(ir.IntegerType(elem).width, not sh.is_unsigned(elem))


def _float_type(op: ir.Operation) -> ir.Type | None:
    """f32 or f64 if every partial sum of ``op`` is exact in it, else None."""
    lhs, rhs = (sh.element_type(v) for v in op.operands)
    result = sh.element_type(op.results[0])
    ranges = [_range(lhs), _range(rhs), _range(result)]
    if None in ranges or not all(ir.RankedTensorType(v.type).has_static_shape for v in op.operands):
        return None
    if sh.is_unsigned(result) and not (sh.is_unsigned(lhs) and sh.is_unsigned(rhs)):
        return None  # negative sums wrap in an unsigned result
    (lhs_low, lhs_high), (rhs_low, rhs_high), (_, result_high) = ranges
    largest_sum = sh.contracted_length(op) * max(-lhs_low, lhs_high) * max(-rhs_low, rhs_high)
    if largest_sum > result_high:  # |sum| <= result_high fits whatever the sign
        return None
    for bits, float_type in EXACT_SUMS:
        if largest_sum <= 2**bits:
            return float_type.get()
    return None


def _rewrite(op: ir.Operation, float_type: ir.Type) -> None:
    result_type = ir.RankedTensorType(op.results[0].type)
    with ir.InsertionPoint(op), op.location:
        operands = [sh.convert(v, float_type) for v in op.operands]
        product = ir.Operation.create(
            op.name,
            results=[sh.tensor_type(result_type.shape, float_type)],
            operands=operands,
            attributes={name: op.attributes[name] for name in op.attributes},
        ).result
        op.results[0].replace_all_uses_with(sh.convert(product, result_type.element_type))
    op.erase()


@dataclasses.dataclass(frozen=True)
class IntegerDotsInFloat(ModulePass):
    """Compute integer dots whose partial sums f32/f64 hold exactly in floats (BLAS)."""

    NAME = "xhlo-integer-dots-in-float"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, ("stablehlo.dot_general", "stablehlo.dot")):
            float_type = _float_type(op)
            if float_type is not None:
                _rewrite(op, float_type)

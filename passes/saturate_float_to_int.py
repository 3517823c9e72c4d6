"""xhlo-saturate-float-to-int: float -> integer conversions that are defined for every input.

``arith.fptosi``/``fptoui`` of NaN or of a value outside the integer range is
poison in LLVM, so the result of such a conversion depends on what the
optimizer happened to see: a constant-folded NaN gives one value, the same NaN
loaded at run time another, a fused loop a third. StableHLO leaves these cases
implementation-defined; the reference interpreter converts NaN to 0 and
saturates out-of-range values to the integer type's minimum or maximum. This
pass makes every conversion do exactly that, for scalars and vectors alike,
with two compares and three selects around the original conversion.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
from xhlo._mlir import arith, ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops

_NUMPY_FLOATS = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}


def splat_constant(value: float, like: ir.Type) -> ir.Value:
    """An ``arith.constant`` of type ``like`` (scalar or vector) holding ``value``."""
    elem = sh.scalar_type(like)
    if isinstance(elem, ir.IntegerType):
        width = ir.IntegerType(elem).width
        bits = int(value) % 2**width  # two's complement: signless attributes take signed values
        scalar = ir.IntegerAttr.get(elem, bits - 2**width if bits >= 2 ** (width - 1) else bits)
    else:
        scalar = ir.FloatAttr.get(elem, float(value))
    attr = ir.DenseElementsAttr.get_splat(like, scalar) if isinstance(like, ir.ShapedType) else scalar
    return arith.constant(like, attr)


def _float_bounds(float_type: str, low: int, high: int) -> tuple[float, float] | None:
    """(lowest float that converts in range, first float above the range), as that type holds them.

    The integer bounds are powers of two (or 0), exact in every float type unless
    they overflow it; then every finite value of the type is in range on that side.
    """
    dtype = _NUMPY_FLOATS.get(float_type)
    if dtype is None:
        return None
    with np.errstate(over="ignore"):
        lo = float(dtype(float(low)))  # via a Python float: ml_dtypes rejects ints outside int64
        hi = float(dtype(float(high + 1)))
    if np.isinf(lo):
        lo = float(-np.finfo(dtype).max)
    return lo, hi


def _saturate(op: ir.Operation) -> None:
    src, result_type = op.operands[0], op.results[0].type
    float_type, int_type = str(sh.scalar_type(src.type)), ir.IntegerType(sh.scalar_type(result_type))
    low, high = sh.integer_range(int_type.width, op.name == "arith.fptosi")
    bounds = _float_bounds(float_type, low, high)
    if bounds is None:
        return
    with ir.InsertionPoint(op), op.location:
        lo, hi = (splat_constant(b, src.type) for b in bounds)
        above = arith.cmpf(arith.CmpFPredicate.OGE, src, hi)  # false for NaN
        below = arith.cmpf(arith.CmpFPredicate.OLT, src, lo)  # false for NaN
        in_range = arith.andi(arith.cmpf(arith.CmpFPredicate.OGE, src, lo),
                              arith.cmpf(arith.CmpFPredicate.OLT, src, hi))
        safe = arith.select(in_range, src, splat_constant(0.0, src.type))  # NaN -> 0
        converted = ir.Operation.create(op.name, results=[result_type], operands=[safe]).result
        converted = arith.select(above, splat_constant(high, result_type), converted)
        converted = arith.select(below, splat_constant(low, result_type), converted)
    op.results[0].replace_all_uses_with(converted)
    op.erase()


@dataclasses.dataclass(frozen=True)
class SaturateFloatToInt(ModulePass):
    """Make fptosi/fptoui total: NaN -> 0, out-of-range values saturate."""

    NAME = "xhlo-saturate-float-to-int"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, ("arith.fptosi", "arith.fptoui")):
            _saturate(op)

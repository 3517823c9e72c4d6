"""xhlo-split-f64-to-half-converts: f64 -> f16/bf16 conversions go through f32, rounded once.

LLVM lowers ``fptrunc double -> half/bfloat`` on x86 to the compiler-rt calls
``__truncdfhf2``/``__truncdfbf2``, which the JIT process does not have, so a
program converting f64 to f16 or bf16 failed to link. Converting through f32
with round-to-nearest twice would round twice (wrong on rare ties), so the
f32 step rounds to odd: the f32 value nearest toward zero, with its last bit
set when inexact. With 13 or more spare bits in f32, rounding that to f16 or
bf16 is the correctly rounded result of the f64 value (Boldo and Melquiond's
round-to-odd theorem); NaN stays NaN and overflow still becomes infinity.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops


def _round_to_odd_f32(x: ir.Value) -> ir.Value:
    """f64 -> f32 rounded to odd, from the round-to-nearest result and its error."""
    f32, f64 = ir.F32Type.get(), ir.F64Type.get()
    nearest = sh.convert(x, f32)
    back = sh.convert(nearest, f64)
    inexact = sh.compare("NE", back, x)
    away = sh.compare("GT", sh.unary("abs", back), sh.unary("abs", x))  # rounded up in magnitude
    bits = sh.bitcast_convert(nearest, sh.i32())
    toward_zero = sh.subtract(bits, sh.convert(away, sh.i32()))
    odd = sh.or_(toward_zero, sh.convert(inexact, sh.i32()))
    return sh.bitcast_convert(odd, f32)


@dataclasses.dataclass(frozen=True)
class SplitF64ToHalfConverts(ModulePass):
    """Rewrite stablehlo.convert f64 -> f16/bf16 as f64 -> f32 (round to odd) -> f16/bf16."""

    NAME = "xhlo-split-f64-to-half-converts"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.convert"):
            target = sh.element_type(op.results[0])
            if not isinstance(sh.element_type(op.operands[0]), ir.F64Type) \
                    or not sh.is_half_float(target):
                continue
            with ir.InsertionPoint(op), op.location:
                result = sh.convert(_round_to_odd_f32(op.operands[0]), target)
            op.results[0].replace_all_uses_with(result)
            op.erase()

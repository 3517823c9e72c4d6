"""xhlo-bf16-conversions: bf16 <-> f32 conversions as integer code, so that bf16 is only data.

Part of keeping bf16 away from LLVM's x86 backend (see ``xhlo-bf16-as-i16``,
which then retypes bf16 data as i16). A bf16 is the top half of an f32:

* ``arith.extf`` from bf16 becomes ``bitcast(shli(extui(bitcast(x) : i16), 16))``,
  the code LLVM emits for it anyway (and InstCombine no longer sees an ``fpext``
  to narrow f32 math back to bf16 through);
* ``arith.truncf`` to bf16 rounds to nearest even on the bits (NaN stays NaN
  with its sign, quieted; f64 goes through f32, as xhlo converts f64 to half
  floats everywhere), except, on a CPU with AVX512-BF16 (``hardware-truncation``,
  by default what the host has), f32 vectors of 8, 16, 32, ... lanes: those keep
  ``truncf``, one ``vcvtneps2bf16`` per 16 lanes, which ``xhlo-bf16-as-i16``
  lets through (LLVM selects those widths; without the feature it calls
  ``__truncsfbf2``, which the JIT does not have). That instruction flushes
  subnormals to zero, as XLA:CPU flushes denormals; doing their lanes in integer
  code instead costs bf16 gelu of 4M 2.7 -> 5.0 ms (tanh 0.76 -> 1.1).

A module without any bf16 gets the ``xhlo.no_bf16`` hint, so that
``xhlo-bf16-as-i16`` need not scan the larger LLVM dialect module for it.
"""

from __future__ import annotations

import dataclasses

from xhlo import host
from xhlo._mlir import arith, ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops
from .saturate_float_to_int import splat_constant


def _int(t: ir.Type, width: int, value: int) -> ir.Value:
    """An i``width`` constant shaped like ``t`` (scalar or vector)."""
    return splat_constant(value, sh.with_element(t, ir.IntegerType.get_signless(width)))


def _extend(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    t = op.results[0].type
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    wide = arith.extui(sh.with_element(t, i32), arith.bitcast(sh.with_element(t, i16), x))
    f32 = arith.bitcast(sh.with_element(t, ir.F32Type.get()), arith.shli(wide, _int(t, 32, 16)))
    return f32 if sh.scalar_type(t) == ir.F32Type.get() else arith.extf(t, f32)  # exact: f64 via f32


def _truncate(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    if not isinstance(sh.scalar_type(x.type), ir.F32Type):  # f64: through f32, as xhlo converts elsewhere
        x = arith.truncf(sh.with_element(x.type, ir.F32Type.get()), x)
    t = x.type
    bits = arith.bitcast(sh.with_element(t, ir.IntegerType.get_signless(32)), x)
    odd = arith.andi(arith.shrui(bits, _int(t, 32, 16)), _int(t, 32, 1))  # ties go to even
    rounded = arith.shrui(arith.addi(bits, arith.addi(odd, _int(t, 32, 0x7FFF))), _int(t, 32, 16))
    quiet_nan = arith.ori(arith.shrui(bits, _int(t, 32, 16)), _int(t, 32, 0x40))
    is_nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
    top = arith.trunci(sh.with_element(t, ir.IntegerType.get_signless(16)), arith.select(is_nan, quiet_nan, rounded))
    return arith.bitcast(op.results[0].type, top)


def _hardware_truncation(t: ir.Type) -> bool:
    """Vectors of 8, 16, 32, ... lanes: LLVM selects their truncation (vcvtneps2bf16)."""
    if not isinstance(t, ir.VectorType) or ir.VectorType(t).rank != 1:
        return False
    (lanes,) = ir.VectorType(t).shape
    return lanes >= 8 and lanes & (lanes - 1) == 0


# Set on a module this pass found no bf16 data in: xhlo-bf16-as-i16 then skips its scan
# of the (several times larger) LLVM dialect module.
NO_BF16_ATTR = "xhlo.no_bf16"
# where bf16 data comes from before the LLVM dialect: memory, constants, function
# arguments, and conversions (bf16 values that never reach memory)
_SOURCES = ("memref.alloc", "memref.alloca", "memref.get_global", "arith.constant", "func.func",
            "arith.extf", "arith.truncf")


def _makes_bf16(op: ir.Operation) -> bool:
    if op.name == "func.func":
        return "bf16" in str(op.attributes["function_type"])
    value = op.operands[0] if op.name == "arith.extf" else op.results[0]
    return isinstance(sh.scalar_type(value.type), ir.BF16Type)


@dataclasses.dataclass(frozen=True)
class Bf16Conversions(ModulePass):
    """Write bf16 <-> f32 conversions as integer code (with AVX512-BF16, truncations of 2^k >= 8 lanes excepted)."""

    NAME = "xhlo-bf16-conversions"
    hardware_truncation: bool = "avx512_bf16" in host.cpu_flags()  # vcvtneps2bf16 for wide vectors

    def run(self, module: ir.Operation) -> None:
        ops = walk_ops(module, _SOURCES)
        if not any(_makes_bf16(op) for op in ops):
            module.attributes[NO_BF16_ATTR] = ir.UnitAttr.get()
        for op in ops:
            if op.name not in ("arith.extf", "arith.truncf"):
                continue
            source, result = sh.scalar_type(op.operands[0].type), sh.scalar_type(op.results[0].type)
            if op.name == "arith.extf" and isinstance(source, ir.BF16Type):
                rewrite = _extend
            elif op.name == "arith.truncf" and isinstance(result, ir.BF16Type) and not (
                    self.hardware_truncation and isinstance(source, ir.F32Type)
                    and _hardware_truncation(op.results[0].type)):
                rewrite = _truncate
            else:
                continue
            with ir.InsertionPoint(op), op.location:
                value = rewrite(op)
            op.results[0].replace_all_uses_with(value)
            op.erase()

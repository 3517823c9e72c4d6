"""xhlo-bf16-as-i16: in the LLVM dialect, bf16 data becomes i16 bits; LLVM never sees bf16.

The x86 backend of the wheel's LLVM aborts the process on bf16 code that is
ordinary here: loads, stores and phis of 9, 17, 33, ... lanes (a row of 9, a
9x9 array copied as one 81-lane vector), masked stores it splits into scalar
parts, and bf16 min/max InstCombine narrows f32 ones to ("Do not know how to
soft promote this operator's operand", "Cannot select"). So, earlier in the
stage, no arithmetic is left on bf16 (``math-extend-to-supported-types`` and
``arith-emulate-unsupported-floats`` compute it in f32), and
``xhlo-bf16-conversions`` writes the conversions as integer code (the
extension a shift; the truncation rounds to nearest even on the bits) but for
f32 vectors of 8, 16, 32, ... lanes, whose ``fptrunc`` LLVM selects (it keeps
its bf16 result, read as i16 by a bitcast). What remains of bf16 only moves
data, and this pass retypes it: bf16 in a value's type, a function type or an
element-type attribute becomes i16, constants stay bf16 for LLVM to fold into
their users' bitcasts to i16, and the bitcasts between bf16 and i16 vanish. A float operation still on bf16 here
is reported, never retyped. A module ``xhlo-bf16-conversions`` found no bf16
in (``xhlo.no_bf16``) is not scanned.
"""

from __future__ import annotations

import dataclasses
import re

import ml_dtypes
import numpy as np
from xhlo._mlir import ir

from .base import ModulePass, PassError, walk_ops
from .bf16_conversions import NO_BF16_ATTR

# ops whose bf16 operands and results are only moved (the same bits as i16); constants
# and globals are handled apart
_MOVES_DATA = frozenset({
    "llvm.load", "llvm.store", "llvm.intr.masked.load", "llvm.intr.masked.store",
    "llvm.intr.masked.gather", "llvm.intr.masked.scatter", "llvm.select", "llvm.shufflevector",
    "llvm.insertelement", "llvm.extractelement", "llvm.insertvalue", "llvm.extractvalue",
    "llvm.mlir.poison", "llvm.mlir.undef", "llvm.mlir.zero", "llvm.bitcast",
    "llvm.call", "llvm.func", "llvm.getelementptr", "llvm.alloca", "llvm.freeze",
    "llvm.intr.vector.insert", "llvm.intr.vector.extract",
})
# attributes naming a type that may be bf16, by op
_TYPED_ATTRIBUTES = {
    "llvm.getelementptr": ("elem_type",), "llvm.alloca": ("elem_type",), "llvm.func": ("function_type",),
}
# ops whose bf16 results LLVM handles (folded constants; truncations of 8, 16, ... lanes):
# they keep them, and their users read them as i16 through a bitcast
_KEEPS_BF16 = frozenset({"llvm.fptrunc", "llvm.mlir.constant"})
# intrinsics whose bf16 operands LLVM selects (vdpbf16ps, xhlo-lower-bf16-gemms): by operand index
_BF16_INTRINSIC_OPERANDS = {"llvm.x86.avx512bf16.dpbf16ps.512": (1, 2)}


def _intrinsic_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["intrin"]).value


def _has_bf16(t: ir.Type) -> bool:
    """bf16 scalars, vectors and LLVM aggregates of them (n-D vectors: arrays of vectors)."""
    if isinstance(t, ir.BF16Type):
        return True
    if isinstance(t, ir.VectorType):
        return isinstance(ir.VectorType(t).element_type, ir.BF16Type)
    if isinstance(t, (ir.IntegerType, ir.FloatType, ir.IndexType)):
        return False
    return "bf16" in str(t)


def _as_i16(t: ir.Type) -> ir.Type:
    return ir.Type.parse(str(t).replace("bf16", "i16"), t.context)


def _i16_type_attribute(attr: ir.Attribute) -> ir.Attribute | None:
    """A type attribute with its bf16 as i16, None if it has none."""
    if isinstance(attr, ir.TypeAttr) and "bf16" in str(attr.value):
        return ir.TypeAttr.get(_as_i16(attr.value))
    return None


_ELEMENT = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:inf|nan|\d+\.?\d*(?:[eE][-+]?\d+)?)")


def _i16_bits(attr: ir.DenseElementsAttr) -> ir.DenseElementsAttr:
    """A bf16 dense attribute as i16 of the same bits (its elements are read from its text:
    the bindings convert no bf16 element)."""
    shape_type = ir.ShapedType(attr.type)
    i16 = ir.IntegerType.get_signless(16)
    i16_type = ir.VectorType.get(shape_type.shape, i16)
    if attr.is_splat:
        bits = int(np.array(ir.FloatAttr(attr.get_splat_value()).value, ml_dtypes.bfloat16).view(np.int16))
        return ir.DenseElementsAttr.get_splat(i16_type, ir.IntegerAttr.get(i16, bits))
    body = str(attr)[len("dense<"):str(attr).rindex(">")]
    if body.startswith('"0x'):  # the raw little-endian buffer
        bits = np.frombuffer(bytes.fromhex(body[3:body.index('"', 1)]), np.int16)
    else:
        tokens = _ELEMENT.findall(body.split(":")[0])
        bits = np.array([int(t, 16) if t.startswith("0x") else
                         int(np.array(float(t), ml_dtypes.bfloat16).view(np.uint16)) for t in tokens],
                        np.uint16).view(np.int16)
    return ir.DenseElementsAttr.get(bits.reshape(shape_type.shape), type=i16_type)


def _constant_as_i16(op: ir.Operation) -> None:
    """An aggregate bf16 constant (an n-D vector: an array of vectors), which no bitcast
    takes, holds the same bits as i16."""
    op.attributes["value"] = _i16_bits(ir.DenseElementsAttr(op.attributes["value"]))
    op.results[0].set_type(_as_i16(op.results[0].type))


def _hand_over_as_i16(op: ir.Operation) -> None:
    """``op`` keeps its bf16 result; its users get it as i16 bits."""
    result = op.results[0]
    with ir.InsertionPoint.after(op), op.location:
        bits = ir.Operation.create("llvm.bitcast", results=[_as_i16(result.type)], operands=[result]).result
    result.replace_all_uses_except(bits, bits.owner.operation)


def _retype(op: ir.Operation) -> None:
    """Retype ``op``'s bf16 results, block arguments and attributes."""
    if op.name in _KEEPS_BF16:
        result_type = op.results[0].type
        if _has_bf16(result_type):
            if isinstance(result_type, (ir.VectorType, ir.BF16Type)):
                _hand_over_as_i16(op)
            else:
                _constant_as_i16(op)
        return
    if op.name == "llvm.mlir.global":  # memory: its loads are retyped
        return
    changed = False
    for name in _TYPED_ATTRIBUTES.get(op.name, ()):
        if name in op.attributes and (new := _i16_type_attribute(op.attributes[name])) is not None:
            op.attributes[name] = new
            changed = True
    for result in op.results:
        if _has_bf16(result.type):
            result.set_type(_as_i16(result.type))
            changed = True
    for region in op.regions:
        for block in region.blocks:
            for argument in block.arguments:
                if _has_bf16(argument.type):
                    argument.set_type(_as_i16(argument.type))
    if changed and op.name not in _MOVES_DATA:
        raise PassError(op, "a bf16 float operation reached the LLVM dialect (bf16 math runs in f32)")


@dataclasses.dataclass(frozen=True)
class Bf16AsI16(ModulePass):
    """Retype bf16 data in the LLVM dialect as i16 (bf16 arithmetic is gone by then)."""

    NAME = "xhlo-bf16-as-i16"

    def run(self, module: ir.Operation) -> None:
        if NO_BF16_ATTR in module.attributes:  # xhlo-bf16-conversions saw no bf16 data
            del module.attributes[NO_BF16_ATTR]
            return
        casts, bf16_intrinsics = [], []
        for op in walk_ops(module, None):
            _retype(op)
            if op.name == "llvm.call_intrinsic" and _intrinsic_name(op) in _BF16_INTRINSIC_OPERANDS:
                bf16_intrinsics.append(op)
            if op.name == "llvm.bitcast":
                casts.append(op)
        for op in casts:  # bf16 <-> i16 casts are i16 -> i16 now
            if op.operands[0].type == op.results[0].type:
                op.results[0].replace_all_uses_with(op.operands[0])
                op.erase()
        for op in bf16_intrinsics:  # they are handed the bits, as bf16 vectors
            for index in _BF16_INTRINSIC_OPERANDS[_intrinsic_name(op)]:
                bits = op.operands[index]
                with ir.InsertionPoint(op), op.location:
                    bf16_type = ir.Type.parse(str(bits.type).replace("i16", "bf16"), op.context)
                    op.operands[index] = ir.Operation.create("llvm.bitcast", results=[bf16_type], operands=[bits]).result

"""xhlo-emulate-small-floats: compute on f8/f4 element types in f32, as XLA:CPU does.

LLVM has no 8-bit or 4-bit float types. MLIR's LLVM lowering stores them as
integers of the same width, so loads, stores and copies of such tensors work,
but any arithmetic or conversion on them leaves a
``builtin.unrealized_conversion_cast`` that the JIT cannot translate.

XLA:CPU computes every op on these types in f32 and rounds the result back
after each op. This pass does the same in two steps:

1. Every op that computes on a small float (anything but the data movement in
   ``DATA_MOVEMENT``) gets f32 operands and results with ``stablehlo.convert``
   around it. Region arguments (reduce, sort, scatter, map bodies) are widened
   too, and since the ops in those bodies are rewritten the same way, a
   reduction still rounds after every step.
2. Every ``stablehlo.convert`` between a small float and f32 becomes integer
   arithmetic on the stored bits (``bitcast_convert`` to ui8/ui4): decoding is
   exact; encoding rounds to nearest even and maps overflow and NaN per format
   exactly as ml_dtypes does (``np.float32(x).astype(ml_dtypes.float8_*)``).
   Conversions between a small float and any other type go through f32.

Afterwards small floats only appear in constants, data movement and
``bitcast_convert``, which lower to plain loads and stores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops

# Specials of a format: how (and whether) it encodes NaN, Inf and negative zero.
IEEE = "ieee"  # all-ones exponent: Inf (mantissa 0) and NaNs, like f16
NAN_ALL_ONES = "nan-all-ones"  # "FN": only S.1111.111 is NaN, no Inf; overflow -> NaN
NAN_AT_NEGATIVE_ZERO = "nan-at-negative-zero"  # "FNUZ": 0x80 is the NaN, no -0, no Inf
FINITE_ONLY = "finite-only"  # f4E2M1FN: no NaN, no Inf; overflow saturates
EXPONENT_ONLY = "exponent-only"  # f8E8M0FNU: unsigned powers of two, 0xFF is NaN


@dataclasses.dataclass(frozen=True)
class SmallFloat:
    """Bit layout of one small float type (sign bit, exponent, mantissa)."""

    width: int  # storage bits
    mantissa_bits: int
    bias: int
    specials: str

    @property
    def signed(self) -> bool:
        return self.specials != EXPONENT_ONLY

    @property
    def exponent_bits(self) -> int:
        return self.width - self.mantissa_bits - int(self.signed)

    @property
    def min_exponent(self) -> int:
        """Exponent of the smallest normal number (subnormals share it)."""
        return 1 - self.bias

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    @property
    def magnitude_mask(self) -> int:
        return self.sign_bit - 1

    @property
    def max_finite_code(self) -> int:
        """The largest finite magnitude's bit pattern (sign bit clear)."""
        if self.specials == IEEE:
            return (((1 << self.exponent_bits) - 1) << self.mantissa_bits) - 1
        if self.specials == NAN_ALL_ONES:
            return self.magnitude_mask - 1
        if self.specials == EXPONENT_ONLY:
            return 0xFE
        return self.magnitude_mask


# MLIR spelling -> format; the same types as the ml_dtypes ones in xhlo.dtypes.
SMALL_FLOATS: dict[str, SmallFloat] = {
    "f8E4M3FN": SmallFloat(8, 3, 7, NAN_ALL_ONES),
    "f8E5M2": SmallFloat(8, 2, 15, IEEE),
    "f8E4M3FNUZ": SmallFloat(8, 3, 8, NAN_AT_NEGATIVE_ZERO),
    "f8E5M2FNUZ": SmallFloat(8, 2, 16, NAN_AT_NEGATIVE_ZERO),
    "f8E4M3B11FNUZ": SmallFloat(8, 3, 11, NAN_AT_NEGATIVE_ZERO),
    "f8E3M4": SmallFloat(8, 4, 3, IEEE),
    "f8E4M3": SmallFloat(8, 3, 7, IEEE),
    "f8E8M0FNU": SmallFloat(8, 0, 127, EXPONENT_ONLY),
    "f4E2M1FN": SmallFloat(4, 1, 1, FINITE_ONLY),
}

# Ops that only move, select or reinterpret elements: they lower to loads and
# stores, which work on small floats, so they keep their types.
DATA_MOVEMENT = frozenset(
    f"stablehlo.{name}"
    for name in (
        "constant", "bitcast_convert", "select", "custom_call", "optimization_barrier",
        "reshape", "dynamic_reshape", "transpose", "reverse", "broadcast", "broadcast_in_dim",
        "dynamic_broadcast_in_dim", "slice", "dynamic_slice", "real_dynamic_slice",
        "dynamic_update_slice", "concatenate", "pad", "dynamic_pad",
        "gather", "dynamic_gather", "torch_index_select",
        "tuple", "get_tuple_element", "while", "if", "case", "return",
        "get_dimension_size", "set_dimension_size",
        "all_gather", "all_to_all", "collective_permute", "collective_broadcast",
        "send", "recv", "infeed", "outfeed",
    )
)  # fmt: skip

# f32 bit layout.
F32_MANTISSA_BITS = 23
F32_BIAS = 127
F32_SIGN = 0x8000_0000
F32_INF = 0x7F80_0000
F32_QUIET_NAN = 0x7FC0_0000


def small_float_format(t: ir.Type) -> SmallFloat | None:
    """The format of a small float element type (or of a tensor of one)."""
    if isinstance(t, ir.RankedTensorType):
        t = t.element_type
    return SMALL_FLOATS.get(str(t))


def _touches_small_float(op: ir.Operation) -> bool:
    values = [*op.operands, *op.results]
    for region in op.regions:
        for block in region.blocks:
            values.extend(block.arguments)
    return any(small_float_format(v.type) for v in values)


# Types xhlo moves but does not compute on: decoding goes through an integer of the
# same width, and StableHLO has no 6-bit integers to bitcast to.
DATA_ONLY_FLOATS = (ir.Float6E2M3FNType, ir.Float6E3M2FNType)


def _refuse_data_only_floats(op: ir.Operation) -> None:
    for value in [*op.operands, *op.results]:
        elem = sh.scalar_type(value.type)
        if isinstance(elem, DATA_ONLY_FLOATS):
            raise PassError(op, f"'{op.name}' computes on {elem}, which xhlo supports as data only "
                                f"(constants, arguments, results, copies and reshapes), not in arithmetic or conversions")


def _is_small_float(t: ir.Type) -> bool:
    return small_float_format(t) is not None


def widened_type(t: ir.Type, narrow: Callable[[ir.Type], bool] = _is_small_float) -> ir.Type:
    """``t`` with f32 elements when ``narrow(t)``, else ``t``."""
    if not narrow(t):
        return t
    return ir.RankedTensorType.get(list(t.shape), ir.F32Type.get(), t.encoding)


# -- step 1: compute in f32 ----------------------------------------------------


def widen_op(op: ir.Operation, narrow: Callable[[ir.Type], bool] = _is_small_float) -> list[tuple[ir.Value, ir.Value]]:
    """Recreate ``op`` on f32, converting its operands and results of a ``narrow`` type.

    Returns the (widened region argument, its rounding back) pairs."""
    f32 = ir.F32Type.get()
    with ir.InsertionPoint(op), op.location:
        operands = [sh.convert(v, f32) if narrow(v.type) else v for v in op.operands]
        attributes = {name: op.attributes[name] for name in op.attributes}
        wide = sh.create(
            op.name, operands, [widened_type(r.type, narrow) for r in op.results], attributes, regions=len(op.regions)
        )
        results = [
            sh.convert(new, sh.element_type(old)) if narrow(old.type) else new
            for old, new in zip(op.results, wide.results)
        ]
    entries = []
    for src, dst in zip(op.regions, wide.regions):
        entries += _move_and_widen_region(src, dst, op.location, narrow)
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()
    return entries


def _move_and_widen_region(
    src: ir.Region, dst: ir.Region, location: ir.Location, narrow: Callable[[ir.Type], bool]
) -> list[tuple[ir.Value, ir.Value]]:
    """Move the blocks; ``narrow`` block arguments and returned values become f32.

    The body keeps computing on the small type (its ops are widened one by
    one), so the arguments are rounded back on entry; returns those
    (argument, rounded argument) pairs.
    """
    f32 = ir.F32Type.get()
    entries = []
    for block in list(src.blocks):
        block.append_to(dst)
        with location:
            for arg in block.arguments:
                if not narrow(arg.type):
                    continue
                elem = arg.type.element_type
                arg.set_type(widened_type(arg.type, narrow))
                with ir.InsertionPoint.at_block_begin(block):
                    rounded = sh.convert(arg, elem)
                arg.replace_all_uses_except(rounded, rounded.owner.operation)
                entries.append((arg, rounded))
            terminator = block.operations[len(block.operations) - 1]
            with ir.InsertionPoint(terminator):
                for i, value in enumerate(terminator.operands):
                    if narrow(value.type):
                        terminator.operands[i] = sh.convert(value, f32)
    return entries


def _skip_exact_round_trips(entries: list[tuple[ir.Value, ir.Value]]) -> None:
    """Use a widened region argument directly where its rounded value is widened again.

    Every value reaching such an argument was decoded from the small type
    (operands, inits and the region's own results all are), so rounding it
    and widening it again gives it back: this saves a decode and an encode
    per element and step of reductions and sorts.
    """
    f32 = ir.F32Type.get()
    for arg, narrow in entries:
        for use in list(narrow.uses):
            user = use.owner
            if user.name == "stablehlo.convert" and sh.element_type(user.results[0]) == f32:
                user.results[0].replace_all_uses_with(arg)
                user.erase()
        if not list(narrow.uses):
            narrow.owner.erase()


def _route_convert_through_f32(op: ir.Operation) -> None:
    """Split a convert touching a small float into two converts meeting in f32."""
    source = sh.element_type(op.operands[0])
    target = sh.element_type(op.results[0])
    f32 = ir.F32Type.get()
    if source == target:
        replacement = op.operands[0]
    elif f32 in (source, target):
        return  # lowered by step 2
    else:
        with ir.InsertionPoint(op), op.location:
            replacement = sh.convert(sh.convert(op.operands[0], f32), target)
    op.results[0].replace_all_uses_with(replacement)
    op.erase()


# -- step 2: conversions as integer arithmetic -----------------------------------


class _Int32Ops:
    """Builders for i32 tensors of one shape: the work type of the bit tricks."""

    def __init__(self, shape: tuple[int, ...]):
        self.type = sh.tensor_type(shape, sh.i32())

    def const(self, value: int) -> ir.Value:
        value &= 0xFFFF_FFFF
        return sh.constant(value - (1 << 32) if value >= 1 << 31 else value, self.type)

    def _operand(self, x) -> ir.Value:
        return self.const(x) if isinstance(x, int) else x

    def binary(self, name: str, a, b) -> ir.Value:
        return sh.binary(name, self._operand(a), self._operand(b))

    def and_(self, a, b):
        return self.binary("and", a, b)

    def or_(self, a, b):
        return self.binary("or", a, b)

    def add(self, a, b):
        return self.binary("add", a, b)

    def sub(self, a, b):
        return self.binary("subtract", a, b)

    def max(self, a, b):
        return self.binary("maximum", a, b)

    def min(self, a, b):
        return self.binary("minimum", a, b)

    def shl(self, a, b):
        return self.binary("shift_left", a, b)

    def shr(self, a, b):
        """Logical shift right."""
        return self.binary("shift_right_logical", a, b)

    def cmp(self, direction: str, a, b) -> ir.Value:
        return sh.compare(direction, self._operand(a), self._operand(b), "SIGNED")

    def select(self, pred, a, b) -> ir.Value:
        return sh.select(pred, self._operand(a), self._operand(b))

    def from_bool(self, pred: ir.Value) -> ir.Value:
        return sh.convert(pred, sh.i32())


def _storage_type(fmt: SmallFloat) -> ir.Type:
    return ir.IntegerType.get_unsigned(fmt.width)


def decode(x: ir.Value, fmt: SmallFloat) -> ir.Value:
    """Small float tensor -> f32 tensor with the same values (exact)."""
    ops = _Int32Ops(sh.shape_of(x))
    code = ops.and_(sh.convert(sh.bitcast_convert(x, _storage_type(fmt)), sh.i32()), (1 << fmt.width) - 1)
    if fmt.specials == EXPONENT_ONLY:
        return sh.bitcast_convert(_decode_exponent_only(ops, code), ir.F32Type.get())
    m = fmt.mantissa_bits
    magnitude = ops.and_(code, fmt.magnitude_mask)
    exponent_field = ops.shr(magnitude, m)
    mantissa = ops.and_(magnitude, (1 << m) - 1)
    # Normal: shift exponent and mantissa into place, rebias the exponent.
    normal = ops.add(ops.shl(magnitude, F32_MANTISSA_BITS - m), (F32_BIAS - fmt.bias) << F32_MANTISSA_BITS)
    # Subnormal: mantissa * 2^(min_exponent - m), exact in f32.
    subnormal_value = sh.multiply(
        sh.convert(mantissa, ir.F32Type.get()),
        sh.constant(2.0 ** (fmt.min_exponent - m), sh.tensor_type(sh.shape_of(x), ir.F32Type.get())),
    )
    subnormal = sh.bitcast_convert(subnormal_value, sh.i32())
    bits = ops.select(ops.cmp("EQ", exponent_field, 0), subnormal, normal)
    sign = ops.shl(ops.shr(code, fmt.width - 1), 31)
    bits = ops.or_(bits, sign)
    if fmt.specials == IEEE:
        all_ones = (1 << fmt.exponent_bits) - 1
        special = ops.select(ops.cmp("EQ", mantissa, 0), F32_INF, F32_QUIET_NAN)
        bits = ops.select(ops.cmp("EQ", exponent_field, all_ones), ops.or_(special, sign), bits)
    elif fmt.specials == NAN_ALL_ONES:
        bits = ops.select(ops.cmp("EQ", magnitude, fmt.magnitude_mask), ops.or_(sign, F32_QUIET_NAN), bits)
    elif fmt.specials == NAN_AT_NEGATIVE_ZERO:
        bits = ops.select(ops.cmp("EQ", code, fmt.sign_bit), F32_SIGN | F32_QUIET_NAN, bits)
    return sh.bitcast_convert(bits, ir.F32Type.get())


def _decode_exponent_only(ops: _Int32Ops, code: ir.Value) -> ir.Value:
    """f8E8M0FNU: 2^(code - 127); code 0 is 2^-127, an f32 subnormal; 0xFF is NaN."""
    bits = ops.select(ops.cmp("EQ", code, 0), 1 << (F32_MANTISSA_BITS - 1), ops.shl(code, F32_MANTISSA_BITS))
    return ops.select(ops.cmp("EQ", code, 0xFF), F32_QUIET_NAN, bits)


def encode(x: ir.Value, fmt: SmallFloat, target: ir.Type) -> ir.Value:
    """f32 tensor -> small float tensor, rounding to nearest even."""
    ops = _Int32Ops(sh.shape_of(x))
    bits = sh.bitcast_convert(x, sh.i32())
    magnitude = ops.and_(bits, ~F32_SIGN)
    exponent = ops.shr(magnitude, F32_MANTISSA_BITS)
    mantissa = ops.and_(magnitude, (1 << F32_MANTISSA_BITS) - 1)
    if fmt.specials == EXPONENT_ONLY:
        code = _encode_exponent_only(ops, bits, exponent, mantissa)
    else:
        code = _encode_signed(ops, fmt, bits, magnitude, exponent, mantissa)
    storage = sh.convert(code, _storage_type(fmt))
    return sh.bitcast_convert(storage, target)


def _round_to_code(ops: _Int32Ops, fmt: SmallFloat, exponent: ir.Value, mantissa: ir.Value) -> ir.Value:
    """The rounded magnitude's bit pattern; may exceed the largest finite code.

    With the f32 significand s (implicit bit included) of exponent e, and
    e' = max(e, min_exponent), the target keeps round(s / 2^(23 - m + e' - e))
    units of 2^(e' - m), and the code is ((e' - min_exponent) << m) + units:
    this single formula covers subnormal results and a rounding carry into
    the next binade (or past the largest finite value).
    """
    m = fmt.mantissa_bits
    is_subnormal32 = ops.cmp("EQ", exponent, 0)
    significand = ops.select(is_subnormal32, mantissa, ops.or_(mantissa, 1 << F32_MANTISSA_BITS))
    unbiased = ops.sub(ops.max(exponent, 1), F32_BIAS)
    clamped = ops.max(unbiased, fmt.min_exponent)
    # Shifts of 25 or more leave 0 whatever the rounding; 31 keeps 1 << shift positive-safe.
    shift = ops.min(ops.add(ops.sub(clamped, unbiased), F32_MANTISSA_BITS - m), 31)
    quotient = ops.shr(significand, shift)
    remainder = ops.and_(significand, ops.sub(ops.shl(1, shift), 1))
    half = ops.shl(1, ops.sub(shift, 1))
    odd = ops.cmp("EQ", ops.and_(quotient, 1), 1)
    round_up = sh.or_(
        ops.cmp("GT", remainder, half), sh.and_(ops.cmp("EQ", remainder, half), odd)
    )
    units = ops.add(quotient, ops.from_bool(round_up))
    return ops.add(ops.shl(ops.sub(clamped, fmt.min_exponent), m), units)


def _encode_signed(ops, fmt: SmallFloat, bits, magnitude, exponent, mantissa) -> ir.Value:
    code = _round_to_code(ops, fmt, exponent, mantissa)
    is_nan = ops.cmp("GT", magnitude, F32_INF)
    overflow = ops.cmp("GT", code, fmt.max_finite_code)
    sign = ops.shl(ops.shr(bits, 31), fmt.width - 1)
    if fmt.specials == IEEE:
        inf = fmt.max_finite_code + 1
        nan = inf | (1 << (fmt.mantissa_bits - 1))
        code = ops.select(is_nan, nan, ops.select(overflow, inf, code))
        return ops.or_(code, sign)
    if fmt.specials == NAN_ALL_ONES:  # Inf and overflow become NaN
        code = ops.select(sh.or_(is_nan, overflow), fmt.magnitude_mask, code)
        return ops.or_(code, sign)
    if fmt.specials == NAN_AT_NEGATIVE_ZERO:  # no -0: zero drops its sign
        signed_code = ops.select(ops.cmp("EQ", code, 0), 0, ops.or_(code, sign))
        return ops.select(sh.or_(is_nan, overflow), fmt.sign_bit, signed_code)
    # FINITE_ONLY: overflow and Inf saturate; NaN becomes a zero of the opposite
    # sign, which is what ml_dtypes produces.
    code = ops.or_(ops.select(overflow, fmt.max_finite_code, code), sign)
    nan = ops.sub(fmt.sign_bit, sign)
    return ops.select(is_nan, nan, code)


def _encode_exponent_only(ops, bits, exponent, mantissa) -> ir.Value:
    """f8E8M0FNU: the code is the f32 exponent, plus one from 1.5 on (as ml_dtypes).

    f32 subnormals round to 2^-127 up to exactly 2^-127 and to 2^-126 above it;
    zero, negative numbers, Inf, NaN and overflow give NaN (0xFF).
    """
    half = 1 << (F32_MANTISSA_BITS - 1)
    round_up = ops.select(
        ops.cmp("EQ", exponent, 0),
        ops.from_bool(ops.cmp("GT", mantissa, half)),
        ops.from_bool(ops.cmp("GE", mantissa, half)),
    )
    code = ops.min(ops.add(exponent, round_up), 0xFF)
    return ops.select(ops.cmp("LE", bits, 0), 0xFF, code)


def _lower_convert(op: ir.Operation) -> None:
    source = sh.element_type(op.operands[0])
    target = sh.element_type(op.results[0])
    with ir.InsertionPoint(op), op.location:
        if small_float_format(source):
            replacement = decode(op.operands[0], small_float_format(source))
        else:
            replacement = encode(op.operands[0], small_float_format(target), target)
    op.results[0].replace_all_uses_with(replacement)
    op.erase()


@dataclasses.dataclass(frozen=True)
class EmulateSmallFloats(ModulePass):
    """Compute ops on f8/f4 types in f32, lowering their conversions to integer bit arithmetic."""

    NAME = "xhlo-emulate-small-floats"

    def run(self, module: ir.Operation) -> None:
        computing = []

        def visit(op):
            name = op.name
            if name.startswith("stablehlo.") and name not in DATA_MOVEMENT:
                arithmetic.append(op.operation)
                if name != "stablehlo.convert" and _touches_small_float(op.operation):
                    computing.append(op.operation)
            return ir.WalkResult.ADVANCE

        arithmetic: list[ir.Operation] = []
        module.walk(visit, ir.WalkOrder.PRE_ORDER)
        for op in arithmetic:
            _refuse_data_only_floats(op)
        entries = []
        for op in computing:
            entries += widen_op(op)
        _skip_exact_round_trips(entries)
        converts = [op for op in walk_ops(module, "stablehlo.convert") if _touches_small_float(op)]
        for op in converts:
            _route_convert_through_f32(op)
        for op in walk_ops(module, "stablehlo.convert"):
            if _touches_small_float(op):
                _lower_convert(op)

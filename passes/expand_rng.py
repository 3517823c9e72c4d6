"""xhlo-expand-rng: stablehlo.rng (UNIFORM and NORMAL) on rng_bit_generator bits.

No upstream pass lowers ``stablehlo.rng`` NORMAL, and the upstream UNIFORM
lowering is a per-index formula whose consecutive values are evenly spaced,
not random. The spec leaves the generator implementation-defined, so the
samples are built from ``stablehlo.rng_bit_generator`` (THREE_FRY, which the
upstream lowering implements bit-exactly) with a fixed state per op.

UNIFORM: floats are ``a + (b - a) * u`` with u in [0, 1) (a value that rounds
up to ``b`` becomes ``a``, keeping the range half-open); integers are
``a + word mod (b - a)`` on 64-bit words. NORMAL:

* 2 x N random words give two uniforms u1, u2 in [0, 1) each (the top 23/52
  bits as the mantissa of a number in [1, 2), minus 1);
* ``z = sqrt(-2 log(1 - u1)) cos(2 pi u2)`` is standard normal (1 - u1 > 0);
* the result is ``mu + sigma * z``. f16/bf16 are computed in f32.

Each op of a module gets its own state, so two ops do not return the same
numbers; one op returns the same numbers on every call.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops

SEED = 0x78686C6F  # "xhlo": first state word; the second is the op's ordinal in the module


@dataclasses.dataclass(frozen=True)
class _FloatBits:
    """How random words of ``width`` bits become a float in [1, 2)."""

    width: int
    mantissa_bits: int
    one_bits: int  # bit pattern of 1.0


F32_BITS = _FloatBits(32, 23, 0x3F800000)
F64_BITS = _FloatBits(64, 52, 0x3FF0000000000000)


def _distribution(op: ir.Operation) -> str:
    """UNIFORM or NORMAL."""
    return str(op.attributes["rng_distribution"]).rstrip(">").split()[-1]


def random_words(shape: list[int], width: int, ordinal: int) -> ir.Value:
    """``shape`` unsigned words of ``width`` bits from a THREE_FRY generator."""
    ui64 = ir.IntegerType.get_unsigned(64)
    state = sh.constant_array(np.array([SEED, ordinal], np.uint64), ui64)
    word = ir.IntegerType.get_unsigned(width)
    op = sh.create(
        "stablehlo.rng_bit_generator",
        [state],
        [state.type, sh.tensor_type(shape, word)],
        {"rng_algorithm": ir.Attribute.parse("#stablehlo<rng_algorithm THREE_FRY>")},
    )
    return op.results[1]


def unit_interval(words: ir.Value, bits: _FloatBits, float_type: ir.Type) -> ir.Value:
    """Uniform floats in [0, 1) from random words: mantissa bits under the exponent of 1.0."""
    shifted = sh.binary(
        "shift_right_logical", words, sh.constant(bits.width - bits.mantissa_bits, words.type)
    )
    in_one_two = sh.or_(shifted, sh.constant(bits.one_bits, words.type))
    as_float = sh.bitcast_convert(in_one_two, float_type)
    return sh.subtract(as_float, sh.constant(1.0, as_float.type))


def standard_normal(shape: list[int], float_type: ir.Type, ordinal: int) -> ir.Value:
    """Box-Muller (cosine branch) on two independent uniforms per element."""
    bits = F64_BITS if isinstance(float_type, ir.F64Type) else F32_BITS
    words = random_words([2, *shape], bits.width, ordinal)
    rank = len(shape) + 1
    halves = []
    for half in range(2):
        start, limit = [half] + [0] * len(shape), [half + 1, *shape]
        halves.append(sh.reshape(sh.slice(words, start, limit, [1] * rank), shape))
    u1, u2 = (unit_interval(h, bits, float_type) for h in halves)
    one = sh.constant(1.0, u1.type)
    log_term = sh.unary("log", sh.subtract(one, u1))  # 1 - u1 in (0, 1]: finite
    radius = sh.unary("sqrt", sh.multiply(sh.constant(-2.0, u1.type), log_term))
    angle = sh.multiply(sh.constant(2.0 * math.pi, u2.type), u2)
    return sh.multiply(radius, sh.unary("cosine", angle))


def rng_normal(
    mu: ir.Value, sigma: ir.Value, result_type: ir.RankedTensorType, ordinal: int
) -> ir.Value:
    """``mu + sigma * z`` with z standard normal, of ``result_type``."""
    elem, shape = result_type.element_type, list(result_type.shape)
    compute = ir.F64Type.get() if isinstance(elem, ir.F64Type) else ir.F32Type.get()
    z = standard_normal(shape, compute, ordinal)

    def spread(scalar: ir.Value) -> ir.Value:
        wide = sh.convert(scalar, compute) if sh.element_type(scalar) != compute else scalar
        return sh.broadcast_in_dim(wide, shape, [])

    samples = sh.add(spread(mu), sh.multiply(spread(sigma), z))
    return sh.convert(samples, elem) if elem != compute else samples


def uniform_float(a: ir.Value, b: ir.Value, result_type: ir.RankedTensorType, ordinal: int) -> ir.Value:
    """``a + (b - a) * u`` in [a, b), computed in f32 (f64 for f64 results)."""
    elem, shape = result_type.element_type, list(result_type.shape)
    compute = ir.F64Type.get() if isinstance(elem, ir.F64Type) else ir.F32Type.get()
    bits = F64_BITS if isinstance(compute, ir.F64Type) else F32_BITS
    u = unit_interval(random_words(shape, bits.width, ordinal), bits, compute)
    lo = sh.broadcast_in_dim(_widen(a, compute), shape, [])
    hi = sh.broadcast_in_dim(_widen(b, compute), shape, [])
    samples = sh.add(lo, sh.multiply(sh.subtract(hi, lo), u))
    if elem != compute:
        samples = sh.convert(samples, elem)
        lo, hi = sh.convert(lo, elem), sh.convert(hi, elem)
    return sh.select(sh.compare("LT", samples, hi), samples, lo)


def uniform_int(a: ir.Value, b: ir.Value, result_type: ir.RankedTensorType, ordinal: int) -> ir.Value:
    """``a + word mod (b - a)`` with 64-bit words; b <= a gives a."""
    elem, shape = result_type.element_type, list(result_type.shape)
    i64, ui64 = ir.IntegerType.get_signless(64), ir.IntegerType.get_unsigned(64)
    lo = sh.broadcast_in_dim(sh.convert(a, i64), shape, [])
    hi = sh.broadcast_in_dim(sh.convert(b, i64), shape, [])
    span = sh.maximum(sh.subtract(hi, lo), sh.constant(1, lo.type))
    offset = sh.binary("remainder", random_words(shape, 64, ordinal), sh.bitcast_convert(span, ui64))
    return sh.convert(sh.add(lo, sh.bitcast_convert(offset, i64)), elem)


def _widen(scalar: ir.Value, compute: ir.Type) -> ir.Value:
    return sh.convert(scalar, compute) if sh.element_type(scalar) != compute else scalar


def _check(op: ir.Operation, distribution: str) -> ir.RankedTensorType:
    result_type = op.results[0].type
    if not isinstance(result_type, ir.RankedTensorType) or not result_type.has_static_shape:
        raise PassError(
            op, f"'stablehlo.rng' {distribution} needs a static result shape, got {result_type}"
        )
    elem = result_type.element_type
    floating = isinstance(elem, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))
    integer = isinstance(elem, ir.IntegerType)
    if not floating and not (integer and distribution == "UNIFORM"):
        kinds = "f16/bf16/f32/f64" + (", integer or boolean" if distribution == "UNIFORM" else "")
        raise PassError(op, f"'stablehlo.rng' {distribution} needs {kinds} results, got {elem}")
    return result_type


def _expand(op: ir.Operation, ordinal: int) -> ir.Value:
    distribution = _distribution(op)
    result_type = _check(op, distribution)
    a, b = op.operands[0], op.operands[1]
    if 0 in result_type.shape:
        return sh.constant(0, result_type)
    if distribution == "NORMAL":
        return rng_normal(a, b, result_type, ordinal)
    if result_type.element_type == sh.i1():  # booleans in [a, b): integers 0/1, then != 0
        wide = [sh.convert(v, sh.i32()) for v in (a, b)]
        numbers = uniform_int(*wide, sh.tensor_type(result_type.shape, sh.i32()), ordinal)
        return sh.compare("NE", numbers, sh.constant(0, numbers.type))
    if isinstance(result_type.element_type, ir.IntegerType):
        return uniform_int(a, b, result_type, ordinal)
    return uniform_float(a, b, result_type, ordinal)


@dataclasses.dataclass(frozen=True)
class ExpandRng(ModulePass):
    """Expand stablehlo.rng (UNIFORM, NORMAL) into rng_bit_generator arithmetic."""

    NAME = "xhlo-expand-rng"

    def run(self, module: ir.Operation) -> None:
        for ordinal, op in enumerate(walk_ops(module, "stablehlo.rng")):
            with ir.InsertionPoint(op), op.location:
                result = _expand(op, ordinal)
            op.results[0].replace_all_uses_with(result)
            op.erase()

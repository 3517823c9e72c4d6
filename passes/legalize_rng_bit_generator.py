"""xhlo-legalize-rng-bit-generator: Philox as XLA:CPU computes it; float outputs as bits.

The upstream linalg lowering of ``stablehlo.rng_bit_generator`` matches
XLA:CPU for THREE_FRY, but its PHILOX keeps a 64-bit counter: it ignores the
third word of a ``u64[3]`` state and does not carry into the upper half of the
128-bit counter, so its numbers differ from XLA's once the counter wraps. It
also rejects float outputs, which the spec allows (the bits are
implementation-defined). This pass

* expands PHILOX (and DEFAULT, which is PHILOX on XLA:CPU) into integer
  StableHLO: Philox-4x32 with 10 rounds, key = state[0], 128-bit counter =
  state[1] + 2^64 * (state[2] for a u64[3] state, else state[0]), one counter
  value per block of four 32-bit words, words in row-major output order
  (64-bit outputs take two words, low first; narrower ones the low bits of
  one word); the new state holds the counter advanced by the blocks used;
* makes every other output type (floats, signed integers) an unsigned
  integer output of the same width followed by ``bitcast_convert``.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops

PHILOX_ROUNDS = 10
PHILOX_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
PHILOX_KEY_BUMPS = (0x9E3779B9, 0xBB67AE85)
WORDS_PER_BLOCK = 4


def _unsigned(width: int) -> ir.Type:
    return ir.IntegerType.get_unsigned(width)


def _element_width(t: ir.Type) -> int:
    if isinstance(t, ir.IntegerType):
        return ir.IntegerType(t).width
    return {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(str(t)) or _small_float_width(t)


def _small_float_width(t: ir.Type) -> int:
    from .emulate_small_floats import small_float_format

    fmt = small_float_format(t)
    if fmt is None:
        raise ValueError(f"no bit width known for {t}")
    return fmt.width


def _algorithm(op: ir.Operation) -> str:
    return str(op.attributes["rng_algorithm"]).split()[-1].rstrip(">")


def _scalar(state: ir.Value, index: int) -> ir.Value:
    """state[index] as a 0-d tensor."""
    return sh.reshape(sh.slice(state, [index], [index + 1]), [])


def _splat(value: ir.Value, count: int) -> ir.Value:
    return sh.broadcast_in_dim(value, [count], [])


def _low_word(x: ir.Value) -> ir.Value:
    return sh.convert(x, _unsigned(32))


def _high_word(x: ir.Value) -> ir.Value:
    return _low_word(sh.binary("shift_right_logical", x, sh.constant(32, x.type)))


def _add_with_carry(low: ir.Value, high: ir.Value, amount: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(high:low) + amount on u64 halves of a 128-bit number."""
    new_low = sh.add(low, amount)
    carry = sh.convert(sh.compare("LT", new_low, amount, "UNSIGNED"), _unsigned(64))
    return new_low, sh.add(high, carry)


def _philox_round(words: list[ir.Value], keys: tuple[ir.Value, ir.Value]) -> list[ir.Value]:
    u64 = _unsigned(64)
    products = [
        sh.multiply(sh.convert(words[i], u64), sh.constant(m, sh.tensor_type(sh.shape_of(words[i]), u64)))
        for i, m in zip((0, 2), PHILOX_MULTIPLIERS)
    ]
    (hi0, lo0), (hi1, lo1) = [(_high_word(p), _low_word(p)) for p in products]
    return [_xor(_xor(hi1, words[1]), keys[0]), lo1, _xor(_xor(hi0, words[3]), keys[1]), lo0]


def _xor(a: ir.Value, b: ir.Value) -> ir.Value:
    return sh.binary("xor", a, b)


def _philox_words(state: ir.Value, blocks: int) -> tuple[ir.Value, ir.Value]:
    """(tensor<blocks*4 x ui32> of random words, the new state)."""
    u64 = _unsigned(64)
    state_size = sh.shape_of(state)[0]
    key = _scalar(state, 0)
    counter_low = _scalar(state, 1)
    counter_high = _scalar(state, 2 if state_size > 2 else 0)
    index = sh.iota([blocks], 0, u64)
    low, high = _add_with_carry(_splat(counter_low, blocks), _splat(counter_high, blocks), index)
    words = [_low_word(low), _high_word(low), _low_word(high), _high_word(high)]
    keys = [_splat(_low_word(key), blocks), _splat(_high_word(key), blocks)]
    for round_index in range(PHILOX_ROUNDS):
        if round_index:
            keys = [sh.add(k, sh.constant(bump, k.type)) for k, bump in zip(keys, PHILOX_KEY_BUMPS)]
        words = _philox_round(words, tuple(keys))
    stacked = sh.concatenate([sh.reshape(w, [blocks, 1]) for w in words], 1)
    new_low, new_high = _add_with_carry(counter_low, counter_high, sh.constant(blocks, u64))
    parts = [key, new_low, new_high][:state_size]
    new_state = sh.concatenate([sh.reshape(p, [1]) for p in parts], 0)
    return sh.reshape(stacked, [blocks * WORDS_PER_BLOCK]), new_state


def _philox(state: ir.Value, shape: list[int], width: int) -> tuple[ir.Value, ir.Value]:
    """(tensor<shape x ui{width}>, new state) as XLA:CPU computes them."""
    count = math.prod(shape)
    words_per_value = 2 if width == 64 else 1
    blocks = -(-count * words_per_value // WORDS_PER_BLOCK)
    if blocks == 0:  # an empty output uses no counter values
        return sh.constant(0, sh.tensor_type(shape, _unsigned(width))), state
    words, new_state = _philox_words(state, blocks)
    if width == 64:
        pairs = sh.reshape(words, [blocks * 2, 2])
        low = sh.convert(sh.reshape(sh.slice(pairs, [0, 0], [count, 1]), [count]), _unsigned(64))
        high = sh.convert(sh.reshape(sh.slice(pairs, [0, 1], [count, 2]), [count]), _unsigned(64))
        values = sh.or_(low, sh.binary("shift_left", high, sh.constant(32, high.type)))
    else:
        values = sh.slice(words, [0], [count])
        if width != 32:
            values = sh.convert(values, _unsigned(width))
    return sh.reshape(values, shape), new_state


def _legalize(op: ir.Operation) -> None:
    state = op.operands[0]
    output_type = ir.RankedTensorType(op.results[1].type)
    elem = output_type.element_type
    try:
        width = _element_width(elem)
    except ValueError:
        raise PassError(op, f"rng_bit_generator cannot produce {elem}") from None
    bits_type = _unsigned(width)
    algorithm = _algorithm(op)
    state_size = sh.shape_of(state)[0]
    if state_size not in ((2,) if algorithm == "THREE_FRY" else (2, 3)):
        needs = "u64[2]" if algorithm == "THREE_FRY" else "u64[2] or u64[3] (PHILOX on the CPU)"
        raise PassError(op, f"rng_bit_generator {algorithm} needs a state of {needs}, got u64[{state_size}]")
    if algorithm == "THREE_FRY" and elem == bits_type:
        return  # the upstream lowering is exact
    with ir.InsertionPoint(op), op.location:
        if algorithm == "THREE_FRY":
            generator = sh.create(
                op.name,
                [state],
                [state.type, sh.tensor_type(output_type.shape, bits_type)],
                {"rng_algorithm": op.attributes["rng_algorithm"]},
            )
            bits, new_state = generator.results[1], generator.results[0]
        else:
            bits, new_state = _philox(state, list(output_type.shape), width)
        values = bits if elem == bits_type else sh.bitcast_convert(bits, elem)
    op.results[0].replace_all_uses_with(new_state)
    op.results[1].replace_all_uses_with(values)
    op.erase()


@dataclasses.dataclass(frozen=True)
class LegalizeRngBitGenerator(ModulePass):
    """Expand PHILOX/DEFAULT rng_bit_generator like XLA:CPU; float outputs as unsigned bits."""

    NAME = "xhlo-legalize-rng-bit-generator"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.rng_bit_generator"):
            _legalize(op)

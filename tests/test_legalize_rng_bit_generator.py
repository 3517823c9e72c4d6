"""rng_bit_generator: PHILOX/DEFAULT bit-exact with XLA:CPU, float and signed outputs as bits."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo import dtypes

from .xla_oracle import xla_cpu

RNG = """func.func @main(%s: tensor<{k}xui64>) -> (tensor<{k}xui64>, tensor<{shape}x{elem}>) {{
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = {alg} : (tensor<{k}xui64>) -> (tensor<{k}xui64>, tensor<{shape}x{elem}>)
  return %0#0, %0#1 : tensor<{k}xui64>, tensor<{shape}x{elem}>
}}"""

NEAR_WRAP = 0xFFFF_FFFF_FFFF_FFF0  # the low counter word overflows after 16 blocks

STATES = {
    "u64[2]": [0x0123456789ABCDEF, 42],
    "u64[2] wrapping": [5, NEAR_WRAP],
    "u64[3]": [1, 2, 3],
    "u64[3] wrapping both words": [7, NEAR_WRAP, 0xFFFF_FFFF_FFFF_FFFF],
}


def _module(state, shape, elem, algorithm):
    return RNG.format(k=len(state), shape="x".join(map(str, shape)), elem=elem, alg=algorithm)


def _bits(array: np.ndarray) -> np.ndarray:
    """Compare raw bits: XLA returns unsigned buffers whatever the declared type."""
    return array.view(np.dtype(f"uint{8 * array.dtype.itemsize}"))


@pytest.mark.parametrize("state_name", sorted(STATES))
@pytest.mark.parametrize("elem", ["ui32", "ui64", "ui8", "ui16"])
@pytest.mark.parametrize("algorithm", ["PHILOX", "DEFAULT"])
def test_philox_matches_xla_cpu(state_name, elem, algorithm):
    state = np.array(STATES[state_name], np.uint64)
    module = _module(state, (3, 5, 7), elem, algorithm)  # 105 values: a partial last block
    new_state, bits = xhlo.compile(module)(state)
    want_state, want_bits = xla_cpu(module, state)
    np.testing.assert_array_equal(bits, want_bits)
    np.testing.assert_array_equal(new_state, want_state)


@pytest.mark.parametrize("elem", ["f32", "f64", "bf16", "i32", "i64", "f8E4M3FN"])
@pytest.mark.parametrize("algorithm", ["THREE_FRY", "PHILOX"])
def test_non_unsigned_outputs_are_the_same_bits(elem, algorithm):
    """A float or signed output is the unsigned output of the same width, reinterpreted."""
    state = np.array([11, 2**40 + 3], np.uint64)
    width = dtypes.to_numpy_dtype(elem).itemsize * 8
    got_state, got = xhlo.compile(_module(state, (4, 6), elem, algorithm))(state)
    want_state, want = xhlo.compile(_module(state, (4, 6), f"ui{width}", algorithm))(state)
    np.testing.assert_array_equal(_bits(got), want)
    np.testing.assert_array_equal(got_state, want_state)
    if elem != "f8E4M3FN":  # XLA has no 8-bit float generator
        np.testing.assert_array_equal(_bits(got), _bits(xla_cpu(_module(state, (4, 6), elem, algorithm), state)[1]))


def test_philox_spec_state_advances_by_blocks():
    """Six 32-bit words use two blocks of four; 64-bit values use two words each."""
    state = np.array([1, 2, 3], np.uint64)
    new_state, _ = xhlo.compile(_module(state, (2, 3), "ui32", "PHILOX"))(state)
    np.testing.assert_array_equal(new_state, [1, 4, 3])
    new_state, _ = xhlo.compile(_module(state, (2, 3), "ui64", "PHILOX"))(state)
    np.testing.assert_array_equal(new_state, [1, 5, 3])


def test_philox_empty_output_keeps_state():
    state = np.array([9, 8], np.uint64)
    new_state, bits = xhlo.compile(_module(state, (0, 3), "ui32", "PHILOX"))(state)
    assert bits.shape == (0, 3)
    np.testing.assert_array_equal(new_state, state)

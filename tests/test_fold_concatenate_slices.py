"""xhlo-fold-concatenate-slices: JAX's padding chains, checked against numpy.

``jnp.pad`` in the reflect, symmetric and wrap modes and ``jnp.roll`` over two
axes concatenate slices along one axis, slice the concatenation, and so on;
the IR after the prepare stage must hold one concatenation per axis.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

jax = pytest.importorskip("jax")
import jax.numpy as jnp
from jax import export

RNG = np.random.default_rng(3)


def _compile(fn, *args):
    return xhlo.compile(export.export(jax.jit(fn), platforms=["cpu"])(*args), cache=False)


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "wrap"])
def test_pad_modes(mode):
    x = RNG.standard_normal((2, 40, 30, 3)).astype(np.float32)
    widths = ((0, 0), (5, 7), (4, 4), (0, 0))
    exe = _compile(lambda x: jnp.pad(x, widths, mode=mode), x)
    assert exe.ir("xhlo-stablehlo-prepare").count("stablehlo.concatenate") == 2  # one per padded axis
    np.testing.assert_array_equal(exe(x), np.pad(x, widths, mode=mode))


def test_roll_over_two_axes():
    x = RNG.standard_normal((64, 48)).astype(np.float32)
    exe = _compile(lambda x: jnp.roll(x, (5, -7), (0, 1)), x)
    np.testing.assert_array_equal(exe(x), np.roll(x, (5, -7), (0, 1)))


SPANNING = """func.func @main(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> (tensor<4x4xf32>, tensor<4x2xf32>) {
  %c = stablehlo.concatenate %a, %b, dim = 1 : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  %across = stablehlo.slice %c [0:4, 1:5] : (tensor<4x8xf32>) -> tensor<4x4xf32>
  %within = stablehlo.slice %c [0:4, 4:8:2] : (tensor<4x8xf32>) -> tensor<4x2xf32>
  return %across, %within : tensor<4x4xf32>, tensor<4x2xf32>
}"""


def test_a_slice_across_operands_keeps_the_concatenation():
    a, b = RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal((4, 5)).astype(np.float32)
    exe = xhlo.compile(SPANNING, cache=False)
    assert "stablehlo.concatenate" in exe.ir("xhlo-stablehlo-prepare")
    joined = np.concatenate([a, b], 1)
    across, within = exe(a, b)
    np.testing.assert_array_equal(across, joined[:, 1:5])
    np.testing.assert_array_equal(within, joined[:, 4:8:2])

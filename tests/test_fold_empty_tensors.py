"""xhlo-fold-empty-tensors: programs with slices and paddings that leave no elements compile
and compute what the reference interpreter and numpy do."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo import reference

RNG = np.random.default_rng(5)

# the last level of JAX's associative scan (cumlogsumexp's gradient) in miniature:
# an empty slice at the end of a dimension, concatenated to a strided slice, then interleaved
INTERLEAVE = """func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x1xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x2xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %e = stablehlo.slice %a [0:2, 2:2:2] : (tensor<2x2xf32>) -> tensor<2x0xf32>
  %s = stablehlo.slice %a [0:2, 0:1] : (tensor<2x2xf32>) -> tensor<2x1xf32>
  %c = stablehlo.concatenate %s, %e, dim = 1 : (tensor<2x1xf32>, tensor<2x0xf32>) -> tensor<2x1xf32>
  %0 = stablehlo.pad %c, %z, low = [0, 0], high = [0, 1], interior = [0, 1] : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x2xf32>
  %1 = stablehlo.pad %b, %z, low = [0, 1], high = [0, 0], interior = [0, 1] : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x2xf32>
  %2 = stablehlo.add %0, %1 : tensor<2x2xf32>
  %3 = stablehlo.concatenate %e, %s, %e, %a, dim = 1 : (tensor<2x0xf32>, tensor<2x1xf32>, tensor<2x0xf32>, tensor<2x2xf32>) -> tensor<2x3xf32>
  %4 = stablehlo.pad %a, %z, low = [0, -1], high = [0, -1], interior = [0, 0] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x0xf32>
  %5 = stablehlo.pad %e, %z, low = [0, 1], high = [0, 1], interior = [0, 1] : (tensor<2x0xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %2, %3, %4, %5 : tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x2xf32>
}"""


def test_empty_slices_and_paddings_against_the_interpreter():
    a, b = RNG.standard_normal((2, 2)).astype(np.float32), RNG.standard_normal((2, 1)).astype(np.float32)
    got = xhlo.compile(INTERLEAVE, cache=False)(a, b)
    for g, w in zip(got, reference.evaluate(INTERLEAVE, a, b)):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_cumlogsumexp_gradient():
    """Its associative scan slices the last level at the end of a dimension of 2."""
    jax = pytest.importorskip("jax")
    from jax import export, lax

    x = RNG.standard_normal((16, 64)).astype(np.float32)
    grad = jax.jit(lambda x: jax.grad(lambda x: lax.cumlogsumexp(x, axis=1).sum())(x))
    got = xhlo.compile(export.export(grad, platforms=["cpu"])(x))(x)
    wide = x.astype(np.float64)  # d/dx_k sum_j cumlse_j = exp(x_k) * sum_{j >= k} exp(-cumlse_j)
    suffix = np.cumsum(np.exp(-np.logaddexp.accumulate(wide, axis=1))[:, ::-1], axis=1)[:, ::-1]
    np.testing.assert_allclose(got, np.exp(wide) * suffix, rtol=1e-4, atol=1e-6)


def _reduce_window_sum(n: int, window: int, dilation: int, padding: tuple[int, int]):
    from xhlo import builder as xb

    b = xb.XlaBuilder("windows")
    x = xb.ops.Parameter(b, 0, xb.Shape.array_shape(np.float32, (n, 2)))
    return b.build(xb.ops.ReduceWindowWithGeneralPadding(
        x, np.float32(0), lambda a, c: a + c, [window, 1], [1, 1], [1, 1], [dilation, 1], [padding, (0, 0)]))


@pytest.mark.parametrize("n,window,dilation,padding", [
    (3, 5, 1, (0, 0)),   # the window does not fit
    (3, 2, 4, (0, 0)),   # nor once dilated
    (3, 1, 1, (-3, 0)),  # the padding removes every element
    (5, 2, 1, (-1, -1)),  # some left: windows over the cropped operand
])
def test_reduce_windows_without_results_against_the_interpreter(n, window, dilation, padding):
    computation = _reduce_window_sum(n, window, dilation, padding)
    x = RNG.standard_normal((n, 2)).astype(np.float32)
    (want,) = reference.evaluate(computation.as_stablehlo_text(), x)
    got = xhlo.compile(computation)(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_reduce_window_padding_beyond_the_operand_is_a_build_error():
    """Padding that removes more than the operand holds is an error naming the op (it had
    aborted the process: the lowering's pad had no valid type)."""
    with pytest.raises(ValueError, match=r"ReduceWindow: padding \(-5, 0\) removes more than dimension 0"):
        _reduce_window_sum(3, 1, 1, (-5, 0))

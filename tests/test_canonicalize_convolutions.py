"""xhlo-canonicalize-convolutions: convolutions in JAX's gradient layouts take the im2col + BLAS path.

Each module is compiled through the whole pipeline and compared with the StableHLO
reference interpreter; the IR after ``xhlo-fuse-and-vectorize`` shows whether the
convolution became a BLAS-bound contraction.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import xhlo
from xhlo import blas, reference

pytestmark = pytest.mark.skipif(not blas.available(), reason="scipy-openblas32 not installed")

RNG = np.random.default_rng(5)


def _t(shape, elem="f32") -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{elem}>"


def conv_module(x_shape, k_shape, y_shape, numbers, window="pad = [[1, 1], [1, 1]]", elem="f32") -> str:
    tx, tk, ty = _t(x_shape, elem), _t(k_shape, elem), _t(y_shape, elem)
    return f"""func.func @main(%x: {tx}, %k: {tk}) -> {ty} {{
  %0 = stablehlo.convolution(%x, %k) dim_numbers = {numbers}, window = {{{window}}}
       {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({tx}, {tk}) -> {ty}
  return %0 : {ty}
}}"""


CASES = {
    # name: (input shape, kernel shape, output shape, dimension numbers, window); each
    # at least the 32^3 multiply-adds xhlo-prepare-gemms wants for a BLAS call
    "input_gradient_kernel_hwoi": ((2, 12, 12, 16), (3, 3, 8, 16), (2, 12, 12, 8),
                                   "[b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f]", "pad = [[1, 1], [1, 1]]"),
    "weight_gradient": ((8, 12, 12, 2), (8, 12, 12, 16), (3, 3, 2, 16),
                        "[f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f]", "pad = [[1, 1], [1, 1]]"),
    "nchw_oihw_strided": ((2, 8, 17, 17), (16, 8, 3, 3), (2, 16, 8, 8),
                          "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]", "stride = [2, 2]"),
    "dilated_kernel": ((2, 14, 14, 8), (16, 3, 3, 8), (2, 10, 10, 16),
                       "[b, 0, 1, f]x[o, 0, 1, i]->[b, 0, 1, f]", "rhs_dilate = [2, 2]"),
    # the input gradient of a stride-2 convolution, as JAX exports it
    "transposed_convolution": ((2, 6, 6, 16), (3, 3, 8, 16), (2, 12, 12, 8),
                               "[b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f]",
                               "pad = [[1, 2], [1, 2]], lhs_dilate = [2, 2]"),
    # 1-D convolutions: a unit spatial dimension inserted, then as the 2-D ones
    "1d_nwc_wio": ((2, 100, 16), (5, 16, 24), (2, 100, 24), "[b, 0, f]x[0, i, o]->[b, 0, f]", "pad = [[2, 2]]"),
    "1d_ncw_oiw_strided_dilated": ((3, 16, 101), (24, 16, 3), (3, 24, 49), "[b, f, 0]x[o, i, 0]->[b, f, 0]",
                                   "stride = [2], rhs_dilate = [2]"),
    "1d_transposed": ((4, 200, 32), (4, 16, 32), (4, 400, 16), "[b, 0, f]x[0, o, i]->[b, 0, f]",
                      "pad = [[2, 2]], lhs_dilate = [2]"),
    "1d_weight_gradient": ((16, 50, 4), (16, 48, 32), (3, 4, 32), "[f, 0, b]x[i, 0, o]->[0, b, f]", "pad = [[0, 0]]"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_layouts_match_the_interpreter_through_blas(name):
    x_shape, k_shape, y_shape, numbers, window = CASES[name]
    module = conv_module(x_shape, k_shape, y_shape, numbers, window)
    x = RNG.standard_normal(x_shape).astype(np.float32)
    k = RNG.standard_normal(k_shape).astype(np.float32)
    exe = xhlo.compile(module)
    assert "{xhlo.blas}" in exe.ir("xhlo-fuse-and-vectorize")
    (expected,) = reference.evaluate(module, x, k)
    np.testing.assert_allclose(exe(x, k), expected, rtol=1e-4, atol=1e-4)


def _transposed(size, kernel, stride, low, high):
    """Shapes and window of a transposed convolution, [b, 0, 1, f] x [0, 1, o, i] as JAX's input gradient."""
    out = (size - 1) * stride + 1 + low + high - kernel + 1
    window = f"pad = [[{low}, {high}], [{low}, {high}]], lhs_dilate = [{stride}, {stride}]"
    return (2, size, size, 16), (kernel, kernel, 8, 16), (2, out, out, 8), window


# stride, kernel, padding: phases with no taps (kernel < stride), cut edges (negative
# sub-padding), outputs not a multiple of the stride
TRANSPOSED = [(2, 3, 1, 2), (2, 3, 2, 2), (2, 1, 0, 1), (2, 4, 1, 1), (3, 3, 2, 2), (3, 5, 0, 4), (2, 3, 0, 0),
              (2, 2, 1, 0), (3, 2, 1, 1)]


@pytest.mark.parametrize("stride,kernel,low,high", TRANSPOSED)
def test_transposed_convolutions_by_phase_match_the_interpreter(stride, kernel, low, high):
    x_shape, k_shape, y_shape, window = _transposed(7, kernel, stride, low, high)
    module = conv_module(x_shape, k_shape, y_shape, "[b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f]", window)
    x = RNG.standard_normal(x_shape).astype(np.float32)
    k = RNG.standard_normal(k_shape).astype(np.float32)
    exe = xhlo.compile(module, cache=False)
    prepared = exe.ir("xhlo-stablehlo-prepare")
    assert "lhs_dilate" not in prepared and "interior = [0, 1" not in prepared  # no zeros multiplied
    (expected,) = reference.evaluate(module, x, k)
    np.testing.assert_allclose(exe(x, k), expected, rtol=1e-4, atol=1e-4)


def test_integer_convolution_keeps_its_layout():
    """No BLAS for integers: the convolution stays as written (and exact)."""
    x_shape, k_shape, y_shape, numbers, window = CASES["input_gradient_kernel_hwoi"]
    module = conv_module(x_shape, k_shape, y_shape, numbers, window, elem="i32")
    x = RNG.integers(-5, 5, x_shape).astype(np.int32)
    k = RNG.integers(-5, 5, k_shape).astype(np.int32)
    exe = xhlo.compile(module)
    assert "stablehlo.transpose" not in exe.ir("xhlo-stablehlo-prepare")
    (expected,) = reference.evaluate(module, x, k)
    np.testing.assert_array_equal(exe(x, k), expected)


@pytest.mark.parametrize("window", ["pad = [[1, 1], [1, 1]]", "pad = [[1, 2], [1, 2]], lhs_dilate = [2, 2]"])
@pytest.mark.parametrize("elem", ["f16", "bf16"])
def test_preferred_result_type_is_kept(window, elem):
    """f16/bf16 operands with an f32 result (JAX's preferred_element_type): the canonical
    convolution keeps the f32 result, also when split by phase. Oracle: the interpreter
    on the operands in f32 (it takes no bf16), where their products are exact."""
    x_shape, k_shape = (2, 6, 6, 16), (3, 3, 8, 16)
    y_side = 6 if "lhs_dilate" not in window else 12
    y_shape = (2, y_side, y_side, 8)
    numbers = "[b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f]"
    module = conv_module(x_shape, k_shape, y_shape, numbers, window, elem=elem).replace(
        _t(y_shape, elem), _t(y_shape))
    dtype = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}[elem]
    x, k = (RNG.standard_normal(s).astype(dtype) for s in (x_shape, k_shape))
    exe = xhlo.compile(module, cache=False)
    assert "stablehlo.transpose" in exe.ir("xhlo-stablehlo-prepare")
    oracle = conv_module(x_shape, k_shape, y_shape, numbers, window)
    (expected,) = reference.evaluate(oracle, x.astype(np.float32), k.astype(np.float32))
    result = exe(x, k)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)


GROUPED = {
    # name: (input, kernel, output, dimension numbers, window, groups, split into groups?)
    "nhwc_4_groups": ((2, 10, 10, 32), (3, 3, 8, 48), (2, 10, 10, 48), "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]",
                      "pad = [[1, 1], [1, 1]]", 4, True),
    "nchw_2_groups_strided": ((2, 32, 11, 11), (16, 16, 3, 3), (2, 16, 5, 5), "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
                              "stride = [2, 2]", 2, True),
    "1d_2_groups": ((2, 60, 16), (3, 8, 32), (2, 60, 32), "[b, 0, f]x[0, i, o]->[b, 0, f]", "pad = [[1, 1]]", 2, True),
    "4_channels_a_group": ((2, 10, 10, 16), (3, 3, 4, 16), (2, 10, 10, 16), "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]",
                           "pad = [[1, 1], [1, 1]]", 4, False),
}


@pytest.mark.parametrize("name", sorted(GROUPED))
def test_grouped_convolutions_split_by_group_match_the_interpreter(name):
    x_shape, k_shape, y_shape, numbers, window, groups, split = GROUPED[name]
    module = conv_module(x_shape, k_shape, y_shape, numbers, window).replace(
        "feature_group_count = 1", f"feature_group_count = {groups}")
    x = RNG.standard_normal(x_shape).astype(np.float32)
    k = RNG.standard_normal(k_shape).astype(np.float32)
    exe = xhlo.compile(module, cache=False)
    prepared = exe.ir("xhlo-stablehlo-prepare")
    assert (f"feature_group_count = {groups}" not in prepared) == split
    (expected,) = reference.evaluate(module, x, k)
    np.testing.assert_allclose(exe(x, k), expected, rtol=1e-4, atol=1e-4)

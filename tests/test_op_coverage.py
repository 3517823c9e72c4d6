"""Less common StableHLO ops, one small module each, against an independent oracle.

The oracle is the StableHLO reference interpreter where it can evaluate the op
(it runs in a child process: it aborts on einsum, torch_index_select,
real_dynamic_slice, rng_bit_generator...), numpy, or XLA:CPU itself compiling
the very same module text through jaxlib.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import xhlo
from xhlo import dtypes, reference

from .xla_oracle import xla_cpu

# -- reduce_precision --------------------------------------------------------------------

REDUCE_PRECISION = """func.func @main(%a: tensor<{n}xf32>) -> (tensor<{n}xf32>, tensor<{n}xf32>, tensor<{n}xf32>) {{
  %0 = stablehlo.reduce_precision %a, format = e5m10 : tensor<{n}xf32>
  %1 = stablehlo.reduce_precision %a, format = e8m7 : tensor<{n}xf32>
  %2 = stablehlo.reduce_precision %a, format = e2m1 : tensor<{n}xf32>
  return %0, %1, %2 : tensor<{n}xf32>, tensor<{n}xf32>, tensor<{n}xf32>
}}"""


def test_reduce_precision_matches_interpreter():
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, 1e-5, -1e-5, 65519.99, 65520.0, 1.00048828125, 1.0009765625 * 3, np.inf, -np.inf, np.nan, 3e38, 1e-40]
    x = np.concatenate([special, rng.normal(0, 100, 200), rng.normal(0, 1e-3, 50)]).astype(np.float32)
    module = REDUCE_PRECISION.format(n=x.size)
    got = xhlo.compile(module)(x)
    want = reference.evaluate(module, x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)  # NaN positions must match too
    # e8m7 is bfloat16 rounding (to nearest even), for finite values
    finite = np.isfinite(x)
    np.testing.assert_array_equal(got[1][finite], x[finite].astype(ml_dtypes.bfloat16).astype(np.float32))


REDUCE_PRECISION_ONE = """func.func @main(%a: tensor<{n}x{elem}>) -> tensor<{n}x{elem}> {{
  %0 = stablehlo.reduce_precision %a, format = {fmt} : tensor<{n}x{elem}>
  return %0 : tensor<{n}x{elem}>
}}"""


@pytest.mark.parametrize(
    "elem,fmt",
    [("f64", "e5m10"), ("f64", "e11m52"), ("f64", "e8m23"), ("f16", "e5m2"), ("bf16", "e5m2"), ("f32", "e8m0"), ("f32", "e1m1")],
)
def test_reduce_precision_formats_match_xla(elem, fmt):
    """Including mantissa_bits = 0, where NaN stays NaN (the interpreter makes it Inf)."""
    rng = np.random.default_rng(1)
    special = [0, -0.0, np.inf, -np.inf, np.nan, 1e-6, 65520, 65504, 1.5, 2.5, 3.5, -3.0, 1e-30, 1e30]
    with np.errstate(over="ignore"):
        x = np.concatenate([rng.normal(0, 1000, 50), special]).astype(dtypes.to_numpy_dtype(elem))
    module = REDUCE_PRECISION_ONE.format(n=x.size, elem=elem, fmt=fmt)
    got = xhlo.compile(module)(x)
    # in f64, where NaN == NaN for assert_array_equal whatever the type
    np.testing.assert_array_equal(got.astype(np.float64), xla_cpu(module, x)[0].astype(np.float64))


# -- rng_bit_generator ---------------------------------------------------------------------

RNG = """func.func @main(%s: tensor<{k}xui64>) -> (tensor<{k}xui64>, tensor<{shape}x{elem}>) {{
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = {alg} : (tensor<{k}xui64>) -> (tensor<{k}xui64>, tensor<{shape}x{elem}>)
  return %0#0, %0#1 : tensor<{k}xui64>, tensor<{shape}x{elem}>
}}"""


@pytest.mark.parametrize("algorithm", ["THREE_FRY", "PHILOX", "DEFAULT"])
@pytest.mark.parametrize("elem,shape", [("ui32", (4, 5)), ("ui64", (3, 2)), ("ui8", (7,))])
def test_rng_bit_generator_matches_xla_cpu(algorithm, elem, shape):
    state = np.array([0x0123456789ABCDEF, 42], np.uint64)
    module = RNG.format(k=2, shape="x".join(map(str, shape)), elem=elem, alg=algorithm)
    new_state, bits = xhlo.compile(module)(state)
    want_state, want_bits = xla_cpu(module, state)
    np.testing.assert_array_equal(bits, want_bits)
    np.testing.assert_array_equal(new_state, want_state)


def test_rng_bit_generator_three_fry_spec_example():
    """The StableHLO spec example: state [1, 2] -> [1, 6] and four known u64 words."""
    module = RNG.format(k=2, shape="2x2", elem="ui64", alg="THREE_FRY")
    new_state, bits = xhlo.compile(module)(np.array([1, 2], np.uint64))
    np.testing.assert_array_equal(new_state, [1, 6])
    np.testing.assert_array_equal(
        bits,
        np.array(
            [[9236835810183407956, 16087790271692313299], [18212823393184779219, 2658481902456610144]],
            np.uint64,
        ),
    )


# -- dynamic-shape ops with constant shape operands ------------------------------------------

REAL_DYNAMIC_SLICE = """func.func @main(%a: tensor<6x5xf32>) -> tensor<2x2xf32> {
  %s = stablehlo.constant dense<[1, 0]> : tensor<2xi64>
  %l = stablehlo.constant dense<[5, 4]> : tensor<2xi64>
  %t = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %0 = stablehlo.real_dynamic_slice %a, %s, %l, %t : (tensor<6x5xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}"""


def test_real_dynamic_slice():
    a = np.arange(30, dtype=np.float32).reshape(6, 5)
    np.testing.assert_array_equal(xhlo.compile(REAL_DYNAMIC_SLICE)(a), a[1:5:2, 0:4:3])


DYNAMIC_SHAPES = """func.func @main(%a: tensor<6xf32>, %b: tensor<3xf32>, %p: tensor<f32>) -> (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x2xi32>, tensor<8xf32>) {
  %s23 = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %0 = stablehlo.dynamic_reshape %a, %s23 : (tensor<6xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %s43 = stablehlo.constant dense<[4, 3]> : tensor<2xi32>
  %1 = stablehlo.dynamic_broadcast_in_dim %b, %s43, dims = [1] : (tensor<3xf32>, tensor<2xi32>) -> tensor<4x3xf32>
  %s42 = stablehlo.constant dense<[4, 2]> : tensor<2xi64>
  %2 = stablehlo.dynamic_iota %s42, dim = 0 : (tensor<2xi64>) -> tensor<4x2xi32>
  %lo = stablehlo.constant dense<[1]> : tensor<1xi64>
  %hi = stablehlo.constant dense<[2]> : tensor<1xi64>
  %in = stablehlo.constant dense<[1]> : tensor<1xi64>
  %3 = stablehlo.dynamic_pad %b, %p, %lo, %hi, %in : (tensor<3xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<8xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x2xi32>, tensor<8xf32>
}"""


def test_dynamic_shape_ops_with_constant_shapes():
    a = np.arange(6, dtype=np.float32) - 2.5
    b = np.array([7, 8, 9], np.float32)
    reshaped, broadcast, iota, padded = xhlo.compile(DYNAMIC_SHAPES)(a, b, np.float32(-1))
    np.testing.assert_array_equal(reshaped, a.reshape(2, 3))
    np.testing.assert_array_equal(broadcast, np.broadcast_to(b, (4, 3)))
    np.testing.assert_array_equal(iota, np.repeat(np.arange(4, dtype=np.int32)[:, None], 2, axis=1))
    np.testing.assert_array_equal(padded, [-1, 7, -1, 8, -1, 9, -1, -1])


DYNAMIC_GATHER = """func.func @main(%a: tensor<5x3xf32>, %i: tensor<4x1xi32>) -> tensor<4x2xf32> {
  %s = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %0 = "stablehlo.dynamic_gather"(%a, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}"""


def test_dynamic_gather_with_constant_slice_sizes():
    a = np.arange(15, dtype=np.float32).reshape(5, 3)
    idx = np.array([[4], [0], [2], [9]], np.int32)  # 9 is clamped to 4, as gather does
    got = xhlo.compile(DYNAMIC_GATHER)(a, idx)
    np.testing.assert_array_equal(got, a[np.clip(idx[:, 0], 0, 4), :2])


# -- map and windows ------------------------------------------------------------------------

MAP = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.map"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = stablehlo.multiply %x, %y : tensor<f32>
    %c = stablehlo.constant dense<0.5> : tensor<f32>
    %s = stablehlo.add %m, %c : tensor<f32>
    %r = stablehlo.maximum %s, %x : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}"""


def test_map():
    a = np.array([[1, -2, 3], [0.5, 4, -1]], np.float32)
    b = np.array([[2, 2, -1], [8, 0.25, -3]], np.float32)
    got = xhlo.compile(MAP)(a, b)
    np.testing.assert_array_equal(got, np.maximum(a * b + 0.5, a))
    np.testing.assert_array_equal(got, reference.evaluate(MAP, a, b)[0])


REDUCE_WINDOW_DILATED = """func.func @main(%a: tensor<4x6xf32>) -> tensor<{out}xf32> {{
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%a, %z) ({{
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }}) {{window_dimensions = array<i64: 2, 3>, window_strides = array<i64: {strides}>, base_dilations = array<i64: {base}>, window_dilations = array<i64: {window}>, padding = dense<{padding}> : tensor<2x2xi64>}} : (tensor<4x6xf32>, tensor<f32>) -> tensor<{out}xf32>
  return %0 : tensor<{out}xf32>
}}"""


@pytest.mark.parametrize(
    "base,window,strides,padding,out",
    [
        ("2, 1", "1, 2", "1, 1", "[[0, 0], [0, 0]]", "6x2"),
        ("1, 2", "2, 1", "2, 1", "[[1, 0], [0, 2]]", "2x11"),
        ("3, 3", "2, 2", "2, 3", "[[0, 1], [2, 1]]", "5x5"),
    ],
)
def test_reduce_window_with_dilations(base, window, strides, padding, out):
    module = REDUCE_WINDOW_DILATED.format(base=base, window=window, strides=strides, padding=padding, out=out)
    a = np.arange(24, dtype=np.float32).reshape(4, 6) * 1.5 - 7
    np.testing.assert_array_equal(xhlo.compile(module)(a), reference.evaluate(module, a)[0])


MAP_MIXED_TYPES = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {
  %0 = "stablehlo.map"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<i32>):
    %c = stablehlo.convert %y : (tensor<i32>) -> tensor<f32>
    %s = stablehlo.power %x, %c : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""


def test_map_with_operands_of_different_types():
    a = np.array([1.5, 2, -3, 0.5], np.float32)
    b = np.array([2, 3, 3, -1], np.int32)
    np.testing.assert_array_equal(xhlo.compile(MAP_MIXED_TYPES)(a, b), a ** b.astype(np.float32))


REDUCE_WINDOW_MAX = """func.func @main(%a: tensor<5x7xi32>) -> tensor<4x5xi32> {
  %z = stablehlo.constant dense<-2147483648> : tensor<i32>
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %s = stablehlo.maximum %x, %y : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {window_dimensions = array<i64: 3, 2>, window_strides = array<i64: 3, 3>, base_dilations = array<i64: 3, 2>, window_dilations = array<i64: 2, 3>, padding = dense<[[2, 1], [1, 3]]> : tensor<2x2xi64>} : (tensor<5x7xi32>, tensor<i32>) -> tensor<4x5xi32>
  return %0 : tensor<4x5xi32>
}"""


def test_reduce_window_max_with_dilations_and_padding():
    """Holes from base dilation and padding hold the init value (INT_MIN here)."""
    a = np.random.default_rng(3).integers(-100, 100, (5, 7)).astype(np.int32)
    got = xhlo.compile(REDUCE_WINDOW_MAX)(a)
    np.testing.assert_array_equal(got, reference.evaluate(REDUCE_WINDOW_MAX, a)[0])
    np.testing.assert_array_equal(got, xla_cpu(REDUCE_WINDOW_MAX, a)[0])


# -- convolution ------------------------------------------------------------------------------

CONVOLUTIONS = {
    # NCHW input, IHWO kernel, rhs dilation, two feature groups, stride and padding
    "feature_groups": (
        """func.func @main(%a: tensor<1x4x9x9xf32>, %k: tensor<2x3x3x4xf32>) -> tensor<1x4x7x4xf32> {
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, f, 0, 1]x[i, 0, 1, o]->[b, f, 0, 1], window = {stride = [1, 2], pad = [[1, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [2, 1]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<2x3x3x4xf32>) -> tensor<1x4x7x4xf32>
  return %0 : tensor<1x4x7x4xf32>
}""",
        [(1, 4, 9, 9), (2, 3, 3, 4)],
    ),
    # NHWC input, lhs (base) dilation, two batch groups
    "batch_groups_lhs_dilation": (
        """func.func @main(%a: tensor<4x5x5x2xf32>, %k: tensor<2x2x2x4xf32>) -> tensor<2x8x8x4xf32> {
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [2, 2], rhs_dilate = [1, 1]} {batch_group_count = 2 : i64, feature_group_count = 1 : i64} : (tensor<4x5x5x2xf32>, tensor<2x2x2x4xf32>) -> tensor<2x8x8x4xf32>
  return %0 : tensor<2x8x8x4xf32>
}""",
        [(4, 5, 5, 2), (2, 2, 2, 4)],
    ),
    # output layout differs from the input's, kernel OIHW-like with spatial dims swapped
    "permuted_layouts": (
        """func.func @main(%a: tensor<2x7x3x6xf32>, %k: tensor<4x3x2x3xf32>) -> tensor<4x2x5x3xf32> {
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 1, f, 0]x[o, i, 1, 0]->[f, b, 1, 0], window = {stride = [2, 3], pad = [[1, 2], [0, 1]], lhs_dilate = [1, 2], rhs_dilate = [2, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x7x3x6xf32>, tensor<4x3x2x3xf32>) -> tensor<4x2x5x3xf32>
  return %0 : tensor<4x2x5x3xf32>
}""",
        [(2, 7, 3, 6), (4, 3, 2, 3)],
    ),
    # 3-d, strided
    "three_spatial_dims": (
        """func.func @main(%a: tensor<2x5x5x5x3xf32>, %k: tensor<2x2x2x3x4xf32>) -> tensor<2x2x2x2x4xf32> {
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, 2, f]x[0, 1, 2, i, o]->[b, 0, 1, 2, f], window = {stride = [2, 2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x5x5x5x3xf32>, tensor<2x2x2x3x4xf32>) -> tensor<2x2x2x2x4xf32>
  return %0 : tensor<2x2x2x2x4xf32>
}""",
        [(2, 5, 5, 5, 3), (2, 2, 2, 3, 4)],
    ),
    # reversed (flipped) window with feature groups
    "window_reversal": (
        """func.func @main(%a: tensor<1x6x4xf32>, %k: tensor<3x2x4xf32>) -> tensor<1x4x4xf32> {
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {reverse = [true]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x6x4xf32>, tensor<3x2x4xf32>) -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}""",
        [(1, 6, 4), (3, 2, 4)],
    ),
}


@pytest.mark.parametrize("name", sorted(CONVOLUTIONS))
def test_convolution_dilations_groups_layouts(name):
    module, shapes = CONVOLUTIONS[name]
    rng = np.random.default_rng(5)
    # small integers: every sum is exact in f32, whatever the summation order
    args = [rng.integers(-3, 4, s).astype(np.float32) for s in shapes]
    got = xhlo.compile(module)(*args)
    np.testing.assert_array_equal(got, xla_cpu(module, *args)[0])
    try:
        np.testing.assert_array_equal(got, reference.evaluate(module, *args)[0])
    except reference.ReferenceUnavailable:
        pass  # the interpreter aborts on some dilated/grouped convolutions


# -- dots ------------------------------------------------------------------------------------

DOT_I8 = """func.func @main(%a: tensor<2x3x4xi8>, %b: tensor<2x4x5xi8>) -> (tensor<2x3x5xi32>, tensor<3x2x5xi32>) {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x4xi8>, tensor<2x4x5xi8>) -> tensor<2x3x5xi32>
  %1 = stablehlo.dot_general %b, %a, batching_dims = [0] x [0], contracting_dims = [1] x [2] : (tensor<2x4x5xi8>, tensor<2x3x4xi8>) -> tensor<2x5x3xi32>
  %2 = stablehlo.transpose %1, dims = [2, 0, 1] : (tensor<2x5x3xi32>) -> tensor<3x2x5xi32>
  return %0, %2 : tensor<2x3x5xi32>, tensor<3x2x5xi32>
}"""


def test_dot_general_i8_operands_i32_result():
    """Products and sums in i32: 127 * 127 * 4 overflows i8 and i16."""
    a = np.full((2, 3, 4), 127, np.int8)
    a[1] = -128
    b = np.random.default_rng(6).integers(-128, 128, (2, 4, 5)).astype(np.int8)
    b[0, :, 0] = 127
    got, got_t = xhlo.compile(DOT_I8)(a, b)
    want = np.einsum("bik,bkj->bij", a.astype(np.int32), b.astype(np.int32))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_t, want.transpose(1, 0, 2))


# -- bit manipulation -----------------------------------------------------------------------

BITCASTS = """func.func @main(%a: tensor<3xi32>, %b: tensor<3x2xf32>, %c: tensor<2x4xui8>) -> (tensor<3x4xi8>, tensor<3xf64>, tensor<2xf32>, tensor<3x2xui16>) {
  %0 = stablehlo.bitcast_convert %a : (tensor<3xi32>) -> tensor<3x4xi8>
  %1 = stablehlo.bitcast_convert %b : (tensor<3x2xf32>) -> tensor<3xf64>
  %2 = stablehlo.bitcast_convert %c : (tensor<2x4xui8>) -> tensor<2xf32>
  %3 = stablehlo.bitcast_convert %a : (tensor<3xi32>) -> tensor<3x2xui16>
  return %0, %1, %2, %3 : tensor<3x4xi8>, tensor<3xf64>, tensor<2xf32>, tensor<3x2xui16>
}"""


def test_bitcast_convert_changing_width():
    """Little-endian: narrowing adds a minor dimension, widening removes it."""
    a = np.array([0x01020304, -1, 0x7F80FF00], np.int32)
    b = np.array([[1.5, -2], [3.25, 1e-3], [0, -0.0]], np.float32)
    c = np.array([[0, 0, 0x80, 0x3F], [0xDB, 0x0F, 0x49, 0x40]], np.uint8)
    narrow, wide, from_bytes, halves = xhlo.compile(BITCASTS)(a, b, c)
    np.testing.assert_array_equal(narrow, a.view(np.int8).reshape(3, 4))
    np.testing.assert_array_equal(wide.view(np.uint64), b.view(np.uint64).reshape(3))
    np.testing.assert_array_equal(from_bytes, c.view(np.float32).reshape(2))
    np.testing.assert_array_equal(halves, a.view(np.uint16).reshape(3, 2))


BIT_COUNTS = """func.func @main(%a: tensor<{n}x{elem}>) -> (tensor<{n}x{elem}>, tensor<{n}x{elem}>) {{
  %0 = stablehlo.count_leading_zeros %a : tensor<{n}x{elem}>
  %1 = stablehlo.popcnt %a : tensor<{n}x{elem}>
  return %0, %1 : tensor<{n}x{elem}>, tensor<{n}x{elem}>
}}"""

INTEGER_WIDTHS = {"i2": 2, "i4": 4, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "ui2": 2, "ui4": 4, "ui8": 8, "ui16": 16, "ui32": 32, "ui64": 64}


def _bit_patterns(width: int) -> np.ndarray:
    """Every pattern for narrow types; else 0, all ones, single bits, random words."""
    if width <= 8:
        return np.arange(1 << width, dtype=np.uint64)
    rng = np.random.default_rng(width)
    words = [0, (1 << width) - 1, *(1 << k for k in range(width)), *((1 << (k + 1)) - 1 for k in range(width))]
    randoms = rng.integers(0, 1 << 62, 64, dtype=np.uint64, endpoint=True) >> np.uint64(64 - width if width < 64 else 0)
    if width == 64:
        randoms = randoms * np.uint64(3) + np.uint64(1)  # set the top bits too
    return np.concatenate([np.array(words, dtype=np.uint64), randoms])


@pytest.mark.parametrize("elem", sorted(INTEGER_WIDTHS))
def test_count_leading_zeros_and_popcnt(elem):
    width = INTEGER_WIDTHS[elem]
    patterns = _bit_patterns(width)
    dtype = dtypes.to_numpy_dtype(elem)
    if width < 8:
        signed = not elem.startswith("u")
        values = patterns.astype(np.int64)
        if signed:
            values = np.where(values >= 1 << (width - 1), values - (1 << width), values)
        x = values.astype(dtype)
    else:
        x = patterns.astype(np.dtype(f"uint{width}")).view(dtype)
    clz, pop = xhlo.compile(BIT_COUNTS.format(n=x.size, elem=elem))(x)
    bit_strings = [format(int(p), f"0{width}b") for p in patterns]
    want_clz = [len(s) - len(s.lstrip("0")) for s in bit_strings]
    want_pop = [s.count("1") for s in bit_strings]
    # Compared as bit patterns: i2 holds a count of 2 as -2.
    modulus = 1 << min(width, 62)
    np.testing.assert_array_equal(clz.astype(np.int64) % modulus, want_clz)
    np.testing.assert_array_equal(pop.astype(np.int64) % modulus, want_pop)


# -- deprecated convenience ops ----------------------------------------------------------------

EINSUMS = """func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3x3xf32>) -> (tensor<2x5x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>) {
  %0 = "stablehlo.einsum"(%a, %b) {einsum_config = "bik,kj->bji"} : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x5x3xf32>
  %1 = "stablehlo.unary_einsum"(%a) {einsum_config = "bik->ib"} : (tensor<2x3x4xf32>) -> tensor<3x2xf32>
  %2 = "stablehlo.einsum"(%a, %a) {einsum_config = "bik,bik->bi"} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x5x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>
}"""


def test_einsum_and_unary_einsum():
    rng = np.random.default_rng(7)
    a = rng.integers(-4, 5, (2, 3, 4)).astype(np.float32)
    b = rng.integers(-4, 5, (4, 5)).astype(np.float32)
    c = np.eye(3, dtype=np.float32)
    batched, summed, squares = xhlo.compile(EINSUMS)(a, b, c)
    np.testing.assert_array_equal(batched, np.einsum("bik,kj->bji", a, b))
    np.testing.assert_array_equal(summed, np.einsum("bik->ib", a))
    np.testing.assert_array_equal(squares, np.einsum("bik,bik->bi", a, a))


@pytest.mark.parametrize(
    "config,shapes",
    [("ii->i", [(3, 3)]), ("ij->", [(3, 4)]), ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("i,j->ij", [(3,), (4,)])],
)
def test_einsum_diagonal_ellipsis_outer(config, shapes):
    def t(shape, elem="f32"):
        return f"tensor<{''.join(f'{d}x' for d in shape)}{elem}>"

    rng = np.random.default_rng(8)
    args = [rng.integers(-3, 4, s).astype(np.float32) for s in shapes]
    want = np.einsum(config, *args)
    op = "stablehlo.einsum" if len(shapes) == 2 else "stablehlo.unary_einsum"
    params = ", ".join(f"%a{i}: {t(s)}" for i, s in enumerate(shapes))
    module = f"""func.func @main({params}) -> {t(want.shape)} {{
  %0 = "{op}"({", ".join(f"%a{i}" for i in range(len(shapes)))}) {{einsum_config = "{config}"}} : ({", ".join(t(s) for s in shapes)}) -> {t(want.shape)}
  return %0 : {t(want.shape)}
}}"""
    np.testing.assert_array_equal(xhlo.compile(module)(*args), want)


TORCH_INDEX_SELECT = """func.func @main(%a: tensor<5x3x2xf32>, %i: tensor<4xi32>, %b: tensor<2x4x3xi64>, %j: tensor<2x2xi64>) -> (tensor<5x4x2xf32>, tensor<2x2x3xi64>) {
  %0 = "stablehlo.torch_index_select"(%a, %i) {dim = 1 : i64, batch_dims = 0 : i64} : (tensor<5x3x2xf32>, tensor<4xi32>) -> tensor<5x4x2xf32>
  %1 = "stablehlo.torch_index_select"(%b, %j) {dim = 1 : i64, batch_dims = 1 : i64} : (tensor<2x4x3xi64>, tensor<2x2xi64>) -> tensor<2x2x3xi64>
  return %0, %1 : tensor<5x4x2xf32>, tensor<2x2x3xi64>
}"""


def test_torch_index_select():
    a = np.arange(30, dtype=np.float32).reshape(5, 3, 2)
    i = np.array([2, 0, 0, 1], np.int32)
    b = np.arange(24, dtype=np.int64).reshape(2, 4, 3) * 1_000_000_007
    j = np.array([[3, 0], [1, 1]], np.int64)
    selected, batched = xhlo.compile(TORCH_INDEX_SELECT)(a, i, b, j)
    np.testing.assert_array_equal(selected, np.take(a, i, axis=1))
    np.testing.assert_array_equal(batched, np.stack([b[n][j[n]] for n in range(2)]))

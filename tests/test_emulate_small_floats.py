"""f8/f4 element types computed in f32 and rounded after each op, checked against ml_dtypes."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
import xhlo
from xhlo import dtypes

SMALL_FLOATS = [
    "f8E4M3FN",
    "f8E5M2",
    "f8E4M3FNUZ",
    "f8E5M2FNUZ",
    "f8E4M3B11FNUZ",
    "f8E3M4",
    "f8E4M3",
    "f8E8M0FNU",
    "f4E2M1FN",
]


def _convert_module(n: int, source: str, target: str) -> str:
    return f"""func.func @main(%a: tensor<{n}x{source}>) -> tensor<{n}x{target}> {{
  %0 = stablehlo.convert %a : (tensor<{n}x{source}>) -> tensor<{n}x{target}>
  return %0 : tensor<{n}x{target}>
}}"""


def _all_codes(elem: str) -> np.ndarray:
    count = 16 if elem.startswith("f4") else 256
    return np.arange(count, dtype=np.uint8).view(dtypes.to_numpy_dtype(elem))


def _bits(array: np.ndarray) -> np.ndarray:
    """Raw storage bits (the low nibble for 4-bit types)."""
    raw = array.view(np.uint8 if array.dtype.itemsize == 1 else np.uint32)
    return raw & 0xF if array.dtype == ml_dtypes.float4_e2m1fn else raw


def assert_same_values(got: np.ndarray, want: np.ndarray, zero_sign_matters: bool = True) -> None:
    """Bit-exact, except that any NaN matches any NaN (the sign of a computed NaN is unspecified)."""
    got_nan = np.isnan(got.astype(np.float32))
    want_nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(got_nan, want_nan)
    if zero_sign_matters:
        np.testing.assert_array_equal(_bits(got)[~got_nan], _bits(want)[~want_nan])
    else:
        np.testing.assert_array_equal(got.astype(np.float32)[~got_nan], want.astype(np.float32)[~want_nan])


def _f32_test_values() -> np.ndarray:
    """Every f32 binade with mantissas at, just below and just above a rounding tie
    for every cut position, a sweep of all bit patterns, both signs, NaN and Inf."""
    exponents = np.arange(256, dtype=np.uint64) << np.uint64(23)
    patterns = []
    for cut in range(1, 24):
        for upper in (0, 1, 2, 3, 5, 6, 7, 0x7FFFFF):
            tie = ((upper << cut) | (1 << (cut - 1))) & 0x7FFFFF
            for delta in (-1, 0, 1):
                patterns.append(exponents | np.uint64((tie + delta) & 0x7FFFFF))
    patterns.append(np.arange(0, 1 << 31, 40_009, dtype=np.uint64))
    magnitudes = np.concatenate(patterns) & np.uint64(0x7FFF_FFFF)
    bits = np.unique(np.concatenate([magnitudes, magnitudes | np.uint64(0x8000_0000)]))
    return bits.astype(np.uint32).view(np.float32)


F32_VALUES = _f32_test_values()


@pytest.mark.parametrize("elem", SMALL_FLOATS)
def test_decode_every_code(elem):
    codes = _all_codes(elem)
    got = xhlo.compile(_convert_module(codes.size, elem, "f32"))(codes)
    want = codes.astype(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))  # NaN bits too


@pytest.mark.parametrize("elem", SMALL_FLOATS)
def test_encode_rounds_like_ml_dtypes(elem):
    x = F32_VALUES
    got = xhlo.compile(_convert_module(x.size, "f32", elem))(x)
    with np.errstate(invalid="ignore", over="ignore"):
        want = x.astype(dtypes.to_numpy_dtype(elem))
    mismatch = np.flatnonzero(_bits(got) != _bits(want))
    assert mismatch.size == 0, [
        (hex(x[i : i + 1].view(np.uint32)[0]), hex(_bits(got)[i]), hex(_bits(want)[i])) for i in mismatch[:5]
    ]


def test_e8m0_rounding_of_f32_subnormals_matches_xla():
    """Between 2^-127 and 1.5 * 2^-127 XLA rounds up (ml_dtypes 0.7 does not; xhlo pins 0.6)."""
    jnp = pytest.importorskip("jax.numpy")
    import jax

    bits = np.array([0x1, 0x400000, 0x400001, 0x5FFFFF, 0x600000, 0x7FFFFF, 0x800000, 0xBFFFFF, 0xC00000], np.uint32)
    x = bits.view(np.float32)
    got = xhlo.compile(_convert_module(x.size, "f32", "f8E8M0FNU"))(x)
    want = jax.jit(lambda v: v.astype(jnp.float8_e8m0fnu))(x)
    np.testing.assert_array_equal(_bits(got), _bits(np.asarray(want)))


def test_encode_named_cases():
    """Ties to even, subnormals, overflow to Inf (E5M2) / NaN (E4M3FN), saturation (E2M1)."""
    x = np.array([1.0625, 1.1875, 2.0**-9, 2.0**-10, 3 * 2.0**-10, 464.0, 465.0, 61440.0, -0.0, 7.0], np.float32)
    e4m3fn = xhlo.compile(_convert_module(x.size, "f32", "f8E4M3FN"))(x).view(np.uint8)
    assert list(e4m3fn) == [0x38, 0x3A, 0x01, 0x00, 0x02, 0x7E, 0x7F, 0x7F, 0x80, 0x4E]
    e5m2 = xhlo.compile(_convert_module(x.size, "f32", "f8E5M2"))(x).view(np.uint8)
    assert e5m2[7] == 0x7C  # 61440 ties between the largest finite (odd) and Inf
    f4 = xhlo.compile(_convert_module(x.size, "f32", "f4E2M1FN"))(x).astype(np.float32)
    assert f4[-1] == 6.0 and f4[5] == 6.0


@pytest.mark.parametrize(
    "source,target",
    [
        ("f8E4M3FN", "f16"),
        ("f8E5M2", "bf16"),
        ("f8E4M3FNUZ", "f64"),
        ("f8E5M2", "f8E4M3FN"),
        ("f8E4M3FN", "f8E5M2FNUZ"),
        ("f4E2M1FN", "f8E3M4"),
        ("f8E8M0FNU", "f16"),
    ],
)
def test_convert_between_floats(source, target):
    codes = _all_codes(source)
    got = xhlo.compile(_convert_module(codes.size, source, target))(codes)
    with np.errstate(invalid="ignore", over="ignore"):
        want = codes.astype(np.float32).astype(dtypes.to_numpy_dtype(target))
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("source", ["f16", "f64", "i32", "ui8", "i1"])
@pytest.mark.parametrize("target", ["f8E4M3FN", "f8E5M2", "f4E2M1FN"])
def test_convert_to_small_float(source, target):
    rng = np.random.default_rng(1)
    np_source = dtypes.to_numpy_dtype(source)
    if np_source.kind == "f":
        with np.errstate(over="ignore"):  # 1e6 is Inf in f16
            x = np.concatenate([rng.normal(0, 50, 500), [0.0, -0.0, np.inf, -np.inf, 1e6]]).astype(np_source)
    elif np_source.kind == "b":
        x = np.array([True, False])
    else:
        x = rng.integers(np.iinfo(np_source).min, np.iinfo(np_source).max, 500, endpoint=True).astype(np_source)
    got = xhlo.compile(_convert_module(x.size, source, target))(x)
    with np.errstate(invalid="ignore", over="ignore"):
        want = x.astype(np.float32).astype(dtypes.to_numpy_dtype(target))
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_convert_to_integer_truncates():
    codes = _all_codes("f8E4M3FN")
    finite = codes[np.isfinite(codes.astype(np.float32))]
    got = xhlo.compile(_convert_module(finite.size, "f8E4M3FN", "i32"))(finite)
    np.testing.assert_array_equal(got, finite.astype(np.float32).astype(np.int32))


def _binary_module(op: str, elem: str, n: int) -> str:
    t = f"tensor<{n}x{elem}>"
    return f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = stablehlo.{op} %a, %b : {t}
  return %0 : {t}
}}"""


_NUMPY_BINARY = {"add": np.add, "multiply": np.multiply, "subtract": np.subtract, "divide": np.divide, "maximum": np.maximum}


@pytest.mark.parametrize("elem", SMALL_FLOATS)
@pytest.mark.parametrize("op", ["add", "multiply", "subtract", "divide", "maximum"])
def test_binary_ops_round_once(elem, op):
    """Every pair of codes (of a sample): computed in f32, rounded with ml_dtypes."""
    codes = _all_codes(elem)
    rng = np.random.default_rng(2)
    a = rng.choice(codes, 2000) if codes.size > 16 else np.repeat(codes, 16)
    b = rng.choice(codes, 2000) if codes.size > 16 else np.tile(codes, 16)
    got = xhlo.compile(_binary_module(op, elem, a.size))(a, b)
    with np.errstate(all="ignore"):
        want = _NUMPY_BINARY[op](a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    # numpy leaves the zero picked by maximum(+0, -0) unspecified.
    assert_same_values(got, want, zero_sign_matters=op != "maximum")


def test_unary_math_in_f32():
    codes = _all_codes("f8E4M3FN")
    t = f"tensor<{codes.size}xf8E4M3FN>"
    module = f"""func.func @main(%a: {t}) -> ({t}, {t}, {t}) {{
  %0 = stablehlo.exponential %a : {t}
  %1 = stablehlo.negate %a : {t}
  %2 = stablehlo.abs %a : {t}
  return %0, %1, %2 : {t}, {t}, {t}
}}"""
    exp, neg, absolute = xhlo.compile(module)(codes)
    wide = codes.astype(np.float32)
    with np.errstate(all="ignore"):
        assert_same_values(exp, np.exp(wide).astype(codes.dtype))
    assert_same_values(neg, (-wide).astype(codes.dtype))
    assert_same_values(absolute, np.abs(wide).astype(codes.dtype))


def _dot_operands(elem: str, m: int, k: int, n: int):
    """Small integers and halves: the f32 sums are exact, so any order gives the same result."""
    rng = np.random.default_rng(3)
    dt = dtypes.to_numpy_dtype(elem)
    steps = np.array([-3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3], np.float32)
    if elem == "f8E8M0FNU":
        steps = np.array([0.25, 0.5, 1, 2, 4], np.float32)
    return rng.choice(steps, (m, k)).astype(dt), rng.choice(steps, (k, n)).astype(dt)


@pytest.mark.parametrize("elem", SMALL_FLOATS)
def test_dot_general_rounds_the_f32_result(elem):
    a, b = _dot_operands(elem, 5, 7, 3)
    module = f"""func.func @main(%a: tensor<5x7x{elem}>, %b: tensor<7x3x{elem}>) -> (tensor<5x3x{elem}>, tensor<5x3xf32>) {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<5x7x{elem}>, tensor<7x3x{elem}>) -> tensor<5x3x{elem}>
  %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<5x7x{elem}>, tensor<7x3x{elem}>) -> tensor<5x3xf32>
  return %0, %1 : tensor<5x3x{elem}>, tensor<5x3xf32>
}}"""
    narrow, wide = xhlo.compile(module)(a, b)
    exact = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_array_equal(wide, exact)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_bits(narrow), _bits(exact.astype(a.dtype)))


@pytest.mark.parametrize("elem", SMALL_FLOATS)
def test_reduce_rounds_after_every_step(elem):
    """Summing ones saturates where x + 1 rounds back to x (16 for E4M3FN), as XLA.

    The init is 1.0: 0.0 is not an E8M0 value."""
    dt = dtypes.to_numpy_dtype(elem)
    rng = np.random.default_rng(4)
    values = np.concatenate([np.ones(40), rng.uniform(0, 3, 24)]).astype(np.float32).astype(dt)
    module = f"""func.func @main(%a: tensor<64x{elem}>) -> tensor<{elem}> {{
  %z = stablehlo.constant dense<1.0> : tensor<{elem}>
  %s = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<64x{elem}>, tensor<{elem}>) -> tensor<{elem}>
  return %s : tensor<{elem}>
}}"""
    got = xhlo.compile(module)(values)
    with np.errstate(all="ignore"):
        acc = np.array(1.0, np.float32).astype(dt)
        for v in values:
            acc = (acc.astype(np.float32) + v.astype(np.float32)).astype(dt)
    np.testing.assert_array_equal(_bits(np.asarray(got)), _bits(acc))
    if elem == "f8E4M3FN":
        assert float(got.astype(np.float32)) < values.astype(np.float32).sum()


def test_compare_select_and_iota():
    elem = "f8E5M2"
    codes = _all_codes(elem)
    t = f"tensor<256x{elem}>"
    module = f"""func.func @main(%a: {t}, %b: {t}) -> (tensor<256xi1>, {t}, {t}) {{
  %p = stablehlo.compare LT, %a, %b : ({t}, {t}) -> tensor<256xi1>
  %m = stablehlo.select %p, %a, %b : tensor<256xi1>, {t}
  %i = stablehlo.iota dim = 0 : {t}
  return %p, %m, %i : tensor<256xi1>, {t}, {t}
}}"""
    b = codes[::-1].copy()
    less, chosen, iota = xhlo.compile(module)(codes, b)
    np.testing.assert_array_equal(less, codes.astype(np.float32) < b.astype(np.float32))
    np.testing.assert_array_equal(_bits(chosen), _bits(np.where(less, codes, b)))
    np.testing.assert_array_equal(_bits(iota), _bits(np.arange(256, dtype=np.float32).astype(codes.dtype)))


def test_while_loop_carrying_small_floats():
    """x <- x * 1.5 + 1 ten times in E4M3FN, rounding after each op."""
    elem = "f8E4M3FN"
    module = f"""func.func @main(%x: tensor<4x{elem}>) -> tensor<4x{elem}> {{
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<4x{elem}>
  cond {{
    %n = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %k = stablehlo.constant dense<1.5> : tensor<4x{elem}>
    %c = stablehlo.constant dense<1.0> : tensor<4x{elem}>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %m = stablehlo.multiply %v, %k : tensor<4x{elem}>
    %v2 = stablehlo.add %m, %c : tensor<4x{elem}>
    stablehlo.return %i2, %v2 : tensor<i32>, tensor<4x{elem}>
  }}
  return %r#1 : tensor<4x{elem}>
}}"""
    x = np.array([0.0, 0.125, -3.0, 1.0], np.float32).astype(ml_dtypes.float8_e4m3fn)
    got = xhlo.compile(module)(x)
    want = x
    for _ in range(10):
        want = (want.astype(np.float32) * 1.5).astype(x.dtype)
        want = (want.astype(np.float32) + 1.0).astype(x.dtype)
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_data_movement_keeps_the_bits():
    elem = "f8E4M3FNUZ"
    codes = _all_codes(elem).reshape(16, 16)
    module = f"""func.func @main(%a: tensor<16x16x{elem}>, %i: tensor<i32>) -> (tensor<16x16x{elem}>, tensor<4x18x{elem}>, tensor<32x16x{elem}>, tensor<4x16x{elem}>, tensor<2x3x16x{elem}>) {{
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<16x16x{elem}>) -> tensor<16x16x{elem}>
  %s = stablehlo.slice %a [2:6, 0:16] : (tensor<16x16x{elem}>) -> tensor<4x16x{elem}>
  %f = stablehlo.constant dense<2.0> : tensor<{elem}>
  %p = stablehlo.pad %s, %f, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<4x16x{elem}>, tensor<{elem}>) -> tensor<4x18x{elem}>
  %c = stablehlo.concatenate %a, %t, dim = 0 : (tensor<16x16x{elem}>, tensor<16x16x{elem}>) -> tensor<32x16x{elem}>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %d = stablehlo.dynamic_slice %a, %i, %z, sizes = [4, 16] : (tensor<16x16x{elem}>, tensor<i32>, tensor<i32>) -> tensor<4x16x{elem}>
  %r = stablehlo.slice %a [0:1, 0:16] : (tensor<16x16x{elem}>) -> tensor<1x16x{elem}>
  %b = stablehlo.broadcast_in_dim %r, dims = [1, 2] : (tensor<1x16x{elem}>) -> tensor<2x3x16x{elem}>
  return %t, %p, %c, %d, %b : tensor<16x16x{elem}>, tensor<4x18x{elem}>, tensor<32x16x{elem}>, tensor<4x16x{elem}>, tensor<2x3x16x{elem}>
}}"""
    exe = xhlo.compile(module)
    t, p, c, d, b = exe(codes, np.int32(7))
    fill = np.array(2.0, np.float32).astype(codes.dtype)
    np.testing.assert_array_equal(_bits(t), _bits(codes.T))
    np.testing.assert_array_equal(_bits(p), _bits(np.pad(codes[2:6], ((0, 0), (1, 1)), constant_values=fill)))
    np.testing.assert_array_equal(_bits(c), _bits(np.concatenate([codes, codes.T])))
    np.testing.assert_array_equal(_bits(d), _bits(codes[7:11]))
    np.testing.assert_array_equal(_bits(b), _bits(np.broadcast_to(codes[0], (2, 3, 16))))
    # Nothing was widened: the prepared module keeps the moves on the small type.
    assert "f32" not in exe.ir("xhlo-stablehlo-prepare")


_ALLOWED_ON_SMALL_FLOATS = {
    "stablehlo.constant",
    "stablehlo.bitcast_convert",
    "stablehlo.reshape",
    "stablehlo.transpose",
    "stablehlo.slice",
    "stablehlo.pad",
    "stablehlo.select",
    "stablehlo.broadcast_in_dim",
    "stablehlo.concatenate",
    "stablehlo.while",
    "stablehlo.return",
    "func.func",
    "return",
}


def test_only_moves_and_bitcasts_remain_on_small_floats():
    elem = "f8E4M3FN"
    module = f"""func.func @main(%a: tensor<8x{elem}>, %b: tensor<8x{elem}>) -> (tensor<{elem}>, tensor<8xf32>, tensor<8xbf16>) {{
  %z = stablehlo.constant dense<0.0> : tensor<{elem}>
  %0 = stablehlo.multiply %a, %b : tensor<8x{elem}>
  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.maximum across dimensions = [0] : (tensor<8x{elem}>, tensor<{elem}>) -> tensor<{elem}>
  %2 = stablehlo.convert %0 : (tensor<8x{elem}>) -> tensor<8xf32>
  %3 = stablehlo.convert %a : (tensor<8x{elem}>) -> tensor<8xbf16>
  return %1, %2, %3 : tensor<{elem}>, tensor<8xf32>, tensor<8xbf16>
}}"""
    exe = xhlo.compile(module)
    prepared = exe.ir("xhlo-stablehlo-prepare")
    for line in prepared.splitlines():
        if elem in line:
            match = re.search(r"= ([\w.]+)|^\s*([\w.]+)", line)
            name = match.group(1) or match.group(2)
            assert name in _ALLOWED_ON_SMALL_FLOATS, line
    a = np.linspace(-4, 4, 8).astype(ml_dtypes.float8_e4m3fn)
    b = np.linspace(3, -1, 8).astype(ml_dtypes.float8_e4m3fn)
    biggest, product, widened = exe(a, b)
    want = (a.astype(np.float32) * b.astype(np.float32)).astype(a.dtype)
    np.testing.assert_array_equal(product, want.astype(np.float32))
    assert biggest.astype(np.float32) == max(0.0, want.astype(np.float32).max())
    np.testing.assert_array_equal(widened, a.astype(ml_dtypes.bfloat16))


@pytest.mark.parametrize("elem,dtype", [("f6E2M3FN", ml_dtypes.float6_e2m3fn), ("f6E3M2FN", ml_dtypes.float6_e3m2fn)])
def test_six_bit_floats_are_data(elem, dtype):
    """f6 tensors pass through copies and constants bit for bit; arithmetic on them is
    refused with the op named (StableHLO has no 6-bit integer to decode them through)."""
    codes = np.arange(64, dtype=np.uint8).view(dtype)
    t = f"tensor<64x{elem}>"
    moved = xhlo.compile(f"""func.func @main(%a: {t}) -> ({t}, tensor<2x{elem}>) {{
  %0 = stablehlo.reverse %a, dims = [0] : {t}
  %c = stablehlo.constant dense<[1.0, -0.5]> : tensor<2x{elem}>
  return %0, %c : {t}, tensor<2x{elem}>
}}""")(codes)
    np.testing.assert_array_equal(moved[0].view(np.uint8) & 0x3F, codes[::-1].view(np.uint8))
    np.testing.assert_array_equal(moved[1].astype(np.float32), [1.0, -0.5])
    with pytest.raises(xhlo.CompilerError, match=f"'stablehlo.add' computes on {elem}"):
        xhlo.compile(f"""func.func @main(%a: {t}) -> {t} {{
  %0 = stablehlo.add %a, %a : {t}
  return %0 : {t}
}}""")

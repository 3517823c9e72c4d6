"""Element-wise builder ops compiled by xhlo and compared with numpy: unary,
binary (with XLA broadcasting), comparisons, conversions, Python operators."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xhlo import builder as xb

from .builder_util import assert_close, build, ops, run

RNG = np.random.default_rng(20261121)
F = RNG.uniform(-3, 3, (3, 4)).astype(np.float32)
POS = RNG.uniform(0.1, 4, (3, 4)).astype(np.float32)
UNIT = RNG.uniform(-0.9, 0.9, (3, 4)).astype(np.float32)
I = RNG.integers(-50, 50, (3, 4)).astype(np.int32)
C = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64)
erf = np.vectorize(math.erf, otypes=[np.float64])

UNARY = [
    ("Abs", ops.Abs, np.abs, F),
    ("Abs complex", ops.Abs, np.abs, C),
    ("Neg", ops.Neg, np.negative, I),
    ("Sign", ops.Sign, np.sign, np.array([-2.0, -0.0, 0.0, 3.0], np.float32)),
    ("Exp", ops.Exp, np.exp, F),
    ("Expm1", ops.Expm1, np.expm1, F),
    ("Log", ops.Log, np.log, POS),
    ("Log1p", ops.Log1p, np.log1p, POS),
    ("Logistic", ops.Logistic, lambda x: 1 / (1 + np.exp(-x)), F),
    ("Sqrt", ops.Sqrt, np.sqrt, POS),
    ("Rsqrt", ops.Rsqrt, lambda x: 1 / np.sqrt(x), POS),
    ("Cbrt", ops.Cbrt, np.cbrt, F),
    ("Sin", ops.Sin, np.sin, F),
    ("Cos", ops.Cos, np.cos, F),
    ("Tan", ops.Tan, np.tan, UNIT),
    ("Tanh", ops.Tanh, np.tanh, F),
    ("Erf", ops.Erf, lambda x: erf(x).astype(np.float32), F),
    ("Cosh", ops.Cosh, np.cosh, F),
    ("Floor", ops.Floor, np.floor, F),
    ("Ceil", ops.Ceil, np.ceil, F),
    (
        "Round",
        ops.Round,
        lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
        np.array([-2.5, -1.5, 0.5, 1.5, 2.4], np.float32),
    ),
    (
        "RoundNearestAfz",
        ops.RoundNearestAfz,
        lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
        np.array([-2.5, 0.5, 2.5], np.float32),
    ),
    (
        "RoundNearestEven",
        ops.RoundNearestEven,
        np.round,
        np.array([-2.5, -1.5, 0.5, 1.5, 2.4], np.float32),
    ),
    ("IsFinite", ops.IsFinite, np.isfinite, np.array([1.0, np.inf, -np.inf, np.nan], np.float32)),
    (
        "Clz",
        ops.Clz,
        lambda x: np.array(
            [32 - int(v).bit_length() if v >= 0 else 0 for v in x.ravel()], np.int32
        ).reshape(x.shape),
        np.array([0, 1, 255, -3], np.int32),
    ),
    (
        "PopulationCount",
        ops.PopulationCount,
        lambda x: np.array([(int(v) & 0xFFFFFFFF).bit_count() for v in x], np.int32),
        np.array([0, 7, -1, 1024], np.int32),
    ),
    ("Not int", ops.Not, np.invert, I),
    ("Not pred", ops.Not, np.logical_not, np.array([True, False])),
    ("Real", ops.Real, np.real, C),
    ("Imag", ops.Imag, np.imag, C),
    ("Imag of real", ops.Imag, np.zeros_like, F),
    ("Conj", ops.Conj, np.conj, C),
]


@pytest.mark.parametrize("name,op,reference,x", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, op, reference, x):
    (got,) = run(op, x)
    assert_close(got, np.asarray(reference(x)).astype(got.dtype), rtol=2e-6, atol=2e-6)


def test_result_accuracy_is_emitted_and_runs():
    comp = build(lambda x: ops.Exp(x, result_accuracy="HIGHEST"), F)
    assert "result_accuracy_mode<HIGHEST>" in comp.as_stablehlo_text()
    (got,) = run(lambda x: ops.Cbrt(x, {"atol": 1e-6, "ulps": 1}), F)
    assert_close(got, np.cbrt(F), rtol=2e-6)


A = RNG.uniform(-4, 4, (2, 3)).astype(np.float32)
B = RNG.uniform(0.5, 4, (2, 3)).astype(np.float32)
IA = RNG.integers(-20, 20, (2, 3)).astype(np.int32)
IB = RNG.integers(1, 9, (2, 3)).astype(np.int32)

BINARY = [
    ("Add", ops.Add, np.add, A, B),
    ("Sub", ops.Sub, np.subtract, A, B),
    ("Mul", ops.Mul, np.multiply, A, B),
    ("Div", ops.Div, np.divide, A, B),
    ("Div int", ops.Div, lambda a, b: (np.trunc(a / b)).astype(np.int32), IA, IB),
    ("Rem", ops.Rem, np.fmod, A, B),
    ("Rem int", ops.Rem, np.fmod, IA, IB),
    ("Max", ops.Max, np.maximum, A, B),
    ("Min", ops.Min, np.minimum, A, B),
    ("Pow", ops.Pow, np.power, B, A),
    ("Atan2", ops.Atan2, np.arctan2, A, B),
    ("And", ops.And, np.bitwise_and, IA, IB),
    ("Or", ops.Or, np.bitwise_or, IA, IB),
    ("Xor", ops.Xor, np.bitwise_xor, IA, IB),
    ("ShiftLeft", ops.ShiftLeft, np.left_shift, IA, IB),
    ("ShiftRightArithmetic", ops.ShiftRightArithmetic, np.right_shift, IA, IB),
    (
        "ShiftRightLogical",
        ops.ShiftRightLogical,
        lambda a, b: (a.view(np.uint32) >> b.astype(np.uint32)).view(np.int32),
        IA,
        IB,
    ),
    ("Complex", ops.Complex, lambda a, b: (a + 1j * b).astype(np.complex64), A, B),
]


@pytest.mark.parametrize("name,op,reference,a,b", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, op, reference, a, b):
    (got,) = run(op, a, b)
    assert_close(got, np.asarray(reference(a, b)).astype(got.dtype), rtol=3e-6, atol=1e-6)


NAN = np.array([np.nan, -np.nan, -np.inf, -1.0, -0.0, 0.0, 1.0, np.inf], np.float32)


def _total_key(x):
    """The total order -NaN < -Inf < -x < -0 < +0 < x < Inf < NaN as integers."""
    bits = x.view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)


COMPARE = [
    ("Eq", ops.Eq, np.equal),
    ("Ne", ops.Ne, np.not_equal),
    ("Ge", ops.Ge, np.greater_equal),
    ("Gt", ops.Gt, np.greater),
    ("Le", ops.Le, np.less_equal),
    ("Lt", ops.Lt, np.less),
]


@pytest.mark.parametrize("name,op,reference", COMPARE, ids=[c[0] for c in COMPARE])
def test_compare_float_with_nans(name, op, reference):
    a, b = np.repeat(NAN, 8), np.tile(NAN, 8)
    (got,) = run(op, a, b)
    np.testing.assert_array_equal(got, reference(a, b))


@pytest.mark.parametrize("name,op,reference", COMPARE, ids=[c[0] for c in COMPARE])
def test_compare_total_order(name, op, reference):
    total = getattr(ops, name + "TotalOrder")
    a, b = np.repeat(NAN, 8), np.tile(NAN, 8)
    (got,) = run(total, a, b)
    np.testing.assert_array_equal(got, reference(_total_key(a), _total_key(b)))


def test_generic_compare():
    a, b = np.repeat(NAN, 8), np.tile(NAN, 8)
    got = run(
        lambda x, y: [
            ops.Compare(x, y, (), "LT"),
            ops.Compare(x, y, direction="LE", compare_type="TOTALORDER"),
        ],
        a,
        b,
    )
    np.testing.assert_array_equal(got[0], a < b)
    np.testing.assert_array_equal(got[1], _total_key(a) <= _total_key(b))


def test_compare_unsigned_and_broadcast_dimensions():
    a = np.array([[1, 4000000000], [7, 0]], np.uint32)
    v = np.array([5, 3000000000], np.uint32)
    (got,) = run(lambda x, y: ops.Lt(x, y, broadcast_dimensions=(1,)), a, v)
    np.testing.assert_array_equal(got, a < v[None, :])


def test_compare_type_must_fit_the_elements():
    """StableHLO's comparison types per element type; a mismatch had been ignored."""
    u32 = xb.Shape.array_shape(np.uint32, (2,))
    for shape, kind, allowed in [(u32, "SIGNED", "UNSIGNED"), (xb.Shape.array_shape(np.int32, (2,)), "FLOAT", "SIGNED"),
                                 (xb.Shape.array_shape(np.float32, (2,)), "UNSIGNED", "FLOAT or TOTALORDER")]:
        b = xb.XlaBuilder("compare")
        x = ops.Parameter(b, 0, shape)
        with pytest.raises(ValueError, match=f"Lt: compare type {kind} does not fit .* \\(use {allowed}\\)"):
            ops.Compare(x, x, direction="LT", compare_type=kind)


def test_python_numbers_must_fit_the_operand():
    """A Python number takes the other operand's type only if that type holds it exactly;
    a constant of a large Python integer is s64 (both had wrapped silently)."""
    got = run(lambda x: [x + 3, x * 0.5, ops.Constant(x.builder, [1, 2**35])], np.float32([1, 2]))
    assert_close(got[0], np.float32([4, 5]))
    assert_close(got[1], np.float32([0.5, 1]))
    assert_close(got[2], np.array([1, 2**35], np.int64))
    b = xb.XlaBuilder("numbers")
    ints, floats, preds = (ops.Parameter(b, i, xb.Shape.array_shape(t, (2,)))
                           for i, t in enumerate((np.uint8, np.float32, np.bool_)))
    with pytest.raises(ValueError, match="Add: cannot use 300 with the operand .*u8 cannot hold it"):
        ints + 300
    with pytest.raises(TypeError, match="Add: cannot use the complex 1j with the real operand"):
        floats + 1j
    with pytest.raises(ValueError, match="Or: cannot use 2 with the operand .*pred cannot hold it"):
        ops.Or(preds, 2)
    with pytest.raises(TypeError, match="Mul: cannot use the non-integer 2.5 with the integer operand"):
        ints * 2.5


def test_broadcast_dimensions_variant():
    m = RNG.standard_normal((2, 3)).astype(np.float32)
    col = np.array([10.0, 20.0], np.float32)
    row = np.array([1.0, 2.0, 3.0], np.float32)
    got = run(
        lambda x, c, r: [ops.Add(x, c, (0,)), ops.Sub(r, x, (1,)), ops.Mul(x, np.float32(2))],
        m,
        col,
        row,
    )
    assert_close(got[0], m + col[:, None])
    assert_close(got[1], row[None, :] - m)
    assert_close(got[2], m * 2)


def test_degenerate_dimension_broadcasting():
    a = RNG.standard_normal((2, 1)).astype(np.float32)
    b = RNG.standard_normal((1, 3)).astype(np.float32)
    (got,) = run(ops.Add, a, b)
    assert_close(got, a + b)


def test_python_operators():
    a, b = A, B

    def fn(x, y):
        return [
            x + y,
            x - 1.5,
            2 * x,
            x / y,
            -x,
            x**2,
            abs(x),
            x < y,
            x >= 0.5,
            x == y,
            x != y,
            3.0 - x,
            1 / y,
            x.T,
        ]

    got = run(fn, a, b)
    expected = [
        a + b,
        a - 1.5,
        2 * a,
        a / b,
        -a,
        a**2,
        abs(a),
        a < b,
        a >= 0.5,
        a == b,
        a != b,
        3 - a,
        1 / b,
        a.T,
    ]
    for g, e in zip(got, expected):
        assert_close(g, np.asarray(e, dtype=g.dtype), rtol=1e-6)
    gi = run(lambda x, y: [x & y, x | y, x ^ y, ~x, x << 2, x >> 1, x % y], IA, IB)
    for g, e in zip(gi, [IA & IB, IA | IB, IA ^ IB, ~IA, IA << 2, IA >> 1, np.fmod(IA, IB)]):
        np.testing.assert_array_equal(g, e)


def test_convert_element_type():
    x = np.array([-2.7, -0.5, 0.5, 3.9, 1e3], np.float32)
    got = run(
        lambda v: [
            ops.ConvertElementType(v, np.int32),
            ops.ConvertElementType(v, xb.PrimitiveType.F64),
            ops.ConvertElementType(v, "f16"),
            ops.ConvertElementType(v, np.bool_),
        ],
        x,
    )
    np.testing.assert_array_equal(got[0], x.astype(np.int32))
    np.testing.assert_array_equal(got[1], x.astype(np.float64))
    np.testing.assert_array_equal(got[2], x.astype(np.float16))
    np.testing.assert_array_equal(got[3], x != 0)
    (rounded,) = run(
        lambda v: ops.ConvertElementType(v, np.float32), np.array([16777217, -16777219], np.int32)
    )
    np.testing.assert_array_equal(rounded, np.array([16777216, -16777220], np.float32))


def test_bitcast_convert_type_same_and_different_widths():
    x = np.array([1.0, -2.5, 3.25], np.float32)
    got = run(
        lambda v: [ops.BitcastConvertType(v, np.int32), ops.BitcastConvertType(v, np.uint16)], x
    )
    np.testing.assert_array_equal(got[0], x.view(np.int32))
    np.testing.assert_array_equal(got[1], x.view(np.uint16).reshape(3, 2))  # little-endian halves
    halves = x.view(np.uint16).reshape(3, 2)
    (back,) = run(lambda v: ops.BitcastConvertType(v, np.float32), halves)
    np.testing.assert_array_equal(back, x)


def test_reduce_precision():
    """SEMANTICS 5.14: f32 reduced to (5, 10) behaves like f16 without subnormals."""
    x = np.array(
        [1e-5, -1e-5, 65519.99, 65520.0, 1.00048828125, 1.0 + 3 * 2.0**-11, np.nan], np.float32
    )
    (got,) = run(lambda v: ops.ReducePrecision(v, 5, 10), x)
    np.testing.assert_array_equal(
        got[:6], np.array([0.0, -0.0, 65504.0, np.inf, 1.0, 1.0 + 2.0**-9], np.float32)
    )
    assert np.signbit(got[1]) and np.isnan(got[6])


@pytest.mark.parametrize(
    "fn,error,match",
    [
        (lambda x, y: ops.Add(x, y), ValueError, r"Add: shapes f32\[2,3\] and f32\[3,2\]"),
        (
            lambda x, y: ops.Add(x, ops.ConvertElementType(y.T, np.int32)),
            TypeError,
            "Add: operands must have the same element type",
        ),
        (
            lambda x, y: ops.Add(x, ops.Reshape(y, (6,))),
            ValueError,
            "different ranks; pass broadcast_dimensions",
        ),
        (lambda x, y: ops.Add(x, ops.Reshape(y, (6,)), (2,)), ValueError, "out of range"),
        (lambda x, y: ops.Clz(x), TypeError, "Clz: operand must have an integer element type"),
        (
            lambda x, y: ops.Exp(ops.ConvertElementType(x, np.int32)),
            TypeError,
            r"Exp: .*s32\[2,3\]",
        ),
        (
            lambda x, y: ops.Lt(ops.Complex(x, x), ops.Complex(x, x)),
            TypeError,
            "Lt: complex operands",
        ),
        (lambda x, y: ops.Exp(x, result_accuracy="FAST"), ValueError, "result_accuracy mode"),
        (
            lambda x, y: ops.BitcastConvertType(x, np.float64),
            ValueError,
            "needs a last dimension of size 2",
        ),
    ],
)
def test_build_time_errors(fn, error, match):
    with pytest.raises(error, match=match):
        build(fn, np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32))


def test_xlaop_has_no_truth_value():
    with pytest.raises(TypeError, match="no truth value"):
        build(lambda x: ops.Abs(x) if x > 0 else x, F)

"""Contractions, convolutions, FFT, factorizations, batch norm, random numbers,
RaggedDot and ScaledDot from the builder, compiled by xhlo and compared with
numpy (and the reference interpreter where it helps)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from xhlo import builder as xb

from .builder_util import assert_close, build, ops, run, run_reference

RNG = np.random.default_rng(11)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def test_dot_ranks():
    m, k, n = rand(2, 3), rand(3), rand(3, 4)
    got = run(
        lambda a, v, b: [ops.Dot(v, v), ops.Dot(a, v), ops.Dot(a, b), ops.Dot(v, b), a @ b], m, k, n
    )
    for g, e in zip(got, [k @ k, m @ k, m @ n, k @ n, m @ n]):
        assert_close(g, e.astype(np.float32), rtol=1e-5, atol=1e-5)


def test_dot_general_seed_examples():
    lhs = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    rhs = np.array([[1, 1, 1], [2, 2, 2]], np.float32)
    (got,) = run(lambda a, b: ops.DotGeneral(a, b, xb.DotDimensionNumbers([1], [1])), lhs, rhs)
    assert_close(got, np.array([[6, 12], [15, 30]], np.float32))
    bl = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.float32)
    br = np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], np.float32)
    dn = {
        "lhs_contracting_dimensions": [2],
        "rhs_contracting_dimensions": [1],
        "lhs_batch_dimensions": [0],
        "rhs_batch_dimensions": [0],
    }
    (batched,) = run(lambda a, b: ops.DotGeneral(a, b, dn), bl, br)
    assert_close(batched, bl)
    x, y = rand(2, 5, 3, 4), rand(2, 4, 5, 6)  # batch dims not leading, jax-style numbers
    (general,) = run(
        lambda a, b: ops.DotGeneral(a, b, (((3,), (1,)), ((0, 1), (0, 2))), "HIGHEST"), x, y
    )
    assert_close(general, np.einsum("abmk,akbn->abmn", x, y), rtol=1e-5, atol=1e-5)


def test_dot_preferred_element_type_int8():
    a = RNG.integers(-128, 127, (3, 4)).astype(np.int8)
    b = RNG.integers(-128, 127, (4, 2)).astype(np.int8)
    (got,) = run(lambda x, y: ops.Dot(x, y, preferred_element_type=np.int32), a, b)
    assert_close(got, a.astype(np.int32) @ b.astype(np.int32))


def conv_reference(x, w, strides, pads, lhs_dil, rhs_dil, groups=1):
    """NC* x OI* -> NC* convolution, straight from the seed's definition."""
    n_sp = x.ndim - 2

    def dilate(a, d):
        if all(v == 1 for v in d):
            return a
        out = np.zeros(
            a.shape[:2] + tuple((s - 1) * v + 1 for s, v in zip(a.shape[2:], d)), a.dtype
        )
        out[(slice(None), slice(None)) + tuple(slice(None, None, v) for v in d)] = a
        return out

    x, w = dilate(x, lhs_dil), dilate(w, rhs_dil)
    for i, (lo, hi) in enumerate(pads):
        axis = 2 + i
        x = np.concatenate(
            [
                np.zeros(x.shape[:axis] + (max(lo, 0),) + x.shape[axis + 1 :], x.dtype),
                x,
                np.zeros(x.shape[:axis] + (max(hi, 0),) + x.shape[axis + 1 :], x.dtype),
            ],
            axis,
        )
        x = np.take(x, range(max(-lo, 0), x.shape[axis] - max(-hi, 0)), axis=axis)
    k = w.shape[2:]
    out_sp = [(x.shape[2 + i] - k[i]) // strides[i] + 1 for i in range(n_sp)]
    cin = w.shape[1]
    out = np.zeros((x.shape[0], w.shape[0], *out_sp), np.float64)
    per_group = w.shape[0] // groups
    for pos in np.ndindex(*out_sp):
        window = x[
            (slice(None), slice(None))
            + tuple(slice(p * s, p * s + kk) for p, s, kk in zip(pos, strides, k))
        ]
        for g in range(groups):
            xs = window[:, g * cin : (g + 1) * cin]
            ws = w[g * per_group : (g + 1) * per_group]
            out[(slice(None), slice(g * per_group, (g + 1) * per_group)) + pos] = np.tensordot(
                xs, ws, axes=(list(range(1, n_sp + 2)), list(range(1, n_sp + 2)))
            )
    return out.astype(np.float32)


def test_conv_same_and_valid():
    x, w = rand(2, 3, 7, 6), rand(4, 3, 3, 2)
    got = run(
        lambda a, b: [ops.Conv(a, b, (1, 1), xb.Padding.SAME), ops.Conv(a, b, (2, 2), "VALID")],
        x,
        w,
    )
    assert_close(
        got[0], conv_reference(x, w, (1, 1), [(1, 1), (0, 1)], (1, 1), (1, 1)), rtol=1e-4, atol=1e-4
    )
    assert_close(
        got[1], conv_reference(x, w, (2, 2), [(0, 0), (0, 0)], (1, 1), (1, 1)), rtol=1e-4, atol=1e-4
    )


def test_conv_general_padding_dilation_groups_and_layouts():
    x, w = rand(1, 4, 6, 5), rand(6, 2, 2, 3)
    got = run(
        lambda a, b: [
            ops.ConvWithGeneralPadding(a, b, (1, 2), [(2, -1), (1, 1)], feature_group_count=2),
            ops.ConvGeneralDilated(a, b, (1, 1), [(0, 0), (1, 1)], (2, 1), (1, 2), None, 2),
        ],
        x,
        w,
    )
    assert_close(
        got[0],
        conv_reference(x, w, (1, 2), [(2, -1), (1, 1)], (1, 1), (1, 1), 2),
        rtol=1e-4,
        atol=1e-4,
    )
    assert_close(
        got[1],
        conv_reference(x, w, (1, 1), [(0, 0), (1, 1)], (2, 1), (1, 2), 2),
        rtol=1e-4,
        atol=1e-4,
    )
    nhwc, hwio = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)
    dn = xb.make_convolution_dimension_numbers(("NHWC", "HWIO", "NHWC"), 2)
    got_nhwc = run(
        lambda a, b: [
            ops.ConvGeneral(a, b, (1, 1), [(0, 0), (0, 0)], dn, 2),
            ops.ConvWithGeneralDimensions(a, b, (1, 1), "VALID", dn, 2),
        ],
        nhwc,
        hwio,
    )
    expected = conv_reference(x, w, (1, 1), [(0, 0), (0, 0)], (1, 1), (1, 1), 2).transpose(
        0, 2, 3, 1
    )
    for g in got_nhwc:
        assert_close(g, expected, rtol=1e-4, atol=1e-4)


def test_conv_batch_group_count_matches_reference_interpreter():
    x, w = rand(4, 2, 5), rand(6, 2, 3)

    def fn(a, b):
        return ops.ConvGeneralDilated(a, b, (1,), [(1, 0)], None, None, None, 1, 2)

    (ref,) = run_reference(fn, x, w)
    (got,) = run(fn, x, w)
    assert got.shape == (2, 6, 4)
    assert_close(got, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kind", ["FFT", "IFFT", "RFFT", "IRFFT"])
def test_fft(kind):
    x = rand(3, 8)
    c = (rand(3, 8) + 1j * rand(3, 8)).astype(np.complex64)
    if kind == "FFT":
        (got,) = run(lambda v: ops.Fft(v, xb.FftType.FFT, (3, 8)), c)
        expected = np.fft.fft2(c)
    elif kind == "IFFT":
        (got,) = run(lambda v: ops.Fft(v, "IFFT", (8,)), c)
        expected = np.fft.ifft(c)
    elif kind == "RFFT":
        (got,) = run(lambda v: ops.Fft(v, "RFFT", (8,)), x)
        expected = np.fft.rfft(x)
    else:
        half = np.fft.rfft(x)
        (got,) = run(lambda v: ops.Fft(v, "IRFFT", (8,)), half.astype(np.complex64))
        expected = x
    assert_close(got, expected.astype(got.dtype), rtol=1e-4, atol=1e-4)


def spd(n, batch=()):
    a = rand(*batch, n, n).astype(np.float64)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


def test_cholesky_lower_and_upper():
    a = spd(4, (2,))
    lower, upper = run(lambda m: [ops.Cholesky(m), ops.Cholesky(m, lower=False)], a)
    expected = np.linalg.cholesky(a.astype(np.float64))
    assert_close(np.tril(lower), expected.astype(np.float32), rtol=1e-4, atol=1e-4)
    assert_close(
        np.triu(upper), np.swapaxes(expected, -1, -2).astype(np.float32), rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize(
    "left_side,lower,transpose_a",
    [(True, True, "NO_TRANSPOSE"), (False, False, "TRANSPOSE"), (True, False, "ADJOINT")],
)
def test_triangular_solve(left_side, lower, transpose_a):
    a = spd(3)
    b = rand(3, 2) if left_side else rand(2, 3)
    (x,) = run(lambda m, r: ops.TriangularSolve(m, r, left_side, lower, False, transpose_a), a, b)
    tri = np.tril(a) if lower else np.triu(a)
    op_a = tri if transpose_a == "NO_TRANSPOSE" else tri.T
    assert_close(op_a @ x if left_side else x @ op_a, b, rtol=1e-4, atol=1e-4)


def test_batch_norm_training_inference_grad():
    x, scale, offset = rand(2, 3, 4), rand(3), rand(3)
    eps, axes = 1e-3, (0, 2)
    mean, var = x.mean(axes), x.var(axes)
    bshape = (1, 3, 1)
    norm = (x - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + eps)
    out, m, v = run(lambda a, s, o: ops.BatchNormTraining(a, s, o, eps, 1), x, scale, offset)
    assert_close(out, norm * scale.reshape(bshape) + offset.reshape(bshape), rtol=1e-4, atol=1e-4)
    assert_close(m, mean, rtol=1e-5, atol=1e-5)
    assert_close(v, var, rtol=1e-4, atol=1e-5)
    (inf,) = run(
        lambda a, s, o, mu, sg: ops.BatchNormInference(a, s, o, mu, sg, eps, 1),
        x,
        scale,
        offset,
        mean,
        var,
    )
    assert_close(inf, norm * scale.reshape(bshape) + offset.reshape(bshape), rtol=1e-4, atol=1e-4)
    dy = rand(2, 3, 4)
    gx, gs, go = run(
        lambda a, s, mu, sg, g: ops.BatchNormGrad(a, s, mu, sg, g, eps, 1), x, scale, mean, var, dy
    )
    count = x.size / 3
    inv = 1 / np.sqrt(var + eps)
    c = (dy * (x - mean.reshape(bshape))).sum(axes) / (var + eps) / count
    d = dy.sum(axes) / count
    expected_gx = (scale * inv).reshape(bshape) * (
        dy - d.reshape(bshape) - c.reshape(bshape) * (x - mean.reshape(bshape))
    )
    assert_close(gx, expected_gx.astype(np.float32), rtol=1e-3, atol=1e-4)
    assert_close(gs, (dy * norm).sum(axes).astype(np.float32), rtol=1e-4, atol=1e-4)
    assert_close(go, dy.sum(axes), rtol=1e-5, atol=1e-5)


def test_rng_bit_generator_spec_example():
    state = np.array([1, 2], np.uint64)
    new_state, bits = run(
        lambda s: ops.RngBitGenerator(
            xb.RandomAlgorithm.RNG_THREE_FRY, s, xb.Shape.parse("u64[2,2]")
        ),
        state,
    )
    np.testing.assert_array_equal(new_state, np.array([1, 6], np.uint64))
    np.testing.assert_array_equal(
        bits,
        np.array(
            [
                [9236835810183407956, 16087790271692313299],
                [18212823393184779219, 2658481902456610144],
            ],
            np.uint64,
        ),
    )
    (philox,) = run(lambda s: ops.RngBitGenerator("PHILOX", s, xb.Shape.parse("u32[64]"))[1], state)
    assert philox.dtype == np.uint32 and len(set(philox.tolist())) > 60


def test_rng_uniform_booleans_and_default_state():
    """Booleans in [a, b) (an integer draw, then != 0); DEFAULT is PHILOX on the CPU and
    needs its state, which the builder checks."""
    (flags,) = run(lambda: ops.RngUniform(np.bool_(False), np.bool_(True), xb.Shape.parse("pred[100]")))
    assert flags.dtype == np.bool_ and not flags.any()  # [0, 1) holds 0 only
    (flags,) = run(lambda: ops.RngUniform(np.bool_(True), np.bool_(True), xb.Shape.parse("pred[100]")))
    assert flags.all()  # b <= a gives a
    b = xb.XlaBuilder("state")
    state = ops.Parameter(b, 0, xb.Shape.parse("u64[1]"))
    with pytest.raises(ValueError, match=r"RngBitGenerator: DEFAULT needs a state of u64\[2, 3\] elements"):
        ops.RngBitGenerator("DEFAULT", state, xb.Shape.parse("u32[2]"))


def test_rng_uniform_range():
    (u,) = run(
        lambda lo, hi: ops.RngUniform(lo, hi, xb.Shape.parse("f32[4000]")),
        np.float32(2),
        np.float32(5),
    )
    assert u.min() >= 2 and u.max() < 5 and abs(u.mean() - 3.5) < 0.1


def test_rng_uniform_integer_emits_rng():
    text = build(
        lambda: ops.RngUniform(np.int32(-3), np.int32(4), xb.Shape.parse("s32[2000]"))
    ).as_stablehlo_text()
    assert "stablehlo.rng" in text and "UNIFORM" in text and "tensor<2000xi32>" in text


def test_rng_uniform_integer_range():
    (k,) = run(lambda: ops.RngUniform(np.int32(-3), np.int32(4), xb.Shape.parse("s32[2000]")))
    assert set(np.unique(k).tolist()) <= set(range(-3, 4)) and len(np.unique(k)) == 7


def test_rng_normal_moments():
    (n,) = run(
        lambda mu, sigma: ops.RngNormal(mu, sigma, xb.Shape.parse("f32[20000]")),
        np.float32(1),
        np.float32(2),
    )
    assert abs(n.mean() - 1) < 0.1 and abs(n.std() - 2) < 0.1


def ragged_reference_mode1(lhs, rhs, sizes):
    out, start = np.zeros((lhs.shape[0], rhs.shape[2]), np.float32), 0
    for g, size in enumerate(sizes):
        out[start : start + size] = lhs[start : start + size] @ rhs[g]
        start += size
    return out


def test_ragged_dot_modes():
    sizes = np.array([2, 1, 3], np.int32)
    lhs, rhs = rand(6, 3), rand(3, 3, 4)
    mode1 = xb.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), [0], [0])
    (got1,) = run(lambda a, b, g: ops.RaggedDot(a, b, g, mode1), lhs, rhs, sizes)
    assert_close(got1, ragged_reference_mode1(lhs, rhs, sizes), rtol=1e-5, atol=1e-5)
    lhs2, rhs2, sizes2 = rand(4, 6), rand(6, 3), np.array([2, 4], np.int32)
    mode2 = xb.RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), [1])
    (got2,) = run(lambda a, b, g: ops.RaggedDot(a, b, g, mode2), lhs2, rhs2, sizes2)
    expected2 = np.stack([lhs2[:, :2] @ rhs2[:2], lhs2[:, 2:] @ rhs2[2:]])
    assert_close(got2, expected2, rtol=1e-5, atol=1e-5)
    lhs3, rhs3 = rand(3, 2, 4), rand(3, 4, 5)
    mode3 = xb.RaggedDotDimensionNumbers((((2,), (1,)), ((0,), (0,))), [0])
    (got3,) = run(
        lambda a, b, g: ops.RaggedDot(a, b, g, mode3), lhs3, rhs3, np.array([1, 2], np.int32)
    )
    assert_close(got3, np.einsum("bmk,bkn->bmn", lhs3, rhs3), rtol=1e-5, atol=1e-5)


def scaled_dot_reference(lhs, lhs_scale, rhs, rhs_scale):
    """Block scales broadcast over the contracting dim, products in bf16, f32 dot."""
    bf = lambda a: a.astype(ml_dtypes.bfloat16).astype(np.float32)
    ls = np.repeat(lhs_scale, lhs.shape[1] // lhs_scale.shape[1], axis=1)
    rs = np.repeat(rhs_scale, rhs.shape[0] // rhs_scale.shape[0], axis=0)
    return bf(bf(lhs) * bf(ls)) @ bf(bf(rhs) * bf(rs))


def test_scaled_dot_composite():
    lhs = RNG.integers(-8, 8, (2, 8)).astype(np.float32) / 4
    rhs = RNG.integers(-8, 8, (8, 3)).astype(np.float32) / 4
    lhs_scale = 2.0 ** RNG.integers(-2, 3, (2, 2)).astype(np.float32)
    rhs_scale = 2.0 ** RNG.integers(-2, 3, (2, 3)).astype(np.float32)

    def fn(a, sa, b, sb):
        return ops.ScaledDot(a, sa, b, sb, (((1,), (0,)), ((), ())), None, np.float32)

    text = build(fn, lhs, lhs_scale, rhs, rhs_scale).as_stablehlo_text()
    assert 'stablehlo.composite "xla.scaled_dot"' in text
    (got,) = run(fn, lhs, lhs_scale, rhs, rhs_scale)
    assert_close(got, scaled_dot_reference(lhs, lhs_scale, rhs, rhs_scale), rtol=1e-6)


def test_scaled_dot_f8_operands():
    lhs = (RNG.integers(-8, 8, (2, 32)) / 4).astype(ml_dtypes.float8_e4m3fn)
    rhs = (RNG.integers(-8, 8, (32, 3)) / 4).astype(ml_dtypes.float8_e4m3fn)
    lhs_scale = (2.0 ** RNG.integers(-2, 3, (2, 1))).astype(ml_dtypes.float8_e8m0fnu)
    rhs_scale = (2.0 ** RNG.integers(-2, 3, (1, 3))).astype(ml_dtypes.float8_e8m0fnu)
    (got,) = run(
        lambda a, sa, b, sb: ops.ScaledDot(
            a, sa, b, sb, (((1,), (0,)), ((), ())), None, np.float32
        ),
        lhs,
        lhs_scale,
        rhs,
        rhs_scale,
    )
    expected = scaled_dot_reference(
        lhs.astype(np.float32),
        lhs_scale.astype(np.float32),
        rhs.astype(np.float32),
        rhs_scale.astype(np.float32),
    )
    assert_close(got, expected, rtol=1e-6)


@pytest.mark.parametrize(
    "fn,error,match",
    [
        (
            lambda a, b: ops.Dot(a, a),
            ValueError,
            r"Dot: contracted dimensions of f32\[2,3\] and f32\[2,3\]",
        ),
        (
            lambda a, b: ops.DotGeneral(a, b, xb.DotDimensionNumbers([0], [0])),
            ValueError,
            "contracting dimension 0 of lhs",
        ),
        (
            lambda a, b: ops.DotGeneral(a, b, xb.DotDimensionNumbers([1], [0], [0], [])),
            ValueError,
            "as many contracting and batch",
        ),
        (
            lambda a, b: ops.Conv(
                ops.Reshape(a, (1, 2, 3)), ops.Reshape(b, (1, 4, 5)), (1,), "SAME"
            ),
            ValueError,
            "input features 2 .* must equal kernel input features 4",
        ),
        (
            lambda a, b: ops.Fft(a, "RFFT", (4,)),
            ValueError,
            r"Fft: the innermost dimensions of f32\[2,3\] must be \[4\]",
        ),
        (lambda a, b: ops.Fft(a, "FFT", (3,)), TypeError, "FFT needs a complex operand"),
        (lambda a, b: ops.Cholesky(a), ValueError, "square matrices"),
        (
            lambda a, b: ops.BatchNormTraining(a, a, a, 1e-3, 1),
            ValueError,
            r"scale must be f32\[3\]",
        ),
        (
            lambda a, b: ops.RngBitGenerator("THREE_FRY", a, xb.Shape.parse("u32[2]")),
            TypeError,
            "u64 vector",
        ),
        (
            lambda a, b: ops.RngNormal(np.int32(0), np.int32(1), xb.Shape.parse("s32[2]")),
            TypeError,
            "RngNormal",
        ),
    ],
)
def test_build_time_errors(fn, error, match):
    with pytest.raises(error, match=match):
        build(fn, np.zeros((2, 3), np.float32), np.zeros((4, 5), np.float32))


@pytest.mark.parametrize(
    "fn,error,match",
    [
        (lambda x, k: ops.ConvGeneralDilated(x, k, [1, 1], "VALID", window_reversal=[True],
                                             dimension_numbers=("NHWC", "HWIO", "NHWC")),
         ValueError, r"ConvGeneralDilated: window_reversal \[True\] needs 2 entries"),
        (lambda x, k: ops.ConvGeneralDilated(x, ops.ConvertElementType(k, "f16"), [1, 1], "VALID",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"), preferred_element_type="f32"),
         TypeError, "ConvGeneralDilated: operands must have the same element type"),
        (lambda x, k: ops.Dot(ops.ConvertElementType(x[0, 0], "s32"), ops.ConvertElementType(k[0, 0], "s32"),
                              preferred_element_type="s8"),
         ValueError, "Dot: DotGeneral: preferred_element_type s8 is narrower than the operands"),
        (lambda x, k: ops.BitcastConvertType(ops.Complex(x, x), "f32"),
         TypeError, r"BitcastConvertType: cannot reinterpret c64 as f32 \(real and complex types\)"),
        (lambda x, k: ops.ConvertElementType(x, "f99"), TypeError, "ConvertElementType: unknown element type 'f99'"),
        (lambda x, k: ops.Broadcast(x, [-1]), ValueError, "Broadcast: negative dimension size"),
        (lambda x, k: ops.Sort(ops.Complex(x, x)), TypeError, "Sort: Lt: complex operands"),
    ],
)
def test_errors_name_the_op_called(fn, error, match):
    """Each error starts with the op the caller called (an op it is made of follows)."""
    with pytest.raises(error, match=match):
        build(fn, xb.Shape.parse("f32[1,5,5,3]"), xb.Shape.parse("f32[2,2,3,4]"))

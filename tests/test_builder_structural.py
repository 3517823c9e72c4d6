"""Data-movement builder ops (constants, reshapes, slices, padding, gather,
scatter, tuples, indexing) compiled by xhlo and compared with numpy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xhlo
from xhlo import builder as xb

from .builder_util import assert_close, build, ops, run, run_reference

RNG = np.random.default_rng(7)
V = np.array(
    [
        [[10, 11, 12], [15, 16, 17]],
        [[20, 21, 22], [25, 26, 27]],
        [[30, 31, 32], [35, 36, 37]],
        [[40, 41, 42], [45, 46, 47]],
    ],
    np.float32,
)  # seed's f32[4x2x3]
M = np.arange(12, dtype=np.float32).reshape(4, 3)  # seed's 2-d DynamicSlice example


@pytest.mark.parametrize(
    "value",
    [
        np.array([[1.5, -2.0], [3.0, 4.0]], np.float32),
        np.array([1, 2, 3], np.int8),
        np.array([4000000000, 1], np.uint32),
        np.array([2**63 + 5, 7], np.uint64),
        np.array([True, False, True]),
        np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16),
        np.array([0.5, 65504.0], np.float16),
        np.array([1 + 2j, -3.5j], np.complex64),
        np.array([7, 7, 7], np.int64),
        np.float64(2.5),
        np.zeros((2, 0), np.float32),
    ],
    ids=lambda v: str(np.asarray(v).dtype) + str(np.shape(v)),
)
def test_constant_literal(value):
    b = xb.XlaBuilder("const")
    c = ops.ConstantLiteral(b, value)
    assert c.shape == xb.Shape.array_shape(np.asarray(value).dtype, np.shape(value))
    import xhlo

    got = xhlo.compile(b.build(c))()
    np.testing.assert_array_equal(got, value)
    assert got.dtype == np.asarray(value).dtype


def test_constant_python_values_default_to_32_bits():
    b = xb.XlaBuilder("c")
    assert ops.Constant(b, 1.5).shape == xb.Shape.parse("f32[]")
    assert ops.Constant(b, [1, 2]).shape == xb.Shape.parse("s32[2]")
    assert ops.Constant(b, True).shape == xb.Shape.parse("pred[]")
    with b:
        assert ops.Constant(np.float64(1)).shape == xb.Shape.parse("f64[]")


def test_reshape_forms_and_collapse():
    got = run(
        lambda v: [
            ops.Reshape(v, (24,)),
            ops.Reshape(v, (8, 3)),
            ops.Reshape(v, (1, 2, 0), (24,)),
            ops.Reshape(xb.Shape.parse("f32[6,4]"), v),
            ops.Collapse(v, (0, 1)),
            ops.Collapse(v, (1, 2)),
        ],
        V,
    )
    assert_close(got[0], V.reshape(24))
    assert_close(got[1], V.reshape(8, 3))
    assert_close(got[2], V.transpose(1, 2, 0).reshape(24))  # seed 000: 10,20,30,40,11,21,...
    assert got[2][:5].tolist() == [10, 20, 30, 40, 11]
    assert_close(got[3], V.reshape(6, 4))
    assert_close(got[4], V.reshape(8, 3))
    assert_close(got[5], V.reshape(4, 6))
    one = np.array([[5.0]], np.float32)
    (scalar,) = run(lambda x: ops.Reshape(x, ()), one)
    assert scalar.shape == () and scalar == 5


def test_transpose_rev_broadcast():
    got = run(
        lambda v: [
            ops.Transpose(v, (2, 0, 1)),
            ops.Rev(v, (0, 2)),
            ops.Broadcast(v, (2,)),
            ops.BroadcastInDim(ops.Reshape(v, (4, 1, 6)), (4, 5, 6), (0, 1, 2)),
        ],
        V,
    )
    assert_close(got[0], V.transpose(2, 0, 1))
    assert_close(got[1], V[::-1, :, ::-1])
    assert_close(got[2], np.broadcast_to(V, (2, 4, 2, 3)))
    assert_close(got[3], np.broadcast_to(V.reshape(4, 1, 6), (4, 5, 6)))


def test_slices_and_indexing():
    got = run(
        lambda m: [
            ops.Slice(m, (2, 1), (4, 3)),
            ops.Slice(m, (0, 0), (4, 3), (3, 2)),
            ops.SliceInDim(m, 1, 3, 1, 0),
            m[1],
            m[:, -1],
            m[::-1, ::2],
            m[1:3, None, 0],
            m[..., 1:],
        ],
        M,
    )
    expected = [
        M[2:4, 1:3],
        M[::3, ::2],
        M[1:3],
        M[1],
        M[:, -1],
        M[::-1, ::2],
        M[1:3, None, 0],
        M[..., 1:],
    ]
    for g, e in zip(got, expected):
        assert_close(g, e)


def test_dynamic_slice_clamps_starts():
    i, j = np.int32(2), np.int32(1)
    got = run(
        lambda m, a, b: [
            ops.DynamicSlice(m, [a, b], (2, 2)),
            ops.DynamicSlice(m, [a * 0 - 1, b + 2], (2, 2)),  # (-1, 3) -> (0, 1)
            ops.DynamicSlice(m, ops.Constant(np.array([5, 1], np.int32)), (2, 2)),
        ],
        M,
        i,
        j,
    )
    assert_close(got[0], np.array([[7, 8], [10, 11]], np.float32))  # seed example
    assert_close(got[1], M[0:2, 1:3])
    assert_close(got[2], M[2:4, 1:3])


def test_dynamic_slice_starts_of_any_integer_kind():
    """Python integers beside the operand need no ``with builder`` (an s64 constant when
    s32 cannot hold them); starts of mixed types are compared as s64 after clamping an
    unsigned one, so a u64 start past 2**63 still clamps to the last row (it had wrapped
    to row 0)."""
    b = xb.XlaBuilder("starts")
    m = ops.Parameter(b, 0, xb.Shape.array_shape(np.float32, (4, 3)))
    row = ops.Parameter(b, 1, xb.Shape.array_shape(np.uint64, ()))
    column = ops.Parameter(b, 2, xb.Shape.array_shape(np.int32, ()))
    exe = xhlo.compile(b.build([ops.DynamicSlice(m, [row, column], (1, 2)), ops.DynamicSlice(m, [2**32, 1], (2, 2)),
                                ops.DynamicUpdateSlice(m, ops.Constant(b, np.zeros((1, 3), np.float32)), [1, 0])]))
    last, clamped, updated = exe(M, np.uint64(2**63 + 1), np.int32(0))
    assert_close(last, M[3:4, 0:2])
    assert_close(clamped, M[2:4, 1:3])
    assert_close(updated, np.concatenate([M[:1], np.zeros((1, 3), np.float32), M[2:]]))


def test_dynamic_update_slice_seed_example_and_clamping():
    u = np.arange(12, 18, dtype=np.float32).reshape(3, 2)
    got = run(
        lambda m, up, s: [
            ops.DynamicUpdateSlice(m, up, [s, s]),
            ops.DynamicUpdateSlice(m, up, [s * 9, s * 9]),
        ],
        M,
        u,
        np.int32(1),
    )
    expected = M.copy()
    expected[1:4, 1:3] = u
    assert_close(got[0], expected)
    clamped = M.copy()
    clamped[1:4, 1:3] = u  # start (9, 9) clamps to (1, 1)
    assert_close(got[1], clamped)


def test_concat_pad_select_clamp_iota():
    a = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    b = np.array([[7, 8]], np.int32)
    got = run(
        lambda x, y: [
            ops.ConcatInDim([x, y], 0),
            ops.Concatenate(x, x, 1),
            ops.Pad(x, np.int32(0), [(1, 2, 1), (0, -1, 0)]),
            ops.PadInDim(x, np.int32(9), 1, 1, 0),
            ops.Select(x > 3, x, -x),
            ops.Select(ops.Constant(False), x, x * 10),
            ops.Clamp(np.int32(2), x, np.int32(5)),
            ops.Iota(xb.Shape.parse("s32[4,8]"), 0),
            ops.Iota(np.float32, 5),
            ops.GetDimensionSize(x, 0),
        ],
        a,
        b,
    )
    assert_close(got[0], np.concatenate([a, b], 0))
    assert_close(got[1], np.concatenate([a, a], 1))
    inner = np.zeros((5, 2), np.int32)
    inner[::2] = a
    expected_pad = np.zeros((8, 1), np.int32)
    expected_pad[1:6] = inner[:, :1]
    assert_close(got[2], expected_pad)
    assert_close(got[3], np.pad(a, ((0, 0), (1, 0)), constant_values=9))
    assert_close(got[4], np.where(a > 3, a, -a))
    assert_close(got[5], a * 10)
    assert_close(got[6], np.clip(a, 2, 5))
    assert_close(got[7], np.broadcast_to(np.arange(4, dtype=np.int32)[:, None], (4, 8)))
    assert_close(got[8], np.arange(5, dtype=np.float32))
    assert got[9] == 3 and got[9].dtype == np.int32


def test_tuples_are_python_lists():
    comp = build(
        lambda x, y: ops.GetTupleElement(ops.Tuple([x, ops.Tuple([y, x])]), 1), M, np.int32(3)
    )
    text = comp.as_stablehlo_text()
    assert "tuple" not in text
    assert str(comp.result_shape()) == "(s32[], f32[4,3])"
    got = run(lambda x, y: list(ops.Tuple([x, y]))[::-1], M, np.int32(3))
    assert got[0] == 3
    assert_close(got[1], M)
    (sel,) = run(
        lambda p, x: ops.GetTupleElement(
            ops.Select(p, ops.Tuple([x, x + 1]), ops.Tuple([x * 2, x])), 0
        ),
        np.bool_(False),
        M,
    )
    assert_close(sel, M * 2)


def test_gather_rows_and_seed_example():
    operand = RNG.standard_normal((16, 11)).astype(np.float32)
    idx = np.array(
        [[0, 0], [3, 2], [8, 5], [15, 10], [2, 9]], np.int64
    )  # some clamp: slices of [8,6]
    dn = xb.GatherDimensionNumbers(
        offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1), index_vector_dim=1
    )
    (got,) = run(lambda x, i: ops.Gather(x, i, dn, (8, 6)), operand, idx)
    expected = np.stack(
        [operand[min(r, 8) : min(r, 8) + 8, min(c, 5) : min(c, 5) + 6] for r, c in idx]
    )
    assert_close(got, expected)
    rows = np.array([[[1], [3]], [[0], [0]]], np.int32)  # tf.gather_nd whole rows
    (got_rows,) = run(
        lambda x, i: ops.Gather(
            x,
            i,
            None,
            (1, 11),
            offset_dims=(2,),
            collapsed_slice_dims=(0,),
            start_index_map=(0,),
            index_vector_dim=2,
        ),
        operand,
        rows,
    )
    assert_close(got_rows, operand[rows[..., 0]])


def test_scatter_add_skips_out_of_bounds():
    operand = np.zeros((5, 3), np.float32)
    idx = np.array([[1], [3], [1], [7]], np.int32)
    upd = np.arange(12, dtype=np.float32).reshape(4, 3) + 1
    dn = xb.ScatterDimensionNumbers(
        update_window_dims=(1,),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
        index_vector_dim=1,
    )
    (got,) = run(lambda x, i, u: ops.Scatter(x, i, u, lambda a, b: a + b, dn), operand, idx, upd)
    expected = operand.copy()
    for r, row in zip(idx[:, 0], upd):
        if r < 5:
            expected[r] += row
    assert_close(got, expected)


def test_scatter_variadic_and_non_commutative():
    """update_computation(current, update): current first (SEMANTICS 5.8)."""
    operand = np.full((4,), 100, np.int32)
    idx = np.array([[2], [0]], np.int32)
    upd = np.array([7, 9], np.int32)
    dn = {
        "update_window_dims": (),
        "inserted_window_dims": (0,),
        "scatter_dims_to_operand_dims": (0,),
        "index_vector_dim": 1,
    }
    got = run(
        lambda x, y, i, u, v: ops.Scatter([x, y], i, [u, v], lambda a, b, c, d: [a - c, b + d], dn),
        operand,
        operand * 2,
        idx,
        upd,
        upd,
    )
    assert_close(got[0], np.array([91, 100, 93, 100], np.int32))
    assert_close(got[1], np.array([209, 200, 207, 200], np.int32))


def test_gather_matches_reference_interpreter():
    operand = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    idx = np.array([[0, 1], [1, 2], [1, 0]], np.int32)
    dn = xb.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(0, 1), start_index_map=(0, 1), index_vector_dim=1
    )

    def fn(x, i):
        return ops.Gather(x, i, dn, (1, 1, 4))

    (ref,) = run_reference(fn, operand, idx)
    (got,) = run(fn, operand, idx)
    assert_close(got, ref)


@pytest.mark.parametrize(
    "fn,error,match",
    [
        (lambda m: ops.Reshape(m, (5, 3)), ValueError, r"Reshape: cannot reshape f32\[4,3\]"),
        (lambda m: ops.Collapse(m, (1, 0)), ValueError, "consecutive and increasing"),
        (lambda m: ops.Transpose(m, (0, 0)), ValueError, "not a permutation"),
        (
            lambda m: ops.Slice(m, (0, 0), (5, 3)),
            ValueError,
            r"Slice: \[0:5:1\] is invalid for dimension 0",
        ),
        (
            lambda m: ops.DynamicSlice(m, [np.int32(0)], (1, 1)),
            ValueError,
            "1 start indices for an operand of rank 2",
        ),
        (
            lambda m: ops.DynamicSlice(m, [m[0, 0], m[0, 0]], (1, 1)),
            TypeError,
            "must be an integer scalar",
        ),
        (lambda m: ops.ConcatInDim([m, m.T], 0), ValueError, "differ outside dimension 0"),
        (lambda m: ops.Pad(m, 0.0, [(0, 0, -1), (0, 0, 0)]), ValueError, "interior padding -1"),
        (lambda m: ops.Select(m, m, m), TypeError, "pred must have element type pred"),
        (
            lambda m: ops.BroadcastInDim(m, (4, 5), (0, 1)),
            ValueError,
            "has size 3, output dimension 1 has size 5",
        ),
        (lambda m: ops.Iota(xb.Shape.parse("pred[3]"), 0), TypeError, "Iota"),
        (lambda m: ops.GetTupleElement(m, 0), TypeError, "tuple XlaOp"),
        (
            lambda m: ops.Gather(
                m,
                ops.Constant(np.zeros((2, 1), np.int32)),
                None,
                (2, 3),
                offset_dims=(1, 2),
                collapsed_slice_dims=(0,),
                start_index_map=(0,),
                index_vector_dim=1,
            ),
            ValueError,
            "slice size",
        ),
        (lambda m: m[4], IndexError, "out of bounds"),
    ],
)
def test_build_time_errors(fn, error, match):
    with pytest.raises(error, match=match):
        build(fn, M)


def _cube_gather(**numbers):
    def gather(x):
        return ops.Gather(x, ops.Constant(np.zeros(numbers.pop("indices"), np.int32)), None, numbers.pop("sizes"),
                          **numbers)
    return gather


def _cube_scatter(update_shape, **numbers):
    def scatter(x):
        updates = ops.Constant(np.zeros(update_shape, np.float32))
        return ops.Scatter(x, ops.Constant(np.zeros(numbers.pop("indices"), np.int32)), updates, lambda a, c: a + c,
                           **numbers)
    return scatter


@pytest.mark.parametrize(
    "fn,match",
    [
        (_cube_gather(indices=(2, 1), sizes=(1, 4, 5), offset_dims=(2, 1), collapsed_slice_dims=(0,),
                      start_index_map=(0,), index_vector_dim=1), r"Gather: offset_dims \[2, 1\] must be sorted"),
        (_cube_gather(indices=(2, 2, 1), sizes=(1, 1, 5), offset_dims=(2,), collapsed_slice_dims=(1,),
                      start_index_map=(1,), index_vector_dim=2, operand_batching_dims=(0,),
                      start_indices_batching_dims=(0,)),
         r"Gather: batching dimension 0 of s32\[2,2,1\] \(2\) and 0 of f32\[3,4,5\] \(3\) differ"),
        (_cube_gather(indices=(3, 2, 1), sizes=(1, 1, 5), offset_dims=(2,), collapsed_slice_dims=(0,),
                      start_index_map=(1,), index_vector_dim=2, operand_batching_dims=(0,),
                      start_indices_batching_dims=(0,)),
         r"Gather: collapsed_slice_dims \[0\] and operand_batching_dims \[0\] share dimension\(s\) \[0\]"),
        (_cube_gather(indices=(3, 1), sizes=(1, 1, 5), offset_dims=(1,), collapsed_slice_dims=(1,),
                      start_index_map=(1,), index_vector_dim=1, operand_batching_dims=(0,),
                      start_indices_batching_dims=(1,)),
         r"Gather: start_indices_batching_dims \[1\] include the index_vector_dim 1"),
        (_cube_scatter((2, 5), indices=(2, 2), update_window_dims=(1,), inserted_window_dims=(1, 0),
                       scatter_dims_to_operand_dims=(0, 1), index_vector_dim=1),
         r"Scatter: inserted_window_dims \[1, 0\] must be sorted"),
        (_cube_scatter((2, 4, 5), indices=(2, 1), update_window_dims=(2, 1), inserted_window_dims=(0,),
                       scatter_dims_to_operand_dims=(0,), index_vector_dim=1),
         r"Scatter: update_window_dims \[2, 1\] must be sorted"),
        (_cube_scatter((3, 5), indices=(3, 1), update_window_dims=(1,), inserted_window_dims=(1,),
                       input_batching_dims=(0,), scatter_indices_batching_dims=(3,),
                       scatter_dims_to_operand_dims=(1,), index_vector_dim=1),
         r"Scatter: scatter_indices_batching_dims 3 is out of range"),
    ],
)
def test_gather_scatter_dimension_numbers_are_checked(fn, match):
    """StableHLO's constraints on dimension numbers, checked when the op is built (they
    had surfaced as verifier errors inside xhlo.compile, naming no op)."""
    with pytest.raises(ValueError, match=match):
        build(fn, xb.Shape.array_shape(np.float32, (3, 4, 5)))




def test_mixing_builders_is_an_error():
    other = xb.XlaBuilder("other")
    foreign = ops.Constant(other, np.float32(1))
    with pytest.raises(ValueError, match="belongs to builder 'other'"):
        build(lambda m: m + foreign, M)


# The user-facing ops of seed 003 ("See also XlaBuilder::<Op>"), in its spelling.
SEED_OPS = """
Abs Add AfterAll AllGather AllReduce AllToAll And Atan2 BatchNormGrad BatchNormInference
BatchNormTraining BitcastConvertType Broadcast BroadcastInDim Call Cbrt Ceil Cholesky Clamp Clz
Collapse CollectiveBroadcast CollectivePermute Compare Complex CompositeCall ConcatInDim Conditional
ConstantLiteral Conv ConvGeneral ConvGeneralDilated ConvWithGeneralDimensions ConvWithGeneralPadding
ConvertElementType Cos Cosh CrossReplicaSum CustomCall Div Dot DotGeneral DynamicReshape DynamicSlice
DynamicUpdateSlice Eq Erf Exp Expm1 Fft Floor Gather Ge GetDimensionSize GetTupleElement Gt Imag
Infeed Iota IsFinite Le Log Logistic Lt Map Max Min Mul Ne Neg Not OptimizationBarrier Or Outfeed Pad
Parameter PartitionID PopulationCount Pow RaggedAllToAll RaggedDot Real Recv Reduce ReducePrecision
ReduceScatter ReduceWindow Rem ReplicaId Reshape Rev RngBitGenerator RngNormal RngUniform Round
RoundNearestAfz RoundNearestEven Rsqrt ScaledDot Scatter Select SelectAndScatter Send SetDimensionSize
ShiftLeft ShiftRightArithmetic ShiftRightLogical Sign Sin Slice Sort Sqrt Sub Tan Tanh TopK
TriangularSolve Tuple While Xor
""".split()


def test_every_seed_op_has_a_builder():
    missing = [name for name in SEED_OPS if not callable(getattr(ops, name, None))]
    assert not missing, missing

"""SetDimensionSize, DynamicReshape and how dynamic sizes flow (seed 003), against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import xhlo
from xhlo import builder as xb

from .builder_util import build, ops

F = np.float32
I32 = np.int32


def compile_fn(fn, *examples):
    return xhlo.compile(build(fn, *examples))


def reduce_sum(x, dims):
    return ops.Reduce([x], [ops.ConstantLiteral(F(0))], lambda a, b: a + b, dims)


def reduce_product(x, dims):
    return ops.Reduce([x], [ops.ConstantLiteral(F(1))], lambda a, b: a * b, dims)


@pytest.mark.parametrize("size", [5, 6, 0, 10])
def test_seed_example_reductions_ignore_the_padding(size):
    def program(v, n):
        padded = ops.SetDimensionSize(v, n, 0)
        return [
            reduce_sum(padded, [0]),
            reduce_product(padded, [0]),
            ops.GetDimensionSize(padded, 0),
        ]

    v = np.arange(1, 11, dtype=F)
    total, product, got_size = compile_fn(program, v, I32(0))(v, I32(size))
    assert total == v[:size].sum() and product == np.prod(v[:size]) and got_size == size


def test_dynamic_sizes_flow_through_elementwise_ops_and_broadcasts():
    def program(m, rows, row_scale):
        dynamic = ops.SetDimensionSize(m, rows, 0)
        scaled = ops.Exp(dynamic) * ops.BroadcastInDim(row_scale, (6, 4), [0]) - 1
        return [
            reduce_sum(scaled, [0]),
            reduce_sum(scaled, [1]),
            ops.GetDimensionSize(reduce_sum(scaled, [1]), 0),
        ]

    rng = np.random.default_rng(1)
    m, scale = rng.standard_normal((6, 4)).astype(F), rng.standard_normal(6).astype(F)
    exe = compile_fn(program, m, I32(0), scale)
    for rows in (2, 6):
        columns, per_row, size = exe(m, I32(rows), scale)
        expected = np.exp(m) * scale[:, None] - 1
        np.testing.assert_allclose(columns, expected[:rows].sum(0), rtol=1e-5)
        np.testing.assert_allclose(per_row[:rows], expected[:rows].sum(1), rtol=1e-5)
        assert size == rows  # the kept dimension stays dynamic


def test_static_dynamic_reshape_is_a_reshape():
    x = np.arange(12, dtype=F).reshape(3, 4)
    exe = compile_fn(
        lambda a: ops.DynamicReshape(
            a, [ops.ConstantLiteral(I32(2)), ops.ConstantLiteral(I32(6))], [2, 6], [False, False]
        ),
        x,
    )
    np.testing.assert_array_equal(exe(x), x.reshape(2, 6))


@pytest.mark.parametrize("count", [6, 4, 3])
def test_dynamic_reshape_of_a_dynamic_vector(count):
    def program(v, n):
        logical = ops.SetDimensionSize(v, n, 0)
        half = ops.Div(n, ops.ConstantLiteral(I32(2)))
        reshaped = ops.DynamicReshape(
            logical, [half, ops.ConstantLiteral(I32(2))], [4, 2], [True, False]
        )
        return [reshaped, ops.GetDimensionSize(reshaped, 0), reduce_sum(reshaped, [0])]

    v = np.arange(1, 9, dtype=F)
    out, rows, column_sums = compile_fn(program, v, I32(0))(v, I32(count))
    expected = v[: (count // 2) * 2].reshape(count // 2, 2)
    assert rows == count // 2
    np.testing.assert_array_equal(out[: count // 2], expected)
    np.testing.assert_array_equal(out[count // 2 :], 0)  # zero padding past the size
    np.testing.assert_array_equal(column_sums, expected.sum(0))


def test_dynamic_reshape_of_a_dynamic_matrix_uses_its_logical_elements():
    def program(m, cols):
        logical = ops.SetDimensionSize(m, cols, 1)  # 2 x cols of a 2 x 4 buffer
        total = ops.Mul(cols, ops.ConstantLiteral(I32(2)))
        return ops.DynamicReshape(logical, [total], [8], [True])

    m = np.arange(8, dtype=F).reshape(2, 4)
    out = compile_fn(program, m, I32(0))(m, I32(3))
    np.testing.assert_array_equal(out[:6], m[:, :3].reshape(-1))
    np.testing.assert_array_equal(out[6:], 0)


def test_dynamic_sizes_survive_a_tuple():
    """GetTupleElement gives back an element's dynamic sizes (they had been dropped: the
    reduction summed the padding); an op that takes such a tuple whole is refused."""
    def program(v, n):
        pair = ops.Tuple(v.builder, [ops.SetDimensionSize(v, n, 0), n])
        padded = ops.GetTupleElement(pair, 0)
        return [reduce_sum(padded, [0]), ops.GetDimensionSize(padded, 0)]

    v = np.arange(1, 7, dtype=F)
    total, size = compile_fn(program, v, I32(0))(v, I32(4))
    assert total == v[:4].sum() and size == 4

    b = xb.XlaBuilder("loop")
    state = ops.Tuple(b, [ops.SetDimensionSize(ops.Parameter(b, 0, xb.Shape.array_shape(F, (6,))),
                                               ops.Parameter(b, 1, xb.Shape.array_shape(I32, ())), 0)])
    with pytest.raises(ValueError, match="While: operand 0 is a tuple with dynamic dimensions in its elements"):
        ops.While(lambda s: ops.ConstantLiteral(s.builder, np.bool_(False)), lambda s: s, state)


def test_errors_name_the_op():
    b = xb.XlaBuilder("bad")
    v = ops.Parameter(b, 0, xb.Shape.array_shape(F, (4, 3)))
    n = ops.Parameter(b, 1, xb.Shape.array_shape(I32, ()))
    wide = ops.Parameter(b, 2, xb.Shape.array_shape(np.int64, ()))
    with pytest.raises(
        TypeError, match=r"SetDimensionSize: val must be an s32 scalar, got s64\[\]"
    ):
        ops.SetDimensionSize(v, wide, 0)
    with pytest.raises(ValueError, match="SetDimensionSize: dimension 2 is out of range"):
        ops.SetDimensionSize(v, n, 2)
    dynamic = ops.SetDimensionSize(v, n, 0)
    with pytest.raises(
        ValueError, match=r"Transpose: operand 0 \(f32\[4,3\]\) has dynamic dimension\(s\) \[0\]"
    ):
        ops.Transpose(dynamic, [1, 0])
    with pytest.raises(
        ValueError, match="DynamicReshape: dim_sizes \\(1\\), new_size_bounds \\(2\\)"
    ):
        ops.DynamicReshape(v, [n], [3, 4], [True, False])
    with pytest.raises(
        ValueError, match=r"DynamicReshape: static bounds \[5\] do not hold the 12 elements"
    ):
        ops.DynamicReshape(v, [n], [5], [False])

"""Builder ops taking computations (reductions, windows, maps, sorting, control
flow, calls, composites), given as XlaComputations or Python callables, compiled
by xhlo and compared with numpy and the seed's worked examples."""

from __future__ import annotations

import numpy as np
import pytest

import xhlo
from xhlo import builder as xb

from .builder_util import assert_close, build, ops, run, run_reference

RNG = np.random.default_rng(3)
F32 = xb.Shape.scalar_shape(np.float32)


def max_computation() -> xb.XlaComputation:
    """The seed's ``max`` computation, built with a separate builder."""
    b = xb.XlaBuilder("max")
    y = ops.Parameter(b, 0, F32, "y")
    x = ops.Parameter(b, 1, F32, "x")
    ops.Max(y, x)
    return b.build()


def test_reduce_dimensions_seed_example():
    x = np.tile(np.arange(1, 7, dtype=np.float32).reshape(1, 2, 3), (4, 1, 1))  # seed's 3-D example
    add = lambda a, b: a + b
    got = run(
        lambda v: [
            ops.Reduce(v, np.float32(0), add, [0]),
            ops.Reduce(v, np.float32(0), add, [2]),
            ops.Reduce(v, np.float32(0), add, [0, 1]),
            ops.Reduce(v, np.float32(0), add, [0, 1, 2]),
            ops.Reduce(v, np.float32(-np.inf), max_computation(), [1]),
        ],
        x,
    )
    assert_close(got[0], np.array([[4, 8, 12], [16, 20, 24]], np.float32))
    assert_close(got[1], np.array([[6, 15]] * 4, np.float32))
    assert_close(got[2], np.array([20, 28, 36], np.float32))
    assert got[3] == 84
    assert_close(got[4], x.max(axis=1))


def test_reduce_variadic_argmax():
    v = RNG.standard_normal((3, 7)).astype(np.float32)

    def argmax(x):
        k = ops.Iota(xb.Shape.parse("s32[3,7]"), 1)

        def f(m, am, value, index):
            take = value > m
            return [ops.Select(take, value, m), ops.Select(take, index, am)]

        return ops.Reduce([x, k], [np.float32(-np.inf), np.int32(0)], f, [1])

    values, indices = run(argmax, v)
    assert_close(values, v.max(axis=1))
    np.testing.assert_array_equal(indices, v.argmax(axis=1))


def test_reduce_over_no_dimension_applies_the_computation_once():
    x = np.array([1.0, -2.0, 3.0], np.float32)
    (got,) = run(lambda v: ops.Reduce(v, np.float32(10), lambda a, b: a - b, []), x)
    assert_close(got, 10 - x)


def test_reduce_window_seed_examples():
    x = np.array([10000, 1000, 100, 10, 1], np.float32)
    mn = lambda a, b: ops.Min(a, b)
    inf = np.float32(np.finfo(np.float32).max)
    got = run(
        lambda v: [
            ops.ReduceWindow(v, inf, mn, (3,), (2,), "VALID"),
            ops.ReduceWindow(v, inf, mn, (3,), (2,), xb.Padding.SAME),
        ],
        x,
    )
    assert_close(got[0], np.array([100, 1], np.float32))
    assert_close(got[1], np.array([1000, 10, 1], np.float32))
    m = RNG.standard_normal((4, 6)).astype(np.float32)
    (pooled,) = run(
        lambda v: ops.ReduceWindow(
            v, np.float32(-np.inf), max_computation(), (2, 3), (2, 3), xb.Padding.kValid
        ),
        m,
    )
    assert_close(pooled, m.reshape(2, 2, 2, 3).max(axis=(1, 3)))
    s = np.array([[1, 2], [3, 4], [5, 6]], np.int32)  # example 2: dilations and padding
    (dilated,) = run(
        lambda v: ops.ReduceWindow(
            v,
            np.int32(0),
            lambda a, b: a + b,
            (2, 1),
            (4, 1),
            [(2, 1), (0, 0)],
            base_dilations=(2, 1),
            window_dilations=(3, 1),
        ),
        s,
    )
    assert_close(dilated, np.array([[0, 0], [3, 4]], np.int32))


def test_reduce_window_with_general_padding():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (got,) = run(
        lambda v: ops.ReduceWindowWithGeneralPadding(
            v, np.float32(0), lambda a, b: a + b, (1, 2), (1, 1), (1, 1), (1, 1), [(0, 0), (1, 0)]
        ),
        x,
    )
    padded = np.pad(x, ((0, 0), (1, 0)))
    assert_close(got, padded[:, :-1] + padded[:, 1:])


def test_map_with_static_operand():
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    b = RNG.standard_normal((2, 3)).astype(np.float32)
    got = run(
        lambda x, y, s: [
            ops.Map([x, y], lambda p, q: ops.Max(p, q) * 2.0, (0, 1)),
            ops.Map([x], lambda p, k: p + k, (0, 1), static_operands=[s]),
        ],
        a,
        b,
        np.float32(5),
    )
    assert_close(got[0], np.maximum(a, b) * 2)
    assert_close(got[1], a + 5)


def test_sort_multi_operand_seed_example():
    got = run(
        lambda a, b, c: ops.Sort([a, b, c], lambda a0, a1, *_: ops.Lt(a0, a1)),
        np.array([3, 1], np.int32),
        np.array([42, 50], np.int32),
        np.array([-3.0, 1.1], np.float32),
    )
    assert_close(got[0], np.array([1, 3], np.int32))
    assert_close(got[1], np.array([50, 42], np.int32))
    assert_close(got[2], np.array([1.1, -3.0], np.float32))


def test_sort_dimension_stability_and_default_comparator():
    keys = RNG.integers(0, 3, (4, 9)).astype(np.int32)
    vals = np.tile(np.arange(9, dtype=np.int32), (4, 1))
    k, v = run(
        lambda a, b: ops.Sort([a, b], lambda x, y, *_: x < y, dimension=1, is_stable=True),
        keys,
        vals,
    )
    order = np.argsort(keys, axis=1, kind="stable")
    assert_close(k, np.take_along_axis(keys, order, 1))
    assert_close(v, np.take_along_axis(vals, order, 1))
    x = np.array([[3.0, np.nan, -1.0], [-0.0, 0.0, -np.inf]], np.float32)
    (cols,) = run(lambda a: ops.Sort(a, dimension=0), x)  # total order: NaN last
    np.testing.assert_array_equal(cols, np.sort(x, axis=0))


def test_top_k_ties_take_lower_index_first():
    x = np.array([[1, 5, 3, 5, 0], [2, 2, 2, 9, -1]], np.float32)
    values, indices = run(lambda v: ops.TopK(v, 2), x)
    assert_close(values, np.array([[5, 5], [9, 2]], np.float32))
    assert_close(indices, np.array([[1, 3], [3, 0]], np.int32))
    small, small_idx = run(lambda v: ops.TopK(v, 3, largest=False), x)
    assert_close(small, np.array([[0, 1, 3], [-1, 2, 2]], np.float32))
    assert_close(small_idx, np.array([[4, 0, 2], [4, 0, 1]], np.int32))


def test_while_seed_example():
    """1000 iterations adding a constant vector to a tuple state (s32, f32[10])."""
    cond_b = xb.XlaBuilder("condition")
    state = ops.Parameter(cond_b, 0, xb.Shape.parse("(s32[], f32[10])"))
    ops.Lt(ops.GetTupleElement(state, 0), ops.Constant(cond_b, np.int32(1000)))
    condition = cond_b.build()

    def body(s):
        return ops.Tuple([s[0] + 1, s[1] + ops.Constant(np.arange(10, dtype=np.float32))])

    count, vector = run(
        lambda z: ops.While(condition, body, ops.Tuple([ops.Constant(np.int32(0)), z])),
        np.zeros(10, np.float32),
    )
    assert count == 1000
    assert_close(vector, 1000 * np.arange(10, dtype=np.float32))


def test_while_with_unpacked_callable_state():
    (fact,) = run(
        lambda n: ops.While(
            lambda i, acc: i > 0,
            lambda i, acc: [i - 1, acc * ops.ConvertElementType(i, np.int64)],
            [n, ops.Constant(np.int64(1))],
        )[1],
        np.int32(15),
    )
    assert fact == 1307674368000


def test_conditional_predicate_form():
    x = np.array([1.0, 2.0], np.float32)
    y = np.array([5, 6, 7], np.int32)

    def fn(p, a, b):
        return ops.Conditional(
            p,
            a,
            lambda v: ops.Reduce(v, np.float32(0), lambda s, t: s + t, [0]),
            b,
            lambda w: ops.ConvertElementType(w[0] * w[2], np.float32),
        )

    assert run(fn, np.bool_(True), x, y)[0] == 3.0
    assert run(fn, np.bool_(False), x, y)[0] == 35.0


@pytest.mark.parametrize(
    "index,expected", [(0, 11.0), (1, 30.0), (2, -10.0), (7, -10.0), (-1, -10.0)]
)
def test_conditional_branch_index_out_of_range_runs_last(index, expected):
    fn = lambda i, x: ops.Conditional(
        i, [lambda v: v + 1.0, lambda v: v * 3.0, lambda v: -v], [x, x, x]
    )
    assert run(fn, np.int32(index), np.float32(10))[0] == expected


def test_call_computation_and_nested_callables():
    b = xb.XlaBuilder("axpy")
    a = ops.Parameter(b, 0, F32)
    x = ops.Parameter(b, 1, xb.Shape.parse("f32[3]"))
    y = ops.Parameter(b, 2, xb.Shape.parse("f32[3]"))
    axpy = b.build(a * x + y)
    v = np.array([1.0, 2.0, 3.0], np.float32)
    comp = build(lambda s, p, q: ops.Call(axpy, s, ops.Call(axpy, s, p, q), q), np.float32(2), v, v)
    text = comp.as_stablehlo_text()
    assert text.count("func.func private @axpy") == 1 and text.count("call @axpy") == 2
    got = xhlo.compile(comp)(np.float32(2), v, v)
    assert_close(got, 2 * (2 * v + v) + v)
    (none,) = run(lambda x: ops.Call(lambda: ops.Constant(np.float32(4))) + x, np.float32(1))
    assert none == 5


def test_composite_call():
    x = np.array([1.0, -2.0], np.float32)
    fn = lambda v: ops.CompositeCall(
        lambda a: a * 2.0 + 1.0, [v], "foo.bar", "{n = 1 : i32, tensor = dense<1> : tensor<i32>}", 1
    )
    text = build(fn, x).as_stablehlo_text()
    assert (
        'stablehlo.composite "foo.bar"' in text and "version = 1" in text and "n = 1 : i32" in text
    )
    (got,) = run(fn, x)
    assert_close(got, x * 2 + 1)
    (with_dict,) = run(
        lambda v: ops.CompositeCall(lambda a: -a, [v], "my.neg", {"k": 2, "s": "x"}), x
    )
    assert_close(with_dict, -x)


def test_select_and_scatter_spec_example():
    operand = np.array([[1, 5], [2, 5], [3, 6], [4, 4]], np.float32)
    source = np.array([[5, 6], [7, 8]], np.float32)

    def fn(x, s):
        return ops.SelectAndScatter(
            x,
            lambda a, b: a >= b,
            (3, 1),
            (2, 1),
            [(0, 1), (0, 0)],
            s,
            np.float32(0),
            lambda a, b: a + b,
        )

    expected = np.array([[0, 0], [0, 0], [5, 14], [7, 0]], np.float32)
    (ref,) = run_reference(fn, operand, source)
    assert_close(ref, expected)
    (got,) = run(fn, operand, source)
    assert_close(got, expected)


def test_optimization_barrier_passes_values_through():
    x = np.array([1.0, 2.0], np.float32)
    got = run(lambda v, w: list(ops.OptimizationBarrier(ops.Tuple([v * 2.0, w]))), x, np.int32(4))
    assert_close(got[0], x * 2)
    assert got[1] == 4


def test_callable_results_and_computation_reuse_in_regions():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    add = build(lambda a, b: a + b, np.float32(0), np.float32(0), name="add")
    got = run(
        lambda v: [ops.Reduce(v, np.float32(0), add, [0]), ops.Reduce(v, np.float32(0), add, [1])],
        x,
    )
    assert_close(got[0], x.sum(0), rtol=1e-5)
    assert_close(got[1], x.sum(1), rtol=1e-5)


@pytest.mark.parametrize(
    "fn,error,match",
    [
        (
            lambda v: ops.Reduce(v, np.float32(0), lambda a: a, [0]),
            TypeError,
            "Reduce: computation .* takes 1 parameters",
        ),
        (
            lambda v: ops.Reduce(
                v, np.float32(0), lambda a, b: ops.ConvertElementType(a + b, np.int32), [0]
            ),
            TypeError,
            r"Reduce: computation .* returns s32\[\], expected f32\[\]",
        ),
        (
            lambda v: ops.Reduce(v, np.int32(0), lambda a, b: a + b, [0]),
            TypeError,
            "init value 0 must be a f32 scalar",
        ),
        (
            lambda v: ops.Reduce(v, np.float32(0), lambda a, b: a + b, [2]),
            ValueError,
            "dimension 2 is out of range",
        ),
        (
            lambda v: ops.Reduce(v, np.float32(0), 42, [0]),
            TypeError,
            "XlaComputation or a callable",
        ),
        (
            lambda v: ops.Sort(v, lambda a, b: a + b),
            TypeError,
            r"Sort: computation .* returns f32\[\], expected pred\[\]",
        ),
        (
            lambda v: ops.While(lambda s: s, lambda s: s, v),
            TypeError,
            r"While: computation .* returns f32\[3,4\]",
        ),
        (
            lambda v: ops.While(lambda s: ops.Constant(True), lambda s: s[0], v),
            TypeError,
            r"While: computation .* returns f32\[4\], expected f32\[3,4\]",
        ),
        (
            lambda v: ops.Conditional(
                ops.Constant(np.int32(0)), [lambda a: a, lambda a: a[0]], [v, v]
            ),
            TypeError,
            "Conditional",
        ),
        (
            lambda v: ops.Conditional(ops.Constant(1.0), v, lambda a: a, v, lambda a: a),
            TypeError,
            "selector must be a pred scalar",
        ),
        (
            lambda v: ops.Call(max_computation(), v, v),
            TypeError,
            r"Call: parameter 0 of computation 'max' is f32\[\], expected f32\[3,4\]",
        ),
        (
            lambda v: ops.ReduceWindow(v, np.float32(0), lambda a, b: a + b, (2,), (1,)),
            ValueError,
            "window_dimensions has 1 entries",
        ),
        (lambda v: ops.TopK(v, 5), ValueError, "TopK: k=5"),
        (
            lambda v: ops.Map([v], lambda a: ops.Tuple([a, a])),
            TypeError,
            "Map: computation .* must return a scalar",
        ),
    ],
)
def test_computation_signature_errors(fn, error, match):
    with pytest.raises(error, match=match):
        build(fn, np.zeros((3, 4), np.float32))

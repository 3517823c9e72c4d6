"""stablehlo.scatter lowered by xhlo-lower-scatter, checked against a numpy model
of XLA's scatter and, where it applies, the StableHLO reference interpreter.

The model skips a whole update window whose start does not fit the operand
(XLA); the interpreter follows the StableHLO spec and skips single elements, so
it is only used where the two agree (no window partially out of bounds).
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

import xhlo
from xhlo import dtypes, reference


@dataclasses.dataclass(frozen=True)
class Dims:
    update_window_dims: tuple[int, ...] = ()
    inserted_window_dims: tuple[int, ...] = ()
    input_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()
    scatter_dims_to_operand_dims: tuple[int, ...] = ()
    index_vector_dim: int = 0

    def attribute(self) -> str:
        lists = [f.name for f in dataclasses.fields(self) if f.name != "index_vector_dim"]
        fields = [f"{name} = {list(getattr(self, name))}" for name in lists]
        fields.append(f"index_vector_dim = {self.index_vector_dim}")
        return f"#stablehlo.scatter<{', '.join(fields)}>"


def scatter_model(operands, indices, updates, combine, dims: Dims):
    """XLA scatter, one window at a time in row-major order of the scatter dims."""
    outputs = [np.array(o, copy=True) for o in operands]
    shape, rank = outputs[0].shape, outputs[0].ndim
    if dims.index_vector_dim == indices.ndim:
        indices = indices[..., None]
    update_shape = updates[0].shape
    update_scatter_dims = [d for d in range(len(update_shape)) if d not in dims.update_window_dims]
    index_scatter_dims = [d for d in range(indices.ndim) if d != dims.index_vector_dim]
    skipped = set(dims.inserted_window_dims) | set(dims.input_batching_dims)
    window_operand_dims = [d for d in range(rank) if d not in skipped]
    window = [1] * rank
    for u, o in zip(dims.update_window_dims, window_operand_dims):
        window[o] = update_shape[u]
    for scatter_index in np.ndindex(*[update_shape[d] for d in update_scatter_dims]):
        where = list(scatter_index)
        where.insert(dims.index_vector_dim, slice(None))
        vector = [int(v) for v in indices[tuple(where)]]
        start = [0] * rank
        for k, o in enumerate(dims.scatter_dims_to_operand_dims):
            start[o] = vector[k]
        for o, i in zip(dims.input_batching_dims, dims.scatter_indices_batching_dims):
            start[o] = scatter_index[index_scatter_dims.index(i)]
        if any(s < 0 or s + w > n for s, w, n in zip(start, window, shape)):
            continue
        for window_index in np.ndindex(*[update_shape[d] for d in dims.update_window_dims]):
            u_index = [0] * len(update_shape)
            for k, d in enumerate(update_scatter_dims):
                u_index[d] = scatter_index[k]
            for k, d in enumerate(dims.update_window_dims):
                u_index[d] = window_index[k]
            o_index = list(start)
            for k, o in enumerate(window_operand_dims):
                o_index[o] += window_index[k]
            o_index, u_index = tuple(o_index), tuple(u_index)
            new = combine(*[out[o_index] for out in outputs], *[u[u_index] for u in updates])
            for out, value in zip(outputs, new if isinstance(new, tuple) else (new,)):
                out[o_index] = value
    return outputs


def _ttype(array_or_shape, elem: str) -> str:
    shape = array_or_shape.shape if hasattr(array_or_shape, "shape") else array_or_shape
    return f"tensor<{''.join(f'{n}x' for n in shape)}{elem}>"


def scatter_module(operands, indices, updates, elems, index_elem, dims: Dims, region: str) -> str:
    """``@main(operands..., indices, updates...)`` returning the scatter's results.

    ``region`` is the body of the update computation over ``%cur<i>``/``%upd<i>``
    (0-d tensors) ending in ``stablehlo.return``.
    """
    n = len(operands)
    o_types = [_ttype(o, e) for o, e in zip(operands, elems)]
    u_types = [_ttype(u, e) for u, e in zip(updates, elems)]
    i_type = _ttype(indices, index_elem)
    args = [f"%x{i}: {t}" for i, t in enumerate(o_types)] + [f"%idx: {i_type}"]
    args += [f"%u{i}: {t}" for i, t in enumerate(u_types)]
    block_args = [f"%cur{i}: tensor<{e}>" for i, e in enumerate(elems)]
    block_args += [f"%upd{i}: tensor<{e}>" for i, e in enumerate(elems)]
    names = [f"%x{i}" for i in range(n)] + ["%idx"] + [f"%u{i}" for i in range(n)]
    numbers = dims.attribute()
    results = ", ".join(o_types)
    return f"""func.func @main({', '.join(args)}) -> ({results}) {{
  %r:{n} = "stablehlo.scatter"({', '.join(names)}) <{{scatter_dimension_numbers = {numbers}}}> ({{
  ^bb0({', '.join(block_args)}):
{region}
  }}) : ({', '.join(o_types + [i_type] + u_types)}) -> ({results})
  return {', '.join(f'%r#{i}' for i in range(n))} : {results}
}}"""


def binary_region(op: str, elem: str) -> str:
    return f"""    %v = stablehlo.{op} %cur0, %upd0 : tensor<{elem}>
    stablehlo.return %v : tensor<{elem}>"""


def overwrite_region(elem: str) -> str:
    return f"    stablehlo.return %upd0 : tensor<{elem}>"


COMBINERS = {
    "add": np.add,
    "multiply": np.multiply,
    "minimum": np.minimum,
    "maximum": np.maximum,
    "subtract": np.subtract,
}

ROWS = Dims(
    update_window_dims=(1,),
    inserted_window_dims=(0,),
    scatter_dims_to_operand_dims=(0,),
    index_vector_dim=1,
)


def run_scatter(operands, indices, updates, elems, index_elem, dims, region):
    module = scatter_module(operands, indices, updates, elems, index_elem, dims, region)
    # Copies: bufferization currently writes in place into argument buffers
    # (see test_arguments_are_not_modified).
    arguments = [np.array(a, copy=True) for a in (*operands, indices, *updates)]
    results = xhlo.compile(module)(*arguments)
    return (results,) if isinstance(results, np.ndarray) else tuple(results)


# -- combiners over 1-D windows (rows), duplicates and out-of-bounds indices ------------


@pytest.mark.parametrize("op", sorted(COMBINERS))
@pytest.mark.parametrize("elem", ["f32", "i32"])
def test_row_windows(op, elem):
    dt = dtypes.to_numpy_dtype(elem)
    x = (np.arange(15).reshape(5, 3) - 4).astype(dt)
    idx = np.array([[3], [0], [3], [-1], [5], [4], [3]], np.int32)  # duplicates, two out of bounds
    upd = (np.arange(21).reshape(7, 3) % 5 - 2).astype(dt)
    (got,) = run_scatter([x], idx, [upd], [elem], "i32", ROWS, binary_region(op, elem))
    (want,) = scatter_model([x], idx, [upd], COMBINERS[op], ROWS)
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(want, x)  # the test can fail


def test_overwrite_last_duplicate_wins():
    x = np.zeros((4, 2), np.float32)
    idx = np.array([[1], [2], [1]], np.int64)
    upd = np.array([[1, 1], [2, 2], [3, 3]], np.float32)
    (got,) = run_scatter([x], idx, [upd], ["f32"], "i64", ROWS, overwrite_region("f32"))
    np.testing.assert_array_equal(got, [[0, 0], [3, 3], [2, 2], [0, 0]])


def test_subtract_is_current_minus_update_in_order():
    """Non-commutative: output = region(current, update), applied in index order."""
    x = np.full((3, 1), 100, np.int32)
    idx = np.array([[2], [2], [0]], np.int32)
    upd = np.array([[7], [5], [1]], np.int32)
    dims = ROWS
    (got,) = run_scatter([x], idx, [upd], ["i32"], "i32", dims, binary_region("subtract", "i32"))
    np.testing.assert_array_equal(got, [[99], [100], [88]])
    divide = binary_region("divide", "f32")
    xf = np.full((3, 1), 120.0, np.float32)
    (got,) = run_scatter([xf], idx, [upd.astype(np.float32)], ["f32"], "i32", dims, divide)
    f32 = np.float32
    np.testing.assert_array_equal(got, [[120.0], [120.0], [f32(f32(120.0) / f32(7.0)) / f32(5.0)]])


def test_matches_reference_interpreter_for_rows():
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    idx = np.array([[4], [1], [1], [0]], np.int32)
    upd = np.arange(16, dtype=np.float32).reshape(4, 4) / 4
    module = scatter_module([x], idx, [upd], ["f32"], "i32", ROWS, binary_region("add", "f32"))
    want = reference.evaluate(module, x, idx, upd)[0]
    np.testing.assert_array_equal(xhlo.compile(module)(x, idx, upd), want)
    assert not np.array_equal(want, x)


# -- window shapes and dimension numbers -------------------------------------------------


def test_two_dim_windows_skip_partly_out_of_bounds_windows():
    """XLA skips the whole window when it does not fit (start 5 + size 2 > 6)."""
    dims = Dims(update_window_dims=(1, 2), scatter_dims_to_operand_dims=(0, 1), index_vector_dim=1)
    x = np.zeros((6, 7), np.int32)
    idx = np.array([[0, 0], [4, 4], [5, 1], [1, 6], [-1, 0], [2, 1]], np.int32)
    upd = np.arange(36, dtype=np.int32).reshape(6, 2, 3) + 1
    (got,) = run_scatter([x], idx, [upd], ["i32"], "i32", dims, binary_region("add", "i32"))
    (want,) = scatter_model([x], idx, [upd], np.add, dims)
    np.testing.assert_array_equal(got, want)
    assert got[5, :4].sum() == 0 and got[:4, 6].sum() == 0  # windows [5,1], [1,6] partly outside
    assert got[4:, 4:].all()  # window [4,4] ends exactly at the corner


def test_inserted_window_dim_in_the_middle():
    dims = Dims(
        update_window_dims=(0, 2),
        inserted_window_dims=(1,),
        scatter_dims_to_operand_dims=(1,),
        index_vector_dim=1,
    )
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    idx = np.array([[3], [0], [3], [9]], np.int32)
    upd = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5) * 0.5
    (got,) = run_scatter([x], idx, [upd], ["f32"], "i32", dims, binary_region("add", "f32"))
    (want,) = scatter_model([x], idx, [upd], np.add, dims)
    np.testing.assert_array_equal(got, want)
    module = scatter_module([x], idx, [upd], ["f32"], "i32", dims, binary_region("add", "f32"))
    np.testing.assert_array_equal(got, reference.evaluate(module, x, idx, upd)[0])


def test_partial_window_smaller_than_operand():
    dims = Dims(
        update_window_dims=(1,),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0, 1),
        index_vector_dim=1,
    )
    x = np.zeros((3, 6), np.int64)
    idx = np.array([[0, 0], [1, 3], [2, 3], [1, 4], [0, -1]], np.int64)  # [1,4] and [0,-1] skipped
    upd = np.arange(1, 16, dtype=np.int64).reshape(5, 3)
    (got,) = run_scatter([x], idx, [upd], ["i64"], "i64", dims, binary_region("add", "i64"))
    (want,) = scatter_model([x], idx, [upd], np.add, dims)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, [[1, 2, 3, 0, 0, 0], [0, 0, 0, 4, 5, 6], [0, 0, 0, 7, 8, 9]])


def test_batching_dims_spec_example():
    """SEMANTICS 5.8: operand [2,3,4,2] = 1..48, one out-of-range pair [0,9] dropped."""
    dims = Dims(
        update_window_dims=(3, 4),
        inserted_window_dims=(1,),
        input_batching_dims=(0,),
        scatter_indices_batching_dims=(1,),
        scatter_dims_to_operand_dims=(2, 1),
        index_vector_dim=3,
    )
    x = np.arange(1, 49, dtype=np.int64).reshape(2, 3, 4, 2)
    idx = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                    [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], np.int64)
    upd = np.ones((2, 2, 3, 2, 2), np.int64)
    (got,) = run_scatter([x], idx, [upd], ["i64"], "i64", dims, binary_region("add", "i64"))
    (want,) = scatter_model([x], idx, [upd], np.add, dims)
    np.testing.assert_array_equal(got, want)
    module = scatter_module([x], idx, [upd], ["i64"], "i64", dims, binary_region("add", "i64"))
    np.testing.assert_array_equal(got, reference.evaluate(module, x, idx, upd)[0])
    # The spec's first rows.
    np.testing.assert_array_equal(got[0, 0], [[3, 4], [6, 7], [6, 7], [7, 8]])


def test_index_vector_dim_in_the_middle():
    dims = Dims(
        update_window_dims=(2,),
        inserted_window_dims=(0, 1),
        scatter_dims_to_operand_dims=(1, 0),
        index_vector_dim=1,
    )
    x = np.zeros((4, 3, 2), np.float32)
    idx = np.array([[[0, 1, 3], [1, 2, 0]], [[2, 2, 5], [0, 3, 0]]], np.int32)  # [2, K=2, 3]
    upd = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2) + 1
    (got,) = run_scatter([x], idx, [upd], ["f32"], "i32", dims, binary_region("add", "f32"))
    (want,) = scatter_model([x], idx, [upd], np.add, dims)
    np.testing.assert_array_equal(got, want)
    module = scatter_module([x], idx, [upd], ["f32"], "i32", dims, binary_region("add", "f32"))
    np.testing.assert_array_equal(got, reference.evaluate(module, x, idx, upd)[0])


def test_index_vector_dim_equal_to_rank_is_an_implicit_trailing_one():
    dims = Dims(inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=2)
    x = np.zeros(5, np.int32)
    idx = np.array([[1, 4], [1, 7]], np.int16)
    upd = np.array([[10, 20], [30, 40]], np.int32)
    (got,) = run_scatter([x], idx, [upd], ["i32"], "i16", dims, binary_region("add", "i32"))
    np.testing.assert_array_equal(got, [0, 40, 0, 0, 20])


def test_no_index_vectors_returns_the_operand():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    idx = np.zeros((0, 1), np.int32)
    upd = np.zeros((0, 3), np.float32)
    (got,) = run_scatter([x], idx, [upd], ["f32"], "i32", ROWS, binary_region("add", "f32"))
    np.testing.assert_array_equal(got, x)


# -- variadic scatter ------------------------------------------------------------------


def test_variadic_scatter_region_sees_currents_then_updates():
    """Keep the (value, index) pair with the larger value: an argmax scatter."""
    region = """    %gt = stablehlo.compare GT, %upd0, %cur0 : (tensor<f32>, tensor<f32>)
        -> tensor<i1>
    %v = stablehlo.select %gt, %upd0, %cur0 : tensor<i1>, tensor<f32>
    %i = stablehlo.select %gt, %upd1, %cur1 : tensor<i1>, tensor<i32>
    stablehlo.return %v, %i : tensor<f32>, tensor<i32>"""
    values = np.full((3, 2), -1.0, np.float32)
    where = np.full((3, 2), -1, np.int32)
    idx = np.array([[0], [2], [0], [7], [2]], np.int32)
    upd_values = np.array([[1, 5], [2, 2], [3, 4], [9, 9], [0, 8]], np.float32)
    upd_where = np.arange(10, dtype=np.int32).reshape(5, 2)

    def argmax(cur_v, cur_i, upd_v, upd_i):
        return (upd_v, upd_i) if upd_v > cur_v else (cur_v, cur_i)

    operands, updates = [values, where], [upd_values, upd_where]
    got = run_scatter(operands, idx, updates, ["f32", "i32"], "i32", ROWS, region)
    want = scatter_model([values, where], idx, [upd_values, upd_where], argmax, ROWS)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[1], [[4, 1], [-1, -1], [2, 9]])


def test_variadic_scatter_single_elements_non_commutative():
    dims = Dims(inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    region = """    %a = stablehlo.subtract %cur0, %upd1 : tensor<i32>
    %b = stablehlo.multiply %cur1, %upd0 : tensor<i32>
    stablehlo.return %a, %b : tensor<i32>, tensor<i32>"""
    x0 = np.array([10, 20, 30], np.int32)
    x1 = np.array([1, 2, 3], np.int32)
    idx = np.array([[1], [1], [2], [3]], np.int32)
    u0 = np.array([2, 3, 4, 5], np.int32)
    u1 = np.array([5, 6, 7, 8], np.int32)
    got = run_scatter([x0, x1], idx, [u0, u1], ["i32", "i32"], "i32", dims, region)
    np.testing.assert_array_equal(got[0], [10, 9, 23])
    np.testing.assert_array_equal(got[1], [1, 12, 12])


# -- index and element types -----------------------------------------------------------


@pytest.mark.parametrize("index_elem", ["ui8", "ui32", "ui64"])
def test_unsigned_indices_stay_out_of_bounds(index_elem):
    dt = dtypes.to_numpy_dtype(index_elem)
    dims = Dims(inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    x = np.zeros(4, np.int32)
    idx = np.array([[np.iinfo(dt).max], [3], [np.iinfo(dt).max - 1], [0], [3]], dt)
    upd = np.array([100, 1, 200, 2, 3], np.int32)
    (got,) = run_scatter([x], idx, [upd], ["i32"], index_elem, dims, binary_region("add", "i32"))
    np.testing.assert_array_equal(got, [2, 0, 0, 4])


def test_bool_add_is_or_and_overwrite():
    x = np.array([[True, False], [False, False], [True, True]])
    idx = np.array([[0], [1], [1], [2]], np.int32)
    upd = np.array([[True, True], [True, False], [True, False], [False, False]])
    (got,) = run_scatter([x], idx, [upd], ["i1"], "i32", ROWS, binary_region("add", "i1"))
    np.testing.assert_array_equal(got, [[True, True], [True, False], [True, True]])
    (got,) = run_scatter([x], idx, [upd], ["i1"], "i32", ROWS, overwrite_region("i1"))
    np.testing.assert_array_equal(got, [[True, True], [True, False], [False, False]])


def test_bf16_add():
    bf16 = ml_dtypes.bfloat16
    x = np.array([[1.5, -2.0, 0.25], [8.0, 3.0, 1.0]], bf16)
    idx = np.array([[1], [0], [1]], np.int32)
    upd = np.array([[0.5, 0.5, 0.5], [1.0, 2.0, -0.25], [256.0, 1.0, 0.125]], bf16)
    (got,) = run_scatter([x], idx, [upd], ["bf16"], "i32", ROWS, binary_region("add", "bf16"))
    (want,) = scatter_model([x], idx, [upd], lambda a, b: bf16(float(a) + float(b)), ROWS)
    assert got.dtype == bf16
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


@pytest.mark.parametrize("op", ["add", "multiply"])
def test_complex(op):
    x = np.array([[1 + 2j, -1j], [3, 0.5 + 0.5j]], np.complex64)
    idx = np.array([[1], [0], [1], [2]], np.int32)
    upd = np.array([[2j, 1], [1 - 1j, 2 + 0j], [0.5, -3j], [7, 7]], np.complex64)
    region = binary_region(op, "complex<f32>")
    (got,) = run_scatter([x], idx, [upd], ["complex<f32>"], "i32", ROWS, region)
    (want,) = scatter_model([x], idx, [upd], COMBINERS[op], ROWS)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_region_in_promoted_type():
    """The region may compute in a wider type than the operand (spec: promotable)."""
    bf16 = ml_dtypes.bfloat16
    module = """func.func @main(%x: tensor<3xbf16>, %i: tensor<2x1xi32>, %u: tensor<2xbf16>)
    -> tensor<3xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<3xbf16>, tensor<2x1xi32>, tensor<2xbf16>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}"""
    x, upd = np.array([1, 2, 3], bf16), np.array([256, 1], bf16)
    got = xhlo.compile(module)(x, np.array([[1], [1]], np.int32), upd)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [1, 259, 3])  # 258 if accumulated in bf16


def test_scatter_inside_a_loop_body():
    """A scatter nested in a while body: x[i % 4] += 1 for i in 0..9."""
    module = """func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<4xi32>
  cond {
    %n = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %four = stablehlo.constant dense<4> : tensor<i32>
    %slot = stablehlo.remainder %i, %four : tensor<i32>
    %idx = stablehlo.reshape %slot : (tensor<i32>) -> tensor<1xi32>
    %s = "stablehlo.scatter"(%acc, %idx, %one) <{scatter_dimension_numbers = #stablehlo.scatter<
        inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>}> ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %t = stablehlo.add %a, %b : tensor<i32>
      stablehlo.return %t : tensor<i32>
    }) : (tensor<4xi32>, tensor<1xi32>, tensor<i32>) -> tensor<4xi32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %s : tensor<i32>, tensor<4xi32>
  }
  return %r#1 : tensor<4xi32>
}"""
    got = xhlo.compile(module)(np.array([100, 200, 300, 400], np.int32))
    np.testing.assert_array_equal(got, [103, 203, 302, 402])


def test_many_windows_large_operand():
    """A few thousand windows: checks the loop result, not only tiny shapes."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((300, 8)).astype(np.float32)
    idx = rng.integers(-10, 310, size=(3000, 1)).astype(np.int32)
    upd = rng.standard_normal((3000, 8)).astype(np.float32)
    (got,) = run_scatter([x], idx, [upd], ["f32"], "i32", ROWS, binary_region("maximum", "f32"))
    (want,) = scatter_model([x], idx, [upd], np.maximum, ROWS)
    np.testing.assert_array_equal(got, want)


def test_arguments_are_not_modified():
    x = np.zeros((3, 2), np.float32)
    idx = np.array([[1]], np.int32)
    upd = np.ones((1, 2), np.float32)
    module = scatter_module([x], idx, [upd], ["f32"], "i32", ROWS, binary_region("add", "f32"))
    got = xhlo.compile(module)(x, idx, upd)
    np.testing.assert_array_equal(got, [[0, 0], [1, 1], [0, 0]])
    np.testing.assert_array_equal(x, np.zeros((3, 2), np.float32))


def test_dynamic_shape_is_rejected():
    module = """func.func @main(%x: tensor<?x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>)
    -> tensor<?x3xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      update_window_dims = [1],
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<?x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}"""
    with pytest.raises(xhlo.CompilerError, match="only statically shaped scatter"):
        xhlo.compile(module)


def test_updates_broadcast_from_one_scalar():
    """A histogram: the updates broadcast one scalar, which each step uses directly;
    indices out of range (negative, past the end) are skipped as for any window."""
    rng = np.random.default_rng(5)
    idx = rng.integers(-3, 19, (1000, 1)).astype(np.int32)
    weight = np.float32(0.5)
    src = """func.func @main(%x: tensor<16xf32>, %i: tensor<1000x1xi32>, %w: tensor<f32>) -> tensor<16xf32> {
  %u = stablehlo.broadcast_in_dim %w, dims = [] : (tensor<f32>) -> tensor<1000xf32>
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<16xf32>, tensor<1000x1xi32>, tensor<1000xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}"""
    x = rng.standard_normal(16).astype(np.float32)
    exe = xhlo.compile(src)
    expected = x.astype(np.float64)
    inside = idx[:, 0][(idx[:, 0] >= 0) & (idx[:, 0] < 16)]
    np.add.at(expected, inside, 0.5)
    np.testing.assert_allclose(exe(x, idx, weight), expected, rtol=1e-6)
    loop = exe.ir("xhlo-stablehlo-prepare")
    assert "tensor<1000xf32>" not in loop.split("stablehlo.while")[1]  # no update tensor in the loop


def test_scatter_into_or_of_nothing_matches_jax():
    """Into an operand without elements (every window out of bounds, as XLA drops them) or
    with no updates: the result is the operand."""
    jax = pytest.importorskip("jax")
    from jax import export

    def f(empty, i, v, x, none, nothing):
        return empty.at[i].add(v), x.at[none].set(nothing)

    args = (np.zeros((0,), np.float32), np.array([0, 1], np.int32), np.ones(2, np.float32),
            np.arange(4, dtype=np.float32), np.zeros((0,), np.int32), np.zeros((0,), np.float32))
    got = xhlo.compile(export.export(jax.jit(f), platforms=["cpu"])(*args))(*args)
    for g, want in zip(got, jax.jit(f)(*args)):
        np.testing.assert_array_equal(g, np.asarray(want))

"""stablehlo.select_and_scatter expanded by xhlo-lower-select-and-scatter.

Oracles: a direct numpy transcription of the spec (loop over window positions in
row-major order, fold ``select`` over each window skipping padding, combine the
source value into the selected element with ``scatter``) and, where it can run,
StableHLO's reference interpreter.
"""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np
import pytest

import xhlo
from xhlo import reference

# The folds are compare/select chains on small static shapes, which LLVM's O3
# pipeline takes seconds to JIT (O2: a tenth of that). The spec example keeps the
# default level; the other cases compile at O2 to keep the suite quick.
FAST_JIT = {"opt_level": 2}

# -- numpy model of the spec ---------------------------------------------------------


def select_and_scatter_model(operand, source, init, window, strides, padding, select, scatter):
    """Spec semantics, one window position at a time (row-major)."""
    result = np.full(operand.shape, init, dtype=operand.dtype)
    for position in itertools.product(*(range(n) for n in source.shape)):
        selected = None
        for offset in itertools.product(*(range(w) for w in window)):
            index = tuple(
                p * s + o - lo for p, s, o, (lo, _) in zip(position, strides, offset, padding)
            )
            if not all(0 <= i < n for i, n in zip(index, operand.shape)):
                continue  # padding is never selected
            if selected is None or not select(operand[selected], operand[index]):
                selected = index
        if selected is not None:
            result[selected] = scatter(result[selected], source[position])
    return result


def source_shape(operand_shape, window, strides, padding):
    return tuple(
        (n + lo + hi - w) // s + 1
        for n, w, s, (lo, hi) in zip(operand_shape, window, strides, padding)
    )


# -- module text ---------------------------------------------------------------------

MLIR_TYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(np.float16): "f16",
    np.dtype(np.int8): "i8",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.bool_): "i1",
}


def compare_type(dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" and dtype != np.bool_:
        return "SIGNED" if dtype.kind == "i" else "UNSIGNED"
    return "UNSIGNED" if dtype == np.bool_ else "FLOAT"


def tensor(shape, elem: str) -> str:
    return "tensor<" + "".join(f"{n}x" for n in shape) + elem + ">"


def literal(value, elem: str) -> str:
    if elem == "i1":
        return "true" if value else "false"
    return repr(float(value)) if "f" in elem else str(int(value))


def module(
    operand_shape, src_shape, elem, window, strides, padding, select_body, scatter_body, init=0
) -> str:
    """``@main(operand, source)`` with a constant init and the given region bodies (%a, %b -> %r).

    (The reference interpreter rejects 0-d arguments, so init is a constant.)
    """
    scalar = tensor((), elem)
    attrs = [f"window_dimensions = array<i64: {', '.join(map(str, window))}>"]
    attrs.append(f"window_strides = array<i64: {', '.join(map(str, strides))}>")
    if padding is not None:
        rows = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
        attrs.append(f"padding = dense<[{rows}]> : tensor<{len(padding)}x2xi64>")
    operand_t, source_t = tensor(operand_shape, elem), tensor(src_shape, elem)
    return f"""func.func @main(%operand: {operand_t}, %source: {source_t}) -> {operand_t} {{
  %init = stablehlo.constant dense<{literal(init, elem)}> : {scalar}
  %result = "stablehlo.select_and_scatter"(%operand, %source, %init) ({{
    ^bb0(%a: {scalar}, %b: {scalar}):
      {select_body.format(t=scalar)}
      stablehlo.return %r : tensor<i1>
  }}, {{
    ^bb0(%a: {scalar}, %b: {scalar}):
      {scatter_body.format(t=scalar)}
      stablehlo.return %r : {scalar}
  }}) {{ {", ".join(attrs)} }} : ({operand_t}, {source_t}, {scalar}) -> {operand_t}
  return %result : {operand_t}
}}"""


def compare_body(direction: str, dtype) -> str:
    return f"%r = stablehlo.compare {direction}, %a, %b, {compare_type(dtype)} : ({{t}}, {{t}}) -> tensor<i1>"


ADD = "%r = stablehlo.add %a, %b : {t}"


def GE_PY(a, b):
    return a >= b


def ADD_PY(a, b):
    return a + b


def random_values(shape, dtype, rng, low=-8, high=8):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "u":
        return rng.integers(0, high, shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(low, high, shape).astype(dtype)
    # Small integers in float types: sums are exact, so any order gives the same result.
    return rng.integers(low, high, shape).astype(np.float64).astype(dtype)


def run_case(
    operand,
    source,
    init,
    window,
    strides,
    padding,
    select_py,
    scatter_py,
    select_body,
    scatter_body,
    use_reference=True,
    compile_options=FAST_JIT,
):
    pad_pairs = padding or [(0, 0)] * operand.ndim
    init = np.asarray(init, dtype=operand.dtype)[()]
    src = module(
        operand.shape,
        source.shape,
        MLIR_TYPES[operand.dtype],
        window,
        strides,
        padding,
        select_body,
        scatter_body,
        init,
    )
    got = xhlo.compile(src, **compile_options)(operand, source)
    expected = select_and_scatter_model(
        operand, source, init, window, strides, pad_pairs, select_py, scatter_py
    )
    np.testing.assert_array_equal(got, expected)
    if use_reference:
        (ref,) = reference.evaluate(src, operand, source)
        np.testing.assert_array_equal(got, ref)
    return got


# -- tests ---------------------------------------------------------------------------


def test_spec_example():
    operand = np.array([[1, 5], [2, 5], [3, 6], [4, 4]], np.int64)
    source = np.array([[5, 6], [7, 8]], np.int64)
    got = run_case(
        operand,
        source,
        0,
        [3, 1],
        [2, 1],
        [(0, 1), (0, 0)],
        GE_PY,
        ADD_PY,
        compare_body("GE", np.int64),
        ADD,
        compile_options={},
    )
    np.testing.assert_array_equal(got, [[0, 0], [0, 0], [5, 14], [7, 0]])


def test_seed_figure_overlap_selects_same_element_twice():
    """Two overlapping windows both select the 9: it receives 2 + 6."""
    operand = np.array(
        [[7, 2, 5, 3, 8], [3, 8, 9, 3, 4], [1, 5, 7, 5, 6], [0, 10, 2, 10, 2]], np.float32
    )
    source = np.array([[2, 6], [3, 1]], np.float32)
    got = run_case(
        operand, source, 0, [3, 3], [1, 2], None, GE_PY, ADD_PY, compare_body("GE", np.float32), ADD
    )
    assert got[1, 2] == 8
    assert got.sum() == source.sum()


@pytest.mark.parametrize(
    "operand_shape, window, strides, padding",
    [
        ((9,), [3], [1], [(1, 1)]),  # 1-D, overlapping, padded
        ((10,), [4], [3], [(2, 0)]),
        ((6, 7), [3, 3], [1, 1], [(1, 1), (1, 1)]),  # max-pool gradient, stride < window
        ((6, 7), [3, 3], [2, 2], [(1, 1), (1, 1)]),
        ((5, 6), [2, 3], [2, 3], None),  # non-overlapping, no padding
        ((5, 5), [3, 2], [1, 2], [(3, 0), (0, 2)]),  # some windows lie entirely in the padding
        ((7, 6), [2, 2], [1, 2], [(-1, 1), (0, -1)]),  # negative padding crops the operand
    ],
)
def test_max_pool_gradient(operand_shape, window, strides, padding):
    rng = np.random.default_rng(sum(operand_shape) + len(window))
    pad_pairs = padding or [(0, 0)] * len(operand_shape)
    operand = rng.standard_normal(operand_shape).astype(np.float32)
    source = rng.standard_normal(source_shape(operand_shape, window, strides, pad_pairs)).astype(
        np.float32
    )
    run_case(
        operand,
        source,
        0,
        window,
        strides,
        padding,
        GE_PY,
        ADD_PY,
        compare_body("GE", np.float32),
        ADD,
    )


def test_nhwc_4d_same_padding():
    rng = np.random.default_rng(4)
    shape, window, strides = (2, 7, 6, 3), [1, 3, 3, 1], [1, 2, 2, 1]
    padding = [(0, 0), (1, 1), (1, 1), (0, 0)]
    operand = rng.standard_normal(shape)
    source = rng.standard_normal(source_shape(shape, window, strides, padding))
    run_case(
        operand,
        source,
        0.0,
        window,
        strides,
        padding,
        GE_PY,
        ADD_PY,
        compare_body("GE", np.float64),
        ADD,
    )


@pytest.mark.parametrize(
    "dtype",
    [
        np.float32,
        np.float64,
        ml_dtypes.bfloat16,
        np.float16,
        np.int8,
        np.int32,
        np.int64,
        np.uint8,
        np.uint32,
    ],
)
def test_element_types(dtype):
    """Small integer values make ties frequent: GE must keep the first of equal elements."""
    rng = np.random.default_rng(7)
    shape, window, strides, padding = (5, 6), [2, 3], [1, 2], [(1, 0), (1, 1)]
    operand = random_values(shape, dtype, rng, -3, 3)
    source = random_values(source_shape(shape, window, strides, padding), dtype, rng, 0, 4)
    # The reference runner takes neither bfloat16 nor unsigned arguments.
    use_reference = np.dtype(dtype).kind in "if"
    run_case(
        operand,
        source,
        0,
        window,
        strides,
        padding,
        GE_PY,
        ADD_PY,
        compare_body("GE", dtype),
        ADD,
        use_reference=use_reference,
    )


def test_output_starts_at_init_value():
    """Init 100 is not add's identity: each element starts at 100 and adds its selected sources.

    The reference interpreter folds init into every contribution (it gives 330
    for the middle element), so the XLA semantics are checked against numpy only.
    """
    operand, source = np.array([1, 3, 2], np.int32), np.array([10, 20], np.int32)
    got = run_case(
        operand,
        source,
        100,
        [2],
        [1],
        None,
        GE_PY,
        ADD_PY,
        compare_body("GE", np.int32),
        ADD,
        use_reference=False,
    )
    np.testing.assert_array_equal(got, [100, 130, 100])


def test_bool_or():
    rng = np.random.default_rng(3)
    shape, window, strides = (2, 4, 6), [2, 2, 2], [1, 1, 1]
    operand = random_values(shape, np.bool_, rng)
    source = random_values(source_shape(shape, window, strides, [(0, 0)] * 3), np.bool_, rng)
    run_case(
        operand,
        source,
        False,
        window,
        strides,
        None,
        GE_PY,
        lambda a, b: a | b,
        compare_body("GE", np.bool_),
        "%r = stablehlo.or %a, %b : {t}",
    )


@pytest.mark.parametrize(
    "direction, select_py", [("GT", lambda a, b: a > b), ("LE", lambda a, b: a <= b)]
)
def test_tie_breaking_and_min_selection(direction, select_py):
    """GT lets a later equal element win; LE selects the minimum (first of equals)."""
    operand = np.array([[1, 1, 2, 2], [1, 0, 2, 0], [3, 3, 0, 3]], np.int32)
    source = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    run_case(
        operand,
        source,
        0,
        [2, 2],
        [1, 1],
        None,
        select_py,
        ADD_PY,
        compare_body(direction, np.int32),
        ADD,
    )


def test_order_sensitive_scatter():
    """scatter(a, b) = 2a + b depends on the order of the overlapping windows."""
    rng = np.random.default_rng(11)
    operand = rng.integers(0, 3, (7, 6)).astype(np.int64)
    window, strides, padding = [3, 3], [1, 1], [(1, 1), (1, 1)]
    source = rng.integers(1, 9, source_shape(operand.shape, window, strides, padding)).astype(
        np.int64
    )
    body = "%two = stablehlo.add %a, %a : {t}\n      %r = stablehlo.add %two, %b : {t}"
    run_case(
        operand,
        source,
        1,
        window,
        strides,
        padding,
        GE_PY,
        lambda a, b: 2 * a + b,
        compare_body("GE", np.int64),
        body,
        use_reference=False,
    )


@pytest.mark.parametrize(
    "operand_shape, window, strides, padding",
    [
        ((40,), [20], [3], [(5, 4)]),  # 20 > unroll limit: stablehlo.while loops
        ((9, 8), [5, 5], [2, 1], [(2, 2), (0, 1)]),
        ((30,), [17], [2], [(-2, -3)]),
    ],
)
def test_large_windows_use_loops(operand_shape, window, strides, padding):
    rng = np.random.default_rng(5)
    operand = rng.integers(-5, 5, operand_shape).astype(np.int32)
    source = rng.integers(1, 9, source_shape(operand_shape, window, strides, padding)).astype(
        np.int32
    )
    body = "%two = stablehlo.add %a, %a : {t}\n      %r = stablehlo.add %two, %b : {t}"
    src = module(
        operand_shape,
        source.shape,
        "i32",
        window,
        strides,
        padding,
        compare_body("GE", np.int32),
        body,
    )
    exe = xhlo.compile(src, **FAST_JIT)
    assert "stablehlo.while" in exe.ir("xhlo-stablehlo-prepare")
    got = exe(operand, source)
    expected = select_and_scatter_model(
        operand, source, 0, window, strides, padding, GE_PY, lambda a, b: 2 * a + b
    )
    np.testing.assert_array_equal(got, expected)


def test_zero_size_operand():
    src = module(
        (0, 3), (0, 2), "f32", [1, 2], [1, 1], None, compare_body("GE", np.float32), ADD, 5.0
    )
    got = xhlo.compile(src, **FAST_JIT)(np.zeros((0, 3), np.float32), np.zeros((0, 2), np.float32))
    assert got.shape == (0, 3)


def test_window_larger_than_operand_scatters_nothing():
    """Source dims of size 0: the result is init everywhere."""
    src = module(
        (2, 3), (0, 1), "f32", [3, 3], [1, 1], None, compare_body("GE", np.float32), ADD, 5.0
    )
    got = xhlo.compile(src, **FAST_JIT)(np.ones((2, 3), np.float32), np.zeros((0, 1), np.float32))
    np.testing.assert_array_equal(got, np.full((2, 3), 5, np.float32))


def test_all_window_positions_are_expanded():
    """No select_and_scatter is left for the linalg lowering."""
    src = module((4, 4), (2, 2), "f32", [2, 2], [2, 2], None, compare_body("GE", np.float32), ADD)
    prepared = xhlo.compile(src, **FAST_JIT).ir("xhlo-stablehlo-prepare")
    assert "select_and_scatter" not in prepared
    assert math.prod([2, 2]) == prepared.count("stablehlo.compare EQ")

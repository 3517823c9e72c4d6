"""xhlo-split-reductions: large reductions to few outputs, against numpy.

Integer results must be exact. Float sums are reassociated (rows of partial
sums), so they are compared with a float64 sum within a bound on f32 rounding;
max/min are exact. The init value enters once: a non-identity init checks that.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

RNG = np.random.default_rng(5)
ELEM = {np.float32: "f32", np.float64: "f64", np.int32: "i32", np.int64: "i64", np.uint8: "ui8"}
NUMPY = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
         "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _t(shape, dtype) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{ELEM[dtype]}>"


def reduce_module(shape, dims, dtype, op: str) -> str:
    out = [n for d, n in enumerate(shape) if d not in dims]
    t, r, s = _t(shape, dtype), _t(out, dtype), _t((), dtype)
    return f"""func.func @main(%x: {t}, %init: {s}) -> {r} {{
  %0 = stablehlo.reduce(%x init: %init) applies stablehlo.{op} across dimensions = {list(dims)} : ({t}, {s}) -> {r}
  return %0 : {r}
}}"""


def _compile_split(src: str):
    exe = xhlo.compile(src)
    assert exe.ir("xhlo-stablehlo-prepare").count("stablehlo.reduce(") == 2, "not split"
    return exe


def _sample(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return RNG.uniform(-1, 1, shape).astype(dtype)
    return RNG.integers(0, 200, shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dims", [((1 << 20,), [0]), ((512, 1024), [0, 1]), ((3, 1, 2, 65536), [2, 3])])
def test_float_sum(shape, dims, dtype):
    exe = _compile_split(reduce_module(shape, dims, dtype, "add"))
    x, init = _sample(shape, dtype), np.asarray(1.5, dtype)
    got = exe(x, init)
    exact = x.astype(np.float64).sum(axis=tuple(dims)) + 1.5
    bound = np.finfo(dtype).eps * np.abs(x).astype(np.float64).sum(axis=tuple(dims)) * 4
    assert np.all(np.abs(got - exact) <= bound)


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_float_max_min_are_exact_and_see_nan(op):
    shape = (2, 1 << 19)
    exe = _compile_split(reduce_module(shape, [1], np.float32, op))
    x = _sample(shape, np.float32)
    init = np.float32(0.25)
    np.testing.assert_array_equal(exe(x, init), NUMPY[op](NUMPY[op].reduce(x, axis=1), init))
    x[1, 377_777] = np.nan
    assert np.isnan(exe(x, init)[1]) and not np.isnan(exe(x, init)[0])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("op", ["add", "multiply", "maximum", "minimum", "and", "or", "xor"])
def test_integer_reductions_are_exact(dtype, op):
    shape = (1 << 18,)
    exe = _compile_split(reduce_module(shape, [0], dtype, op))
    x = _sample(shape, dtype)
    init = np.asarray(77, dtype)
    expected = NUMPY[op](NUMPY[op].reduce(x, dtype=dtype), init).astype(dtype)  # wraps like the program
    np.testing.assert_array_equal(exe(x, init), expected)


def test_small_reductions_and_many_outputs_are_left_alone():
    for src in (reduce_module((1000,), [0], np.float32, "add"),
                reduce_module((256, 4096), [1], np.float32, "add")):
        assert xhlo.compile(src).ir("xhlo-stablehlo-prepare").count("stablehlo.reduce(") == 1

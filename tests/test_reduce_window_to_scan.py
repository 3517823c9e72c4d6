"""xhlo-reduce-window-to-scan: cumulative reductions as JAX exports them, against numpy.

Each module is the ``reduce_window`` JAX writes for ``cumsum``/``cumprod``/
``cummax``/``cummin`` (window = the whole axis, padding before it, or after it
when reversed, init = the reducer's identity). Windows that are not such
prefixes, or whose init is not an identity, must keep the window lowering:
those are checked against the StableHLO reference interpreter.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import xhlo
from xhlo import reference
from xhlo.passes.reduce_window_to_scan import EXACT_SUFFIX_MAX, HALF_WINDOW_MAX

RNG = np.random.default_rng(77)
ELEM = {np.float32: "f32", np.float64: "f64", np.int32: "i32", np.int8: "i8", np.uint8: "ui8",
        np.int64: "i64", np.bool_: "i1", ml_dtypes.bfloat16: "bf16", np.float16: "f16"}
REDUCERS = {"add": np.cumsum, "multiply": np.cumprod, "maximum": np.maximum.accumulate,
            "minimum": np.minimum.accumulate}


def _t(shape, dtype) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{ELEM[dtype]}>"


def window_module(shape, dtype, dim: int, op: str, init: str, reverse=False, window=None, pad=None) -> str:
    n = shape[dim]
    w = window or n
    windows = [w if i == dim else 1 for i in range(len(shape))]
    before, after = pad or ((0, w - 1) if reverse else (w - 1, 0))
    padding = [[before, after] if i == dim else [0, 0] for i in range(len(shape))]
    t, s = _t(shape, dtype), _t((), dtype)
    return f"""func.func @main(%x: {t}) -> {t} {{
  %init = stablehlo.constant dense<{init}> : {s}
  %0 = "stablehlo.reduce_window"(%x, %init) <{{padding = dense<{padding}> : tensor<{len(shape)}x2xi64>,
        window_dimensions = array<i64: {', '.join(map(str, windows))}>}}> ({{
  ^bb0(%a: {s}, %b: {s}):
    %r = stablehlo.{op} %a, %b : {s}
    stablehlo.return %r : {s}
  }}) : ({t}, {s}) -> {t}
  return %0 : {t}
}}"""


def _expected(x, dim, op, reverse):
    fn = REDUCERS[op]
    if reverse:
        return np.flip(fn(np.flip(x, dim), axis=dim), dim)
    return fn(x, axis=dim)


def _scanned(exe) -> bool:
    return "reduce_window" not in exe.ir("xhlo-stablehlo-prepare")


@pytest.mark.parametrize(
    "shape,dim",
    [((1000,), 0), ((7, 5), 0), ((3, 9), 1), ((2, 3, 4), 1), ((4, 1, 6), 2),
     # slab by slab (ROW_SCAN_MIN elements or more after the axis)
     ((40, 16), 0), ((3, 20, 9), 1), ((5, 2, 4, 3), 0)],
)
@pytest.mark.parametrize("reverse", [False, True])
def test_float_cumsum(shape, dim, reverse):
    x = RNG.uniform(-1, 1, shape).astype(np.float32)
    exe = xhlo.compile(window_module(shape, np.float32, dim, "add", "0.0", reverse))
    assert _scanned(exe) == (not reverse or shape[dim] > EXACT_SUFFIX_MAX)
    np.testing.assert_allclose(exe(x), _expected(x.astype(np.float64), dim, "add", reverse), atol=1e-4)


def test_short_float_suffix_windows_fold_in_window_order():
    """Window i is ((x[i] + x[i + 1]) + x[i + 2]) + ...: bitwise that, in float32 (a
    reverse scan would add the other way round and differ in the last bits)."""
    x = RNG.uniform(-1, 1, (64, EXACT_SUFFIX_MAX)).astype(np.float32) * np.float32(1e3)
    exe = xhlo.compile(window_module(x.shape, np.float32, 1, "add", "0.0", reverse=True))
    want = np.zeros_like(x)
    for i in range(x.shape[1]):
        acc = x[:, i].copy()
        for j in range(i + 1, x.shape[1]):
            acc = acc + x[:, j]
        want[:, i] = acc
    np.testing.assert_array_equal(exe(x), want)


@pytest.mark.parametrize(
    "dtype,op,init",
    [(np.int32, "add", "0"), (np.int32, "multiply", "1"), (np.int8, "maximum", "-128"), (np.uint8, "minimum", "255"),
     (np.float64, "maximum", "0xFFF0000000000000"), (np.float32, "minimum", "0x7F800000"), (np.int64, "add", "0"),
     (np.float32, "multiply", "1.0")],
)
def test_other_reducers_and_types(dtype, op, init):
    shape, dim = (6, 11), 1
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        x = RNG.integers(max(info.min, -3), min(info.max, 4), shape).astype(dtype)
    else:
        x = RNG.uniform(0.5, 1.5, shape).astype(dtype)
    exe = xhlo.compile(window_module(shape, dtype, dim, op, init))
    assert _scanned(exe)
    expected = _expected(x, dim, op, False).astype(dtype)
    np.testing.assert_allclose(exe(x), expected, rtol=1e-6)


def test_boolean_or_scan():
    x = RNG.random((5, 8)) < 0.2
    exe = xhlo.compile(window_module((5, 8), np.bool_, 1, "or", "false"))
    assert _scanned(exe)
    np.testing.assert_array_equal(exe(x), np.logical_or.accumulate(x, axis=1))


def test_nan_propagates_through_cummax():
    x = np.array([1.0, 3.0, np.nan, 2.0, 5.0], np.float32)
    got = xhlo.compile(window_module((5,), np.float32, 0, "maximum", "0xFF800000"))(x)
    np.testing.assert_array_equal(got[:2], [1.0, 3.0])
    assert np.isnan(got[2:]).all()


@pytest.mark.parametrize(
    "kwargs",
    [{"init": "1.0"},  # not the identity of add: padding adds ones
     {"init": "0.0", "window": 3, "pad": (2, 0)},  # a sliding window, not a prefix
     {"init": "0.0", "window": 8, "pad": (2, 5)}],  # padding split on both sides
)
def test_other_windows_keep_the_window_lowering(kwargs):
    shape = (6,)
    module = window_module(shape, np.float32, 0, "add", kwargs.pop("init"), **kwargs)
    x = RNG.uniform(-1, 1, shape).astype(np.float32)
    exe = xhlo.compile(module)
    assert not _scanned(exe)
    (expected,) = reference.evaluate(module, x)
    np.testing.assert_allclose(exe(x), expected, rtol=1e-6)


def test_a_million_elements_scan_in_linear_time():
    """The literal lowering would add 5e11 numbers; the scan adds one per element."""
    x = RNG.uniform(0, 1, 2**20).astype(np.float32)
    exe = xhlo.compile(window_module(x.shape, np.float32, 0, "add", "0.0"))
    got = exe(x)
    np.testing.assert_allclose(got, np.cumsum(x, dtype=np.float64), rtol=1e-4)


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
@pytest.mark.parametrize("shape,dim", [((2**20,), 0), ((400, 16), 0)])
def test_half_float_scans_accumulate_in_f32(dtype, shape, dim):
    """A bf16/f16 cumsum of a million elements scans too (the window lowering had not
    finished in 60 s), its running sum in f32 and each result rounded, as XLA:CPU does:
    bit for bit numpy's f32 accumulation, rounded. (In bf16 itself the sum of values in
    [0, 1) stops growing near 256.)"""
    x = RNG.uniform(0, 0.05 if dtype is np.float16 else 1, shape).astype(dtype)  # f16 sums below 65504
    exe = xhlo.compile(window_module(shape, dtype, dim, "add", "0.0"), keep_ir=True)
    assert _scanned(exe)
    expected = np.cumsum(x.astype(np.float32), axis=dim, dtype=np.float32).astype(dtype)
    np.testing.assert_array_equal(exe(x).view(np.uint16), expected.view(np.uint16))


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
def test_short_half_float_windows_round_every_step(dtype):
    """Up to HALF_WINDOW_MAX elements a bf16/f16 window keeps its lowering: sums rounded
    at every step, bit for bit numpy's accumulation in the same type (and XLA:CPU's)."""
    x = RNG.uniform(0, 4, (9, HALF_WINDOW_MAX)).astype(dtype)
    exe = xhlo.compile(window_module(x.shape, dtype, 1, "add", "0.0"), keep_ir=True)
    assert not _scanned(exe)
    np.testing.assert_array_equal(exe(x).view(np.uint16), np.cumsum(x, axis=1, dtype=dtype).view(np.uint16))


@pytest.mark.parametrize("dtype,op,init", [(np.int32, "add", "0"), (np.uint8, "maximum", "0"), (np.bool_, "xor", "false")])
def test_slab_scan_of_integers(dtype, op, init):
    shape, dim = (9, 4, 5), 0
    x = (RNG.random(shape) < 0.5) if dtype is np.bool_ else RNG.integers(0, 7, shape).astype(dtype)
    exe = xhlo.compile(window_module(shape, dtype, dim, op, init))
    assert _scanned(exe)
    if dtype is np.bool_:
        expected = np.logical_xor.accumulate(x, axis=dim)
    else:
        expected = _expected(x, dim, op, False).astype(dtype)
    np.testing.assert_array_equal(exe(x), expected)
    assert "stablehlo.dynamic_update_slice" in exe.ir("xhlo-stablehlo-prepare")  # whole slabs per step



def logaddexp_module(shape, dim: int, init: str = "0xFF800000", reverse=False) -> str:
    """JAX's ``cumlogsumexp``: a prefix window whose body is log-add-exp, from -inf."""
    n, t, s = shape[dim], _t(shape, np.float32), _t((), np.float32)
    windows = [n if i == dim else 1 for i in range(len(shape))]
    padding = [([0, n - 1] if reverse else [n - 1, 0]) if i == dim else [0, 0] for i in range(len(shape))]
    return f"""func.func @main(%x: {t}) -> {t} {{
  %init = stablehlo.constant dense<{init}> : {s}
  %0 = "stablehlo.reduce_window"(%x, %init) <{{padding = dense<{padding}> : tensor<{len(shape)}x2xi64>,
        window_dimensions = array<i64: {', '.join(map(str, windows))}>}}> ({{
  ^bb0(%a: {s}, %b: {s}):
    %m = stablehlo.maximum %a, %b : {s}
    %d = stablehlo.subtract %a, %b : {s}
    %isnan = stablehlo.compare NE, %d, %d, FLOAT : ({s}, {s}) -> tensor<i1>
    %sum = stablehlo.add %a, %b : {s}
    %abs = stablehlo.abs %d : {s}
    %neg = stablehlo.negate %abs : {s}
    %e = stablehlo.exponential %neg : {s}
    %l = stablehlo.log_plus_one %e : {s}
    %r0 = stablehlo.add %m, %l : {s}
    %r = stablehlo.select %isnan, %sum, %r0 : tensor<i1>, {s}
    stablehlo.return %r : {s}
  }}) : ({t}, {s}) -> {t}
  return %0 : {t}
}}"""


@pytest.mark.parametrize("shape,dim,reverse", [((300,), 0, False), ((6, 50), 1, True), ((40, 16), 0, False)])
def test_log_add_exp_scan(shape, dim, reverse):
    """A body that is no single op scans when body(init, init) folds to init: -inf here."""
    x = RNG.standard_normal(shape).astype(np.float32) * 3
    exe = xhlo.compile(logaddexp_module(shape, dim, reverse=reverse))
    assert _scanned(exe)
    flip = (lambda a: np.flip(a, dim)) if reverse else (lambda a: a)
    expected = flip(np.logaddexp.accumulate(flip(x.astype(np.float64)), axis=dim))
    np.testing.assert_allclose(exe(x), expected, rtol=1e-5, atol=1e-5)


def test_a_body_that_padding_changes_keeps_the_window_lowering():
    """From init 0.0, log-add-exp of two paddings is log 2, not 0: every window counts them."""
    module = logaddexp_module((6,), 0, init="0.0")
    x = RNG.standard_normal(6).astype(np.float32)
    exe = xhlo.compile(module)
    assert not _scanned(exe)
    (expected,) = reference.evaluate(module, x)
    np.testing.assert_allclose(exe(x), expected, rtol=1e-6)

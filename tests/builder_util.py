"""Helpers of the builder tests: build a computation from a Python function of
parameters, compile it with xhlo, and run it (or the reference interpreter)."""

from __future__ import annotations

import numpy as np

import xhlo
from xhlo import builder as xb
from xhlo import reference

ops = xb.ops


def shape_of(array) -> xb.Shape:
    array = np.asarray(array)
    return xb.Shape.array_shape(array.dtype, array.shape)


def build(fn, *shapes, name: str = "test") -> xb.XlaComputation:
    """``fn(*parameters)`` as a computation; ``shapes`` are Shapes or example arrays."""
    b = xb.XlaBuilder(name)
    params = [
        ops.Parameter(b, i, s if isinstance(s, xb.Shape) else shape_of(s))
        for i, s in enumerate(shapes)
    ]
    with b:
        root = fn(*params)
    return b.build(root)


def as_tuple(result) -> tuple:
    return result if isinstance(result, tuple) else (result,)


def run(fn, *args, **compile_options) -> tuple[np.ndarray, ...]:
    """Compile ``fn`` for the argument shapes with xhlo and run it on ``args``."""
    args = [np.asarray(a) for a in args]
    comp = build(fn, *args)
    exe = xhlo.compile(comp, **compile_options)
    return as_tuple(exe(*args))


def run_reference(fn, *args) -> tuple[np.ndarray, ...]:
    """The StableHLO reference interpreter's results for what the builder emits."""
    args = [np.asarray(a) for a in args]
    return reference.evaluate(build(fn, *args).as_stablehlo_text(), *args)


def assert_close(actual, expected, rtol=1e-6, atol=1e-6) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if actual.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)

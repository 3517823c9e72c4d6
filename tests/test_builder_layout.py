"""Non-default parameter and result layouts: the compiled entry takes and
returns physical buffers (SEMANTICS 3.7), checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import xhlo
from xhlo import builder as xb

from .builder_util import ops

RNG = np.random.default_rng(5)


def compile_with(param_shapes, fn, result_layout=None):
    b = xb.XlaBuilder("layout")
    params = [ops.Parameter(b, i, s) for i, s in enumerate(param_shapes)]
    with b:
        root = fn(*params)
    comp = b.build(root, result_layout=result_layout)
    return comp, xhlo.compile(comp)


def test_column_major_parameter_and_result():
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    y = RNG.standard_normal((5, 2)).astype(np.float32)
    col = xb.Shape.parse("f32[3,5]{0,1}")
    comp, exe = compile_with(
        [col, xb.Shape.parse("f32[5,2]")], lambda a, b: a @ b, xb.Shape.parse("f32[3,2]{0,1}")
    )
    assert (
        "func.func @main(%arg0: tensor<5x3xf32>, %arg1: tensor<5x2xf32>) -> tensor<2x3xf32>"
        in comp.as_stablehlo_text()
    )
    got = exe(np.asfortranarray(x).T.copy(), y)  # the buffer of a column-major x is x.T in C order
    np.testing.assert_allclose(got, (x @ y).T, rtol=1e-5)
    np.testing.assert_allclose(
        xb.from_physical(got, xb.Shape.parse("f32[3,2]{0,1}")), x @ y, rtol=1e-5
    )


def test_tiled_parameter_and_result():
    """f32[3,5]{1,0:T(2,2)} in, doubled, out in the same tiled layout."""
    x = (np.arange(15, dtype=np.float32) + 1).reshape(3, 5)
    tiled = xb.Shape.parse("f32[3,5]{1,0:T(2,2)}")
    comp, exe = compile_with([tiled], lambda a: a * 2.0, tiled)
    assert "tensor<2x3x2x2xf32>" in comp.as_stablehlo_text()
    buffer = np.zeros((4, 6), np.float32)  # pad + reshape + transpose by hand (seed 002)
    buffer[:3, :5] = x
    buffer = buffer.reshape(2, 2, 3, 2).transpose(0, 2, 1, 3)
    got = exe(buffer)
    assert got.shape == (2, 3, 2, 2)
    assert got.ravel()[17] == 2 * x[2, 3]  # linear index 17 of element (2, 3)
    np.testing.assert_array_equal(xb.from_physical(got, tiled), 2 * x)
    mask = xb.to_physical(np.ones((3, 5), np.float32), tiled) == 1  # padding content is unspecified
    np.testing.assert_array_equal(got[mask], buffer[mask] * 2)


def test_tiled_input_to_default_output():
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    tiled = xb.Shape.parse("f32[3,5]{1,0:T(2,2)}")
    _, exe = compile_with([tiled], lambda a: ops.Reduce(a, np.float32(0), lambda p, q: p + q, [1]))
    np.testing.assert_allclose(exe(xb.to_physical(x, tiled)), x.sum(1), rtol=1e-5)


@pytest.mark.parametrize(
    "text",
    [
        "f32[4,8]{1,0:T(2,4)(2,1)}",
        "f32[2,3,4]{0,2,1:T(2,2)}",
        "f32[2,7,8,5]{3,2,1,0:T(*,*,2,3)}",
        "s32[5,3]{0,1:T(4)}",
        "f32[2,3]{0,1:P(3,5)}",
    ],
)
def test_layout_round_trip_through_the_executable(text):
    """Identity computations convert physical -> logical -> physical; add one to
    see the data really went through the logical form."""
    shape = xb.Shape.parse(text)
    x = RNG.integers(-100, 100, shape.dimensions()).astype(shape.numpy_dtype())
    _, exe = compile_with(
        [shape],
        lambda a: [
            a + ops.Constant(np.ones((), a.dtype)),
            ops.Transpose(a, list(range(a.ndim))[::-1]),
        ],
        [shape, None],
    )
    plus_one, transposed = exe(xb.to_physical(x, shape))
    np.testing.assert_array_equal(xb.from_physical(plus_one, shape), x + 1)
    np.testing.assert_array_equal(transposed, x.T)


def test_tuple_parameter_with_layouts():
    pair = xb.Shape.parse("(f32[2,3]{0,1}, f32[3])")
    x, v = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    _, exe = compile_with([pair], lambda t: ops.Add(t[0], t[1], (1,)))
    np.testing.assert_allclose(exe(x.T.copy(), v), x + v, rtol=1e-6)


def test_result_layout_errors():
    b = xb.XlaBuilder("e")
    x = ops.Parameter(b, 0, xb.Shape.parse("f32[3,5]"))
    with pytest.raises(ValueError, match="does not match the result"):
        b.build(x, result_layout=xb.Shape.parse("f32[5,3]{0,1}"))
    with pytest.raises(ValueError, match="permutation"):
        b.build(x, result_layout=[0, 0])

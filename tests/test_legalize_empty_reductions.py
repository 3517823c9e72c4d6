"""reduce over no dimensions, or over unit dimensions only: the body applied once per element."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xhlo

VARIADIC = """func.func @main(%x: tensor<3x4xf32>, %i: tensor<3x4xi32>) -> (tensor<3x4xf32>, tensor<3x4xi32>) {
  %init = stablehlo.constant dense<1.5> : tensor<f32>
  %init_i = stablehlo.constant dense<-1> : tensor<i32>
  %0:2 = stablehlo.reduce(%x init: %init), (%i init: %init_i) across dimensions = [] :
      (tensor<3x4xf32>, tensor<3x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<3x4xf32>, tensor<3x4xi32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>) {
      %gt = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %v = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
      %k = stablehlo.select %gt, %ai, %bi : tensor<i1>, tensor<i32>
      stablehlo.return %v, %k : tensor<f32>, tensor<i32>
    }
  return %0#0, %0#1 : tensor<3x4xf32>, tensor<3x4xi32>
}"""


def test_variadic_body_applied_to_init_and_element():
    x = np.linspace(-1, 3, 12, dtype=np.float32).reshape(3, 4)
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    values, indices = xhlo.compile(VARIADIC)(x, i)
    np.testing.assert_array_equal(values, np.maximum(x, 1.5))
    np.testing.assert_array_equal(indices, np.where(1.5 > x, -1, i))


def test_jnp_unique_matches_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import export

    a = np.random.default_rng(0).integers(-5, 5, (6, 7)).astype(np.int32)

    def f(v):
        return jnp.unique(v, size=12, fill_value=99)

    exported = export.export(jax.jit(f), platforms=["cpu"])(a)
    assert "across dimensions = []" in exported.mlir_module()
    np.testing.assert_array_equal(xhlo.compile(exported)(a), np.asarray(jax.jit(f)(a)))


UNIT_DIMENSIONS = """func.func @main(%x: tensor<5x1x7x1xf32>, %i: tensor<5x1x7x1xi32>) -> (tensor<5x7xf32>, tensor<5x7xi32>, tensor<5x7xf32>) {
  %init = stablehlo.constant dense<1.5> : tensor<f32>
  %init_i = stablehlo.constant dense<-1> : tensor<i32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0:2 = stablehlo.reduce(%x init: %init), (%i init: %init_i) across dimensions = [1, 3] :
      (tensor<5x1x7x1xf32>, tensor<5x1x7x1xi32>, tensor<f32>, tensor<i32>) -> (tensor<5x7xf32>, tensor<5x7xi32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>) {
      %gt = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %v = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
      %k = stablehlo.select %gt, %ai, %bi : tensor<i1>, tensor<i32>
      stablehlo.return %v, %k : tensor<f32>, tensor<i32>
    }
  %1 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<5x1x7x1xf32>, tensor<f32>) -> tensor<5x1x7xf32>
  %2 = stablehlo.reshape %1 : (tensor<5x1x7xf32>) -> tensor<5x7xf32>
  return %0#0, %0#1, %2 : tensor<5x7xf32>, tensor<5x7xi32>, tensor<5x7xf32>
}"""


def test_unit_dimensions_reduce_elementwise():
    """The body combines the init with the one element: a sum from +0.0 of -0.0 is +0.0."""
    x = np.linspace(-1, 3, 35, dtype=np.float32).reshape(5, 1, 7, 1)
    x[0, 0, 0, 0] = -0.0
    i = np.arange(35, dtype=np.int32).reshape(5, 1, 7, 1)
    exe = xhlo.compile(UNIT_DIMENSIONS)
    assert "stablehlo.reduce" not in exe.ir("xhlo-stablehlo-prepare")
    values, indices, sums = exe(x, i)
    flat_x, flat_i = x.reshape(5, 7), i.reshape(5, 7)
    np.testing.assert_array_equal(values, np.maximum(flat_x, 1.5))
    np.testing.assert_array_equal(indices, np.where(1.5 > flat_x, -1, flat_i))
    np.testing.assert_array_equal(sums, flat_x + np.float32(0.0))
    assert not np.signbit(sums[0, 0])


def test_take_along_axis_fill_mode_matches_jax():
    """JAX checks a gather's index vectors with an ``and`` over their unit dimension."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import export

    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 256)).astype(np.float32)
    idx = rng.integers(-300, 300, (64, 256)).astype(np.int32)  # out of range: NaN

    def f(x, i):
        return jnp.take_along_axis(x, i, 1, mode="fill")

    exported = export.export(jax.jit(f), platforms=["cpu"])(x, idx)
    np.testing.assert_array_equal(xhlo.compile(exported)(x, idx), np.asarray(jax.jit(f)(x, idx)))


@pytest.mark.parametrize("shape,axis", [((0, 3), 0), ((4, 0, 2), (1, 2)), ((0,), None), ((0, 5), 1)])
def test_reductions_of_no_elements_match_numpy(shape, axis):
    """sum, prod, max(initial=), any and all of empty arrays are their init values (numpy's
    identities); a reduction over a longer axis of an empty array is empty."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import export

    x = np.zeros(shape, np.float32)

    def f(x):
        return (jnp.sum(x, axis), jnp.prod(x, axis), jnp.max(x, axis, initial=-2.5),
                jnp.any(x > 0, axis), jnp.all(x > 0, axis), jnp.mean(x, axis))

    exe = xhlo.compile(export.export(jax.jit(f), platforms=["cpu"])(x))
    with warnings.catch_warnings():  # numpy warns of the mean of nothing (NaN), as it should
        warnings.simplefilter("ignore", RuntimeWarning)
        want = (np.sum(x, axis), np.prod(x, axis), np.max(x, axis, initial=-2.5),
                np.any(x > 0, axis), np.all(x > 0, axis), np.mean(x, axis))
    for got, expected in zip(exe(x), want):
        np.testing.assert_array_equal(got, expected)

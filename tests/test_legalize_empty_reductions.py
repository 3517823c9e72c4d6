"""reduce over no dimensions: the body applied once per element (``jnp.unique`` exports it)."""

from __future__ import annotations

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

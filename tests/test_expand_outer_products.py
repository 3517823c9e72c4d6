"""xhlo-expand-outer-products: dot_general without contracting dimensions, against numpy's einsum."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import xhlo

RNG = np.random.default_rng(8)
ELEM = {np.float32: "f32", np.int8: "i8", np.int32: "i32", np.complex64: "complex<f32>",
        ml_dtypes.bfloat16: "bf16"}


def _t(shape, dtype) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{ELEM[dtype]}>"


def _random(shape, dtype) -> np.ndarray:
    if dtype == np.complex64:
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    if dtype == np.int8:
        return RNG.integers(-128, 128, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


# (lhs shape, rhs shape, lhs batch dims, rhs batch dims, einsum of the spec's result order)
CASES = [
    ((37,), (29,), [], [], "i,j->ij"),
    ((6, 40), (40, 5), [1], [0], "ib,bj->bij"),
    ((3, 7, 4), (4, 9, 3), [2, 0], [0, 2], "aib,bja->baij"),
]


def outer_module(lhs_shape, rhs_shape, lhs_batch, rhs_batch, dtype, result_dtype, out_shape) -> str:
    return f"""func.func @main(%a: {_t(lhs_shape, dtype)}, %b: {_t(rhs_shape, dtype)}) -> {_t(out_shape, result_dtype)} {{
  %0 = stablehlo.dot_general %a, %b, batching_dims = {lhs_batch} x {rhs_batch}, contracting_dims = [] x []
      : ({_t(lhs_shape, dtype)}, {_t(rhs_shape, dtype)}) -> {_t(out_shape, result_dtype)}
  return %0 : {_t(out_shape, result_dtype)}
}}"""


@pytest.mark.parametrize("lhs_shape, rhs_shape, lhs_batch, rhs_batch, spec", CASES)
@pytest.mark.parametrize("dtype, result_dtype", [(np.float32, np.float32), (np.int8, np.int32),
                                                 (np.complex64, np.complex64), (ml_dtypes.bfloat16, np.float32)])
def test_products_without_contraction(lhs_shape, rhs_shape, lhs_batch, rhs_batch, spec, dtype, result_dtype):
    a, b = _random(lhs_shape, dtype), _random(rhs_shape, dtype)
    want = np.einsum(spec, a.astype(result_dtype), b.astype(result_dtype))
    exe = xhlo.compile(outer_module(lhs_shape, rhs_shape, lhs_batch, rhs_batch, dtype, result_dtype, want.shape))
    assert "dot_general" not in exe.ir("xhlo-stablehlo-prepare")
    np.testing.assert_array_equal(exe(a, b), want)


def test_per_example_gradients_match_jax():
    """vmap(grad) of a layer: a batched outer product, transposed after it."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import export

    def grads(w, xs, ys):
        loss = lambda w, x, y: ((jnp.tanh(x @ w) - y) ** 2).sum()  # noqa: E731
        return jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)

    w, xs, ys = (_random(s, np.float32) for s in ((64, 64), (32, 64), (32, 64)))
    exported = export.export(jax.jit(grads), platforms=["cpu"])(w * 0.1, xs, ys)
    np.testing.assert_allclose(xhlo.compile(exported)(w * 0.1, xs, ys), jax.jit(grads)(w * 0.1, xs, ys),
                               rtol=1e-5, atol=1e-5)

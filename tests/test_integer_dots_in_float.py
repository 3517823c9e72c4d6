"""xhlo-integer-dots-in-float: integer products in f32/f64 where every partial sum is exact.

Oracle: numpy's int64 matmul (exact), wrapped to the result type where integer
arithmetic wraps. Inputs sit at the bounds the pass relies on (all -128, all 255).
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

ELEM = {np.int8: "i8", np.uint8: "ui8", np.int16: "i16", np.int32: "i32", np.uint32: "ui32", np.int64: "i64"}


def dot_module(m: int, k: int, n: int, operand, result, batch: int = 0) -> str:
    prefix = f"{batch}x" if batch else ""
    dims = "batching_dims = [0] x [0], contracting_dims = [2] x [1]" if batch else "contracting_dims = [1] x [0]"
    a, b = f"tensor<{prefix}{m}x{k}x{ELEM[operand]}>", f"tensor<{prefix}{k}x{n}x{ELEM[operand]}>"
    r = f"tensor<{prefix}{m}x{n}x{ELEM[result]}>"
    return f"""func.func @main(%a: {a}, %b: {b}) -> {r} {{
  %0 = stablehlo.dot_general %a, %b, {dims} : ({a}, {b}) -> {r}
  return %0 : {r}
}}"""


def _exact(a, b, result):
    product = np.matmul(a.astype(np.int64), b.astype(np.int64))
    return product.astype(result)  # wraps, as the integer product does


@pytest.mark.parametrize(
    "operand,result,k,float_type",
    [
        (np.int8, np.int32, 1024, "f32"),  # 1024 * 128^2 = 2^24: f32 exactly
        (np.int8, np.int32, 1025, "f64"),
        (np.uint8, np.uint32, 258, "f32"),  # 258 * 255^2 < 2^24
        (np.int16, np.int64, 64, "f64"),
    ],
)
def test_extreme_sums_match_integer_product(operand, result, k, float_type):
    info = np.iinfo(operand)
    rng = np.random.default_rng(0)
    a = rng.integers(info.min, info.max, (5, k), endpoint=True).astype(operand)
    b = rng.integers(info.min, info.max, (k, 6), endpoint=True).astype(operand)
    a[0], b[:, 0] = info.min, info.min  # the largest magnitude, in every product of one entry
    a[1], b[:, 1] = info.max, info.min
    exe = xhlo.compile(dot_module(5, k, 6, operand, result))
    np.testing.assert_array_equal(exe(a, b), _exact(a, b, result))
    assert f"-> tensor<5x6x{float_type}>" in exe.ir("xhlo-stablehlo-prepare")


def test_batched_product():
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 127, (3, 17, 40)).astype(np.int8)
    b = rng.integers(-128, 127, (3, 40, 9)).astype(np.int8)
    exe = xhlo.compile(dot_module(17, 40, 9, np.int8, np.int32, batch=3))
    np.testing.assert_array_equal(exe(a, b), _exact(a, b, np.int32))


@pytest.mark.parametrize(
    "operand,result",
    [(np.int32, np.int32), (np.int8, np.uint32)],  # sums that wrap; negative sums in unsigned
)
def test_products_that_wrap_stay_integer(operand, result):
    info = np.iinfo(operand)
    rng = np.random.default_rng(2)
    a = rng.integers(info.min, info.max, (4, 8), endpoint=True).astype(operand)
    b = rng.integers(info.min, info.max, (8, 3), endpoint=True).astype(operand)
    exe = xhlo.compile(dot_module(4, 8, 3, operand, result))
    assert "xf32>" not in exe.ir("xhlo-stablehlo-prepare") and "xf64>" not in exe.ir("xhlo-stablehlo-prepare")
    np.testing.assert_array_equal(exe(a, b), _exact(a, b, result))


def test_quantized_matmul_from_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import export

    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (64, 256)).astype(np.int8)
    b = rng.integers(-128, 128, (256, 32)).astype(np.int8)

    def f(a, b):
        return jnp.matmul(a, b, preferred_element_type=jnp.int32)

    exe = xhlo.compile(export.export(jax.jit(f), platforms=["cpu"])(a, b))
    np.testing.assert_array_equal(exe(a, b), np.asarray(jax.jit(f)(a, b)))

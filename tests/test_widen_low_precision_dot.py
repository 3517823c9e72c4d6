"""xhlo-widen-low-precision-dot: products whose result type is wider than their operands'.

Oracles: numpy in float64/complex128 on the same operand values.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import xhlo

RNG = np.random.default_rng(11)


def _complex(shape, dtype):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("op", ["dot_general", "convolution"])
def test_complex64_operands_with_a_complex128_result(op):
    """JAX's preferred_element_type=complex128 on complex64 operands."""
    a, b = _complex((1, 4, 3), np.complex64), _complex((1, 3, 6), np.complex64)
    ta, tb, ty = "tensor<1x4x3xcomplex<f32>>", "tensor<1x3x6xcomplex<f32>>", "tensor<1x4x6xcomplex<f64>>"
    if op == "dot_general":
        body = "stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1]"
    else:  # a width-1 window: the same product at each of the 4 positions
        body = ("stablehlo.convolution(%a, %b) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} "
                "{batch_group_count = 1 : i64, feature_group_count = 1 : i64}")
    module = f"""func.func @main(%a: {ta}, %b: {tb}) -> {ty} {{
  %0 = {body} : ({ta}, {tb}) -> {ty}
  return %0 : {ty}
}}"""
    result = xhlo.compile(module, cache=False)(a, b)
    assert result.dtype == np.complex128
    np.testing.assert_allclose(result, a.astype(np.complex128) @ b.astype(np.complex128), rtol=1e-13)


@pytest.mark.parametrize("operand", ["bf16", "f16"])
def test_half_float_operands_with_an_f32_result(operand):
    """JAX's preferred_element_type=float32 on bf16/f16 operands: exact products summed in f32."""
    dtype = ml_dtypes.bfloat16 if operand == "bf16" else np.float16
    a, b = RNG.standard_normal((64, 96)).astype(dtype), RNG.standard_normal((96, 80)).astype(dtype)
    module = f"""func.func @main(%a: tensor<64x96x{operand}>, %b: tensor<96x80x{operand}>) -> tensor<64x80xf32> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
      : (tensor<64x96x{operand}>, tensor<96x80x{operand}>) -> tensor<64x80xf32>
  return %0 : tensor<64x80xf32>
}}"""
    result = xhlo.compile(module, cache=False)(a, b)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)

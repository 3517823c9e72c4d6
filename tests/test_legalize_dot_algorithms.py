"""Dots with a JAX precision preset (``dot_general`` with ``algorithm``) run and match JAX."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import xhlo
from jax import export, lax

# The presets XLA:CPU accepts, with the tolerance of their storage type
# (JAX converts the operands to f16 / f64 itself for those presets).
PRESETS = [
    ("F32_F32_F32", 1e-5),
    ("BF16_BF16_F32", 1e-5),
    ("BF16_BF16_F32_X3", 1e-5),
    ("BF16_BF16_F32_X6", 1e-5),
    ("F16_F16_F16", 2e-2),
    ("F64_F64_F64", 1e-6),
]


@pytest.mark.parametrize("preset,rtol", PRESETS)
def test_preset_matches_jax(preset, rtol):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 24, 40)).astype(np.float32)
    b = rng.standard_normal((2, 40, 16)).astype(np.float32)

    def f(a, b):
        return lax.dot_general(a, b, (([2], [1]), ([0], [0])), precision=getattr(lax.DotAlgorithmPreset, preset))

    exported = export.export(jax.jit(f), platforms=["cpu"])(a, b)
    assert "algorithm" in exported.mlir_module()
    got = xhlo.compile(exported)(a, b)
    np.testing.assert_allclose(got, np.asarray(jax.jit(f)(a, b)), rtol=rtol, atol=rtol * 10)


def test_integer_dot_ignores_the_algorithm():
    src = """func.func @main(%a: tensor<2x3xi64>, %b: tensor<3x2xi64>) -> tensor<2x2xi64> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32,
    rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1,
    num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x3xi64>, tensor<3x2xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}"""
    a = np.arange(6, dtype=np.int64).reshape(2, 3) - 2
    b = np.arange(6, dtype=np.int64).reshape(3, 2) * 3
    np.testing.assert_array_equal(xhlo.compile(src)(a, b), a @ b)

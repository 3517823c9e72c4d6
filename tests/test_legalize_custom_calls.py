"""Custom calls resolved by xhlo-legalize-custom-calls, run end to end.

``shape_assertion`` is exercised through a hand-written shape-polymorphic
module in JAX's calling convention (a dynamic entry of a module marked
``jax.uses_shape_polymorphism`` becomes a ``PolymorphicExecutable`` refined per
input shape); ``ApproxTopK`` against
numpy's sort (exact: XLA's CPU fallback is an exact top-k).
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo.jax_interop import PolymorphicExecutable

POLYMORPHIC = """
module attributes {jax.uses_shape_polymorphism = true} {
func.func public @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %one = stablehlo.constant dense<1> : tensor<i32>
  %b = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
  %ok = stablehlo.compare GE, %b, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%ok, %b) {api_version = 2 : i32, error_message = "expected b >= 1, got b = {0}", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  %0 = call @body(%b, %x) : (tensor<i32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
func.func private @body(%b: tensor<i32> {jax.global_constant = "b"}, %x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = stablehlo.convert %b : (tensor<i32>) -> tensor<f32>
  %1 = stablehlo.reshape %0 : (tensor<f32>) -> tensor<1x1xf32>
  %2 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
  %3 = stablehlo.reshape %2 : (tensor<i32>) -> tensor<1xi32>
  %c3 = stablehlo.constant dense<3> : tensor<1xi32>
  %4 = stablehlo.concatenate %3, %c3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %5 = stablehlo.dynamic_broadcast_in_dim %1, %4, dims = [0, 1] : (tensor<1x1xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  %6 = stablehlo.multiply %x, %5 : tensor<?x3xf32>
  return %6 : tensor<?x3xf32>
}
}
"""


def test_polymorphic_module_compiles_once_per_shape():
    executable = xhlo.compile(POLYMORPHIC)
    assert isinstance(executable, PolymorphicExecutable)
    for rows in (2, 5, 2):
        x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
        np.testing.assert_array_equal(executable(x), x * rows)  # small integers: exact
    assert len(executable.executables) == 2
    assert executable.specialize(np.zeros((5, 3), np.float32)).signature.inputs[0].shape == (5, 3)


def test_failing_shape_assertion_reports_jax_message():
    executable = xhlo.compile(POLYMORPHIC)
    with pytest.raises(
        xhlo.CompilerError, match="shape assertion failed: expected b >= 1, got b = 0"
    ):
        executable(np.zeros((0, 3), np.float32))


def test_polymorphic_arguments_are_checked():
    executable = xhlo.compile(POLYMORPHIC)
    with pytest.raises(ValueError, match="shape \\(2, 4\\) does not fit tensor<\\?x3xf32>"):
        executable(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="expected dtype float32"):
        executable(np.zeros((2, 3), np.float64))


def approx_top_k_module(direction: str, dimension: int, k: int) -> str:
    shape = (6, 5)
    out = list(shape)
    out[dimension] = k
    t, ti = "tensor<6x5xf32>", "tensor<6x5xi32>"
    o, oi = f"tensor<{out[0]}x{out[1]}xf32>", f"tensor<{out[0]}x{out[1]}xi32>"
    init = "0xFF800000" if direction == "GT" else "0x7F800000"
    return f"""
func.func @cmp(%a: tensor<f32>, %b: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<i1> {{
  %0 = stablehlo.compare {direction}, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}}
func.func @main(%x: {t}) -> ({o}, {oi}) {{
  %init = stablehlo.constant dense<{init}> : tensor<f32>
  %none = stablehlo.constant dense<-1> : tensor<i32>
  %iota = stablehlo.iota dim = {dimension} : {ti}
  %0:2 = stablehlo.custom_call @ApproxTopK(%x, %iota, %init, %none) {{called_computations = [@cmp], mhlo.backend_config = {{aggregate_to_topk = true, is_fallback = true, recall_target = 0.95 : f32, reduction_dim = {dimension} : i64, reduction_input_size_override = -1 : i64, top_k = {k} : i64}}}} : ({t}, {ti}, tensor<f32>, tensor<i32>) -> ({o}, {oi})
  return %0#0, %0#1 : {o}, {oi}
}}"""


@pytest.mark.parametrize("direction,dimension,k", [("GT", 1, 2), ("LT", 0, 3)])
def test_approx_top_k_is_exact(direction, dimension, k):
    x = np.random.default_rng(0).permutation(30).reshape(6, 5).astype(np.float32)
    executable = xhlo.compile(approx_top_k_module(direction, dimension, k))
    assert list(executable.signatures) == ["main"]  # the comparator became private
    values, indices = executable(x)
    order = np.argsort(-x if direction == "GT" else x, axis=dimension, kind="stable")
    expected_indices = np.take(order, np.arange(k), axis=dimension)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_array_equal(values, np.take_along_axis(x, expected_indices, axis=dimension))


def test_shape_changing_spmd_marker_is_an_error():
    module = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @SPMDFullToShardShape(%x) {mhlo.sharding = "{manual}"} : (tensor<4xf32>) -> tensor<2xf32>
  %1 = stablehlo.custom_call @SPMDShardToFullShape(%0) {mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<2xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}"""
    with pytest.raises(xhlo.CompilerError, match="xhlo does not partition programs"):
        xhlo.compile(module)

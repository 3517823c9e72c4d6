"""Dynamic shape ops whose shape operand is computed at run time but whose result is static."""

from __future__ import annotations

import numpy as np
import xhlo

COMPUTED_SHAPES = """func.func @main(%a: tensor<2x6xf32>, %b: tensor<3xi32>) -> (tensor<3x4xf32>, tensor<5x3xi32>, tensor<2x5xi64>) {
  %d0 = stablehlo.get_dimension_size %a, dim = 0 : (tensor<2x6xf32>) -> tensor<i32>
  %d1 = stablehlo.get_dimension_size %a, dim = 1 : (tensor<2x6xf32>) -> tensor<i32>
  %n = stablehlo.multiply %d0, %d1 : tensor<i32>
  %c4 = stablehlo.constant dense<4> : tensor<i32>
  %rows = stablehlo.divide %n, %c4 : tensor<i32>
  %rows1 = stablehlo.reshape %rows : (tensor<i32>) -> tensor<1xi32>
  %cols1 = stablehlo.reshape %c4 : (tensor<i32>) -> tensor<1xi32>
  %s = stablehlo.concatenate %rows1, %cols1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %reshaped = stablehlo.dynamic_reshape %a, %s : (tensor<2x6xf32>, tensor<2xi32>) -> tensor<3x4xf32>
  %c5 = stablehlo.constant dense<5> : tensor<1xi32>
  %db = stablehlo.get_dimension_size %b, dim = 0 : (tensor<3xi32>) -> tensor<i32>
  %db1 = stablehlo.reshape %db : (tensor<i32>) -> tensor<1xi32>
  %bs = stablehlo.concatenate %c5, %db1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %broadcast = stablehlo.dynamic_broadcast_in_dim %b, %bs, dims = [1] : (tensor<3xi32>, tensor<2xi32>) -> tensor<5x3xi32>
  %d01 = stablehlo.reshape %d0 : (tensor<i32>) -> tensor<1xi32>
  %three = stablehlo.constant dense<3> : tensor<1xi32>
  %d03 = stablehlo.add %d01, %three : tensor<1xi32>
  %i5 = stablehlo.concatenate %d01, %d03, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %iota = stablehlo.dynamic_iota %i5, dim = 1 : (tensor<2xi32>) -> tensor<2x5xi64>
  return %reshaped, %broadcast, %iota : tensor<3x4xf32>, tensor<5x3xi32>, tensor<2x5xi64>
}"""


def test_runtime_shape_operands_with_static_results():
    a = np.arange(12, dtype=np.float32).reshape(2, 6) - 5.5
    b = np.array([7, -8, 9], np.int32)
    exe = xhlo.compile(COMPUTED_SHAPES)
    reshaped, broadcast, iota = exe(a, b)
    np.testing.assert_array_equal(reshaped, a.reshape(3, 4))
    np.testing.assert_array_equal(broadcast, np.broadcast_to(b, (5, 3)))
    np.testing.assert_array_equal(iota, np.broadcast_to(np.arange(5, dtype=np.int64), (2, 5)))
    prepared = exe.ir("xhlo-stablehlo-prepare")
    assert "dynamic_" not in prepared


CHLO_SCAN = """func.func @main(%input: tensor<2x5xi32>) -> (tensor<2x5xi32>, tensor<2xi32>) {
  %init = stablehlo.constant dense<0> : tensor<2xi32>
  %0:2 = chlo.scan(%input) inits(%init) dimension=1 {
  ^bb0(%element: tensor<2xi32>, %carry: tensor<2xi32>):
    %1 = stablehlo.add %element, %carry : tensor<2xi32>
    stablehlo.return %1, %1 : tensor<2xi32>, tensor<2xi32>
  } : (tensor<2x5xi32>, tensor<2xi32>) -> (tensor<2x5xi32>, tensor<2xi32>)
  return %0#0, %0#1 : tensor<2x5xi32>, tensor<2xi32>
}"""


def test_chlo_scan_loop_bound_folds():
    """CHLO's scan decomposition bounds its while loop by get_dimension_size of the input."""
    x = np.array([[1, 2, 3, 4, 5], [-7, 0, 9, 2, -1]], np.int32)
    exe = xhlo.compile(CHLO_SCAN)
    prefix, total = exe(x)
    np.testing.assert_array_equal(prefix, np.cumsum(x, axis=1))
    np.testing.assert_array_equal(total, x.sum(axis=1))
    assert "get_dimension_size" not in exe.ir("xhlo-stablehlo-prepare")

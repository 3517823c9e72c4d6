"""check.* semantics, as StableHLO's reference runner applies them."""

from __future__ import annotations

import numpy as np
import pytest

import xhlo
from xhlo.checks import Check, compare, ulp_distance


def test_ulp_distance_rules():
    one = np.float32(1.0)
    next_up = np.nextafter(one, np.float32(2))
    a = np.array([one, next_up, 0.0, -0.0, np.nan, np.inf, np.inf], np.float32)
    b = np.array([one, one, -0.0, np.float32(1e-45), np.nan, np.inf, 1.0], np.float32)
    np.testing.assert_array_equal(ulp_distance(a, b), [0, 1, 0, 1, 0, 0, np.inf])


@pytest.mark.parametrize(
    "kind,a,b,ok",
    [
        ("expect_eq", [0.0], [-0.0], True),  # IEEE ==
        ("expect_eq", [np.nan], [np.nan], False),  # a NaN equals nothing
        ("expect_close", [1.0], [np.nextafter(np.float32(1), np.float32(2))], True),
        ("expect_almost_eq", [np.nan], [np.nan], True),
        ("expect_almost_eq", [1.0], [1.0011], False),
        ("expect_almost_eq", [np.inf], [np.inf], True),
        ("expect_almost_eq", [np.inf], [1e30], False),
    ],
)
def test_compare(kind, a, b, ok):
    check = Check(kind, 0, 1)
    assert (compare(check, np.array(a, np.float32), np.array(b, np.float32)) is None) == ok


def test_program_with_checks_raises_on_mismatch():
    src = """func.func @main() -> tensor<2xi32> {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = stablehlo.constant dense<[1, 3]> : tensor<2xi32>
  %0 = stablehlo.add %a, %a : tensor<2xi32>
  stablehlo.custom_call @check.expect_eq(%0, %b) {has_side_effect = true} : (tensor<2xi32>, tensor<2xi32>) -> ()
  return %0 : tensor<2xi32>
}"""
    exe = xhlo.compile(src)
    with pytest.raises(xhlo.CheckFailure, match="check.expect_eq"):
        exe()


def test_program_with_passing_checks_returns_only_its_results():
    src = """func.func @main() -> tensor<2xf32> {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  "check.expect_almost_eq_const"(%0) <{value = dense<[2.0, 4.00001]> : tensor<2xf32>}> : (tensor<2xf32>) -> ()
  return %0 : tensor<2xf32>
}"""
    np.testing.assert_array_equal(xhlo.compile(src)(), [2.0, 4.0])

"""The check dialect's custom syntax (StableHLO's interpreter tests) runs like its
generic form: each check compares, passes and fails with the runner's tolerances."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo.check_syntax import CheckSyntaxError, to_generic
from xhlo.checks import CheckFailure

PROGRAM = """func.func @main() -> tensor<2x2xf32> {{
  %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = stablehlo.add %a, %a : tensor<2x2xf32>
  {check}
  return %b : tensor<2x2xf32>
}}"""

PASSING = [
    "check.expect_eq_const %b, dense<[[2.0, 4.0],\n      [6.0, 8.0]]> : tensor<2x2xf32>",
    "check.expect_almost_eq_const %b, dense<[[2.0, 4.0], [6.0, 8.05]]> : tensor<2x2xf32> {tolerance = 0.1 : f64}",
    "check.expect_almost_eq_const %b, dense<[[2.0, 4.0], [6.0, 8.00005]]> : tensor<2x2xf32>",
    "check.expect_eq %b, %b : tensor<2x2xf32>",
    "check.expect_almost_eq %b, %a, tolerance = 5.0 : tensor<2x2xf32>",
    "check.expect_close %b, %b, max_ulp_difference = 0 : tensor<2x2xf32>, tensor<2x2xf32>",
]
FAILING = [
    "check.expect_eq_const %b, dense<[[2.0, 4.0], [6.0, 9.0]]> : tensor<2x2xf32>",
    "check.expect_almost_eq_const %b, dense<[[2.0, 4.0], [6.0, 8.05]]> : tensor<2x2xf32>",
    "check.expect_eq %b, %a : tensor<2x2xf32>",
    "check.expect_almost_eq %b, %a, tolerance = 3.0 : tensor<2x2xf32>",
]


@pytest.mark.parametrize("check", PASSING)
def test_passing_checks(check):
    np.testing.assert_array_equal(xhlo.compile(PROGRAM.format(check=check))(), [[2, 4], [6, 8]])


@pytest.mark.parametrize("check", FAILING)
def test_failing_checks(check):
    with pytest.raises(CheckFailure):
        xhlo.compile(PROGRAM.format(check=check))()


def test_generic_form_and_other_text_unchanged():
    text = PROGRAM.format(check=PASSING[0])
    generic = to_generic(text)
    assert ('"check.expect_eq_const"(%b) <{value = dense<[[2.0, 4.0],\n      [6.0, 8.0]]> : tensor<2x2xf32>}> '
            ": (tensor<2x2xf32>) -> ()") in generic
    assert generic.replace(generic[generic.index('"check'):generic.index("\n  return")], "") == \
        text.replace(text[text.index("check."):text.index("\n  return")], "")
    assert to_generic(generic) == generic


def test_malformed_check_is_reported():
    with pytest.raises(CheckSyntaxError, match="expected a second operand"):
        to_generic("  check.expect_eq %b : tensor<2xf32>\n")
    with pytest.raises(xhlo.CompilerError, match="check.expect_eq_const: expected ', <constant>'"):
        xhlo.compile(PROGRAM.format(check="check.expect_eq_const %b"))

"""stablehlo.while/if/case lowered through scf, checked against numpy and the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import xhlo
from xhlo import reference

WHILE = """func.func @main(%v: tensor<10xf32>) -> (tensor<i32>, tensor<10xf32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %v) : tensor<i32>, tensor<10xf32>
  cond {
    %n = stablehlo.constant dense<1000> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %c = stablehlo.constant dense<0.5> : tensor<10xf32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %a2 = stablehlo.add %acc, %c : tensor<10xf32>
    stablehlo.return %i2, %a2 : tensor<i32>, tensor<10xf32>
  }
  return %r#0, %r#1 : tensor<i32>, tensor<10xf32>
}"""


def test_while_seed_example():
    v = np.arange(10, dtype=np.float32)
    i, acc = xhlo.compile(WHILE)(v)
    assert i == 1000
    np.testing.assert_array_equal(acc, v + 500)
    ref = reference.evaluate(WHILE, v)
    np.testing.assert_array_equal(acc, ref[1])


IF = """func.func @main(%p: tensor<i1>, %x: tensor<3xi32>) -> tensor<3xi32> {
  %r = "stablehlo.if"(%p) ({
    %0 = stablehlo.multiply %x, %x : tensor<3xi32>
    stablehlo.return %0 : tensor<3xi32>
  }, {
    %0 = stablehlo.negate %x : tensor<3xi32>
    stablehlo.return %0 : tensor<3xi32>
  }) : (tensor<i1>) -> tensor<3xi32>
  return %r : tensor<3xi32>
}"""


@pytest.mark.parametrize("pred", [True, False])
def test_if(pred):
    x = np.array([1, -2, 3], np.int32)
    got = xhlo.compile(IF)(np.bool_(pred), x)
    np.testing.assert_array_equal(got, x * x if pred else -x)


CASE = """func.func @main(%i: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.case"(%i) ({
    %0 = stablehlo.add %x, %x : tensor<2xf32>
    stablehlo.return %0 : tensor<2xf32>
  }, {
    %0 = stablehlo.multiply %x, %x : tensor<2xf32>
    stablehlo.return %0 : tensor<2xf32>
  }, {
    %0 = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %0 : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}"""


@pytest.mark.parametrize("index", [-1, 0, 1, 2, 3, 100])
def test_case_out_of_range_runs_last_branch(index):
    x = np.array([3.0, -4.0], np.float32)
    expected = {0: x + x, 1: x * x}.get(index, -x)
    np.testing.assert_array_equal(xhlo.compile(CASE)(np.int32(index), x), expected)


def test_nested_while_in_if():
    src = """func.func @main(%p: tensor<i1>, %n: tensor<i64>) -> tensor<i64> {
  %r = "stablehlo.if"(%p) ({
    %zero = stablehlo.constant dense<0> : tensor<i64>
    %w:2 = stablehlo.while(%i = %zero, %s = %zero) : tensor<i64>, tensor<i64>
    cond {
      %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i64>
      %i2 = stablehlo.add %i, %one : tensor<i64>
      %s2 = stablehlo.add %s, %i2 : tensor<i64>
      stablehlo.return %i2, %s2 : tensor<i64>, tensor<i64>
    }
    stablehlo.return %w#1 : tensor<i64>
  }, {
    stablehlo.return %n : tensor<i64>
  }) : (tensor<i1>) -> tensor<i64>
  return %r : tensor<i64>
}"""
    exe = xhlo.compile(src)
    assert exe(True, np.int64(100)) == 5050
    assert exe(False, np.int64(7)) == 7

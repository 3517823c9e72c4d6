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


COUNTED = """func.func @main(%v: tensor<4xf32>) -> (tensor<{t}>, tensor<4xf32>) {{
  %start = stablehlo.constant dense<{start}> : tensor<{t}>
  %limit = stablehlo.constant dense<{limit}> : tensor<{t}>
  %r:3 = stablehlo.while(%i = %start, %n = %limit, %acc = %v) : tensor<{t}>, tensor<{t}>, tensor<4xf32>
  cond {{
    %p = stablehlo.compare LT, %i, {bound}, SIGNED : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<{t}>
    %i2 = stablehlo.add {step} : tensor<{t}>
    %f = stablehlo.convert %i : (tensor<{t}>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %a2 = stablehlo.add %acc, %b : tensor<4xf32>
    stablehlo.return %i2, {next_bound}, %a2 : tensor<{t}>, tensor<{t}>, tensor<4xf32>
  }}
  return %r#0, %r#2 : tensor<{t}>, tensor<4xf32>
}}"""


@pytest.mark.parametrize(
    "start, limit, t, bound, step, next_bound, counted",
    [
        (0, 5, "i32", "%limit", "%i, %one", "%n", True),  # constant bound
        (-3, 4, "i64", "%n", "%one, %i", "%n", True),  # bound carried unchanged, 1 + i
        (6, 2, "i32", "%n", "%i, %one", "%n", True),  # start above the bound: no iteration
        (0, 5, "i32", "%n", "%i, %one", "%one", False),  # the body changes the bound: not counted
        (0, 5, "i32", "%n", "%i, %i", "%n", False),  # the counter doubles: not counted
    ],
)
def test_counted_loops_match_the_interpreter(start, limit, t, bound, step, next_bound, counted):
    """Counted loops run as scf.for with a static trip count, the others as scf.while;
    both count and accumulate the counter exactly as the interpreter does."""
    src = COUNTED.format(start=start, limit=limit, t=t, bound=bound, step=step, next_bound=next_bound)
    v = np.arange(4, dtype=np.float32)
    if step == "%i, %i" and start == 0:
        src = src.replace("dense<0>", "dense<1>", 1)  # 1, 2, 4: a loop that ends
    exe = xhlo.compile(src)
    got = exe(v)
    want = reference.evaluate(src, v)
    assert int(got[0]) == int(want[0])
    np.testing.assert_array_equal(got[1], want[1])
    linalg = exe.ir("xhlo-stablehlo-to-linalg")
    assert ("scf.while" not in linalg) == counted

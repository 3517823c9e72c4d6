"""Tuples flattened, tokens dropped and static dimension sizes folded, checked with numpy."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

NESTED_TUPLES = """func.func @main(%a: tensor<2xf32>, %b: tensor<i32>) -> (tensor<i32>, tensor<2xf32>) {
  %t = stablehlo.tuple %a, %b : tuple<tensor<2xf32>, tensor<i32>>
  %u = stablehlo.tuple %t, %a : tuple<tuple<tensor<2xf32>, tensor<i32>>, tensor<2xf32>>
  %x = stablehlo.get_tuple_element %u[0] : (tuple<tuple<tensor<2xf32>, tensor<i32>>, tensor<2xf32>>) -> tuple<tensor<2xf32>, tensor<i32>>
  %y = stablehlo.get_tuple_element %x[1] : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>
  %z = stablehlo.get_tuple_element %u[1] : (tuple<tuple<tensor<2xf32>, tensor<i32>>, tensor<2xf32>>) -> tensor<2xf32>
  %w = stablehlo.multiply %z, %z : tensor<2xf32>
  return %y, %w : tensor<i32>, tensor<2xf32>
}"""


def test_get_tuple_element_of_nested_tuples():
    exe = xhlo.compile(NESTED_TUPLES)
    a = np.array([1.5, -3.0], np.float32)
    y, w = exe(a, np.int32(7))
    assert y == 7
    np.testing.assert_array_equal(w, a * a)
    assert "tuple" not in exe.ir("xhlo-stablehlo-prepare")


TUPLE_SIGNATURE = """func.func @main(%t: tuple<tensor<3xf32>, tuple<tensor<i32>, tensor<3xf32>>>, %k: tensor<i32>) -> tuple<tensor<i32>, tuple<tensor<3xf32>>> {
  %x = stablehlo.get_tuple_element %t[0] : (tuple<tensor<3xf32>, tuple<tensor<i32>, tensor<3xf32>>>) -> tensor<3xf32>
  %inner = stablehlo.get_tuple_element %t[1] : (tuple<tensor<3xf32>, tuple<tensor<i32>, tensor<3xf32>>>) -> tuple<tensor<i32>, tensor<3xf32>>
  %n = stablehlo.get_tuple_element %inner[0] : (tuple<tensor<i32>, tensor<3xf32>>) -> tensor<i32>
  %y = stablehlo.get_tuple_element %inner[1] : (tuple<tensor<i32>, tensor<3xf32>>) -> tensor<3xf32>
  %s = stablehlo.subtract %n, %k : tensor<i32>
  %d = stablehlo.subtract %x, %y : tensor<3xf32>
  %r1 = stablehlo.tuple %d : tuple<tensor<3xf32>>
  %r = stablehlo.tuple %s, %r1 : tuple<tensor<i32>, tuple<tensor<3xf32>>>
  return %r : tuple<tensor<i32>, tuple<tensor<3xf32>>>
}"""


def test_tuple_arguments_and_results_are_flattened_in_order():
    exe = xhlo.compile(TUPLE_SIGNATURE)
    assert [str(s) for s in exe.signature.inputs] == ["tensor<3xf32>", "tensor<i32>", "tensor<3xf32>", "tensor<i32>"]
    assert [str(s) for s in exe.signature.outputs] == ["tensor<i32>", "tensor<3xf32>"]
    x = np.array([1, 2, 3], np.float32)
    y = np.array([0.5, -1, 10], np.float32)
    s, d = exe(x, np.int32(10), y, np.int32(4))
    assert s == 6
    np.testing.assert_array_equal(d, x - y)


TOKEN_SIGNATURE = """func.func @main(%tok: !stablehlo.token, %a: tensor<4xi32>) -> (!stablehlo.token, tensor<4xi32>) {
  %t1 = stablehlo.after_all %tok : !stablehlo.token
  %t0 = stablehlo.create_token : !stablehlo.token
  %t2 = stablehlo.after_all %t1, %t0 : !stablehlo.token
  %r = stablehlo.multiply %a, %a : tensor<4xi32>
  return %t2, %r : !stablehlo.token, tensor<4xi32>
}"""


def test_token_arguments_and_results_are_dropped_and_recorded():
    exe = xhlo.compile(TOKEN_SIGNATURE)
    assert [str(s) for s in exe.signature.inputs] == ["tensor<4xi32>"]
    assert [str(s) for s in exe.signature.outputs] == ["tensor<4xi32>"]
    prepared = exe.ir("xhlo-stablehlo-prepare")
    assert "xhlo.token_arguments = array<i64: 0>" in prepared
    assert "xhlo.token_results = array<i64: 0>" in prepared
    assert "token" not in prepared.replace("xhlo.token_", "")
    a = np.array([1, -2, 3, 40_000], np.int32)
    np.testing.assert_array_equal(exe(a), a * a)


WHILE_WITH_TOKEN = """func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %tok = stablehlo.create_token : !stablehlo.token
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%t = %tok, %i = %zero, %v = %a) : !stablehlo.token, tensor<i32>, tensor<3xf32>
  cond {
    %n = stablehlo.constant dense<5> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %v2 = stablehlo.add %v, %v : tensor<3xf32>
    %t2 = stablehlo.after_all %t : !stablehlo.token
    stablehlo.return %t2, %i2, %v2 : !stablehlo.token, tensor<i32>, tensor<3xf32>
  }
  %done = stablehlo.after_all %r#0 : !stablehlo.token
  return %r#2 : tensor<3xf32>
}"""


def test_while_token_carry_is_dropped():
    exe = xhlo.compile(WHILE_WITH_TOKEN)
    a = np.array([1, -0.25, 3], np.float32)
    np.testing.assert_array_equal(exe(a), a * 32)
    assert "token" not in exe.ir("xhlo-stablehlo-prepare")


CASE_WITH_TOKEN = """func.func @main(%i: tensor<i32>, %x: tensor<2xi64>) -> tensor<2xi64> {
  %tok = stablehlo.create_token : !stablehlo.token
  %r:2 = "stablehlo.case"(%i) ({
    %0 = stablehlo.add %x, %x : tensor<2xi64>
    stablehlo.return %tok, %0 : !stablehlo.token, tensor<2xi64>
  }, {
    %t = stablehlo.after_all %tok : !stablehlo.token
    %0 = stablehlo.negate %x : tensor<2xi64>
    stablehlo.return %t, %0 : !stablehlo.token, tensor<2xi64>
  }) : (tensor<i32>) -> (!stablehlo.token, tensor<2xi64>)
  return %r#1 : tensor<2xi64>
}"""


@pytest.mark.parametrize("index,expected", [(0, "double"), (1, "negate"), (7, "negate")])
def test_case_token_result_is_dropped(index, expected):
    x = np.array([5, -(2**40)], np.int64)
    got = xhlo.compile(CASE_WITH_TOKEN)(np.int32(index), x)
    np.testing.assert_array_equal(got, x + x if expected == "double" else -x)


IF_WITH_TOKEN = """func.func @main(%p: tensor<i1>, %x: tensor<2xf64>) -> tensor<2xf64> {
  %tok = stablehlo.create_token : !stablehlo.token
  %r:2 = "stablehlo.if"(%p) ({
    %0 = stablehlo.sqrt %x : tensor<2xf64>
    stablehlo.return %0, %tok : tensor<2xf64>, !stablehlo.token
  }, {
    stablehlo.return %x, %tok : tensor<2xf64>, !stablehlo.token
  }) : (tensor<i1>) -> (tensor<2xf64>, !stablehlo.token)
  return %r#0 : tensor<2xf64>
}"""


@pytest.mark.parametrize("pred", [True, False])
def test_if_token_result_is_dropped(pred):
    x = np.array([2.0, 9.0])
    got = xhlo.compile(IF_WITH_TOKEN)(np.bool_(pred), x)
    np.testing.assert_array_equal(got, np.sqrt(x) if pred else x)


GET_DIMENSION_SIZE = """func.func @main(%a: tensor<2x7x0xf32>) -> (tensor<i32>, tensor<i32>, tensor<i32>, tensor<7xf32>) {
  %0 = stablehlo.get_dimension_size %a, dim = 0 : (tensor<2x7x0xf32>) -> tensor<i32>
  %1 = stablehlo.get_dimension_size %a, dim = 1 : (tensor<2x7x0xf32>) -> tensor<i32>
  %2 = stablehlo.get_dimension_size %a, dim = 2 : (tensor<2x7x0xf32>) -> tensor<i32>
  %f = stablehlo.convert %1 : (tensor<i32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<7xf32>
  return %0, %1, %2, %b : tensor<i32>, tensor<i32>, tensor<i32>, tensor<7xf32>
}"""


def test_get_dimension_size_of_static_dims():
    exe = xhlo.compile(GET_DIMENSION_SIZE)
    a = np.zeros((2, 7, 0), np.float32)
    d0, d1, d2, b = exe(a)
    assert (d0.dtype, int(d0), int(d1), int(d2)) == (np.int32, 2, 7, 0)
    np.testing.assert_array_equal(b, np.full(7, 7.0, np.float32))
    assert "get_dimension_size" not in exe.ir("xhlo-stablehlo-prepare")


CALLED_WITH_TUPLES = """func.func private @swap(%t: tuple<tensor<2xf32>, tensor<2xf32>>) -> tuple<tensor<2xf32>, tensor<2xf32>> {
  %a = stablehlo.get_tuple_element %t[0] : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tensor<2xf32>
  %b = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tensor<2xf32>
  %r = stablehlo.tuple %b, %a : tuple<tensor<2xf32>, tensor<2xf32>>
  return %r : tuple<tensor<2xf32>, tensor<2xf32>>
}
func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %t = stablehlo.tuple %x, %y : tuple<tensor<2xf32>, tensor<2xf32>>
  %s = func.call @swap(%t) : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tuple<tensor<2xf32>, tensor<2xf32>>
  %first = stablehlo.get_tuple_element %s[0] : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tensor<2xf32>
  %r = stablehlo.subtract %first, %x : tensor<2xf32>
  return %r : tensor<2xf32>
}"""


def test_private_function_with_tuples():
    x = np.array([1, 2], np.float32)
    y = np.array([10, 30], np.float32)
    np.testing.assert_array_equal(xhlo.compile(CALLED_WITH_TUPLES)(x, y), y - x)

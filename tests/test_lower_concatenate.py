"""xhlo-lower-concatenate: large concatenations as copies into slices of the result, against numpy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import xhlo

RNG = np.random.default_rng(31)
ELEM = {np.float32: "f32", np.float64: "f64", np.float16: "f16", ml_dtypes.bfloat16: "bf16", np.int8: "i8",
        np.int64: "i64", np.uint8: "ui8", np.bool_: "i1", np.complex64: "complex<f32>"}


def _t(shape, dtype) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{ELEM[dtype]}>"


def _random(shape, dtype) -> np.ndarray:
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if dtype == np.complex64:
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    if np.issubdtype(np.dtype(dtype), np.integer):
        return RNG.integers(0, 100, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def concat_module(shapes, dtype, dim: int) -> str:
    names = [f"%a{i}" for i in range(len(shapes))]
    out = list(shapes[0])
    out[dim] = sum(s[dim] for s in shapes)
    args = ", ".join(f"{n}: {_t(s, dtype)}" for n, s in zip(names, shapes))
    types = ", ".join(_t(s, dtype) for s in shapes)
    return f"""func.func @main({args}) -> {_t(out, dtype)} {{
  %0 = stablehlo.concatenate {', '.join(names)}, dim = {dim} : ({types}) -> {_t(out, dtype)}
  return %0 : {_t(out, dtype)}
}}"""


def _lowered(exe) -> bool:
    return "tensor.insert_slice" in exe.ir("xhlo-stablehlo-to-linalg")


@pytest.mark.parametrize("shapes, dim", [
    ([(64, 100), (64, 28), (64, 1)], 1),   # columns of arguments: strided copies
    ([(4096,), (3000,), (5,)], 0),         # rows: contiguous copies
    ([(8, 30, 16), (8, 2, 16), (8, 0, 16), (8, 32, 16)], 1),  # a middle dimension, an empty operand
])
def test_concatenation_of_arguments(shapes, dim):
    args = [_random(s, np.float32) for s in shapes]
    exe = xhlo.compile(concat_module(shapes, np.float32, dim))
    assert _lowered(exe)
    np.testing.assert_array_equal(exe(*args), np.concatenate(args, dim))


@pytest.mark.parametrize("dtype", [np.float64, np.float16, ml_dtypes.bfloat16, np.int8, np.int64, np.bool_,
                                   np.complex64, np.uint8])
def test_element_types(dtype):
    shapes = [(48, 64), (48, 64)]
    args = [_random(s, dtype) for s in shapes]
    exe = xhlo.compile(concat_module(shapes, dtype, 1))
    assert _lowered(exe) == (dtype != np.uint8)  # unsigned: the upstream lowering
    np.testing.assert_array_equal(exe(*args), np.concatenate(args, 1))


FUSED_PRODUCERS = """func.func @main(%a: tensor<4096xf32>, %b: tensor<4096xf32>) -> (tensor<16384xf32>, tensor<4096xf32>) {
  %r = stablehlo.reverse %a, dims = [0] : tensor<4096xf32>
  %s = stablehlo.add %a, %b : tensor<4096xf32>
  %0 = stablehlo.concatenate %r, %b, %s, %s, dim = 0 : (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<16384xf32>
  %1 = stablehlo.multiply %s, %b : tensor<4096xf32>
  return %0, %1 : tensor<16384xf32>, tensor<4096xf32>
}"""


def test_producers_and_shared_operands():
    """A single-use producer fuses into its copy; an operand used twice (and elsewhere) is read twice."""
    a, b = _random((4096,), np.float32), _random((4096,), np.float32)
    joined, product = xhlo.compile(FUSED_PRODUCERS)(a, b)
    s = a + b
    np.testing.assert_array_equal(joined, np.concatenate([a[::-1], b, s, s]))
    np.testing.assert_array_equal(product, s * b)


LOOP = """func.func @main(%x: tensor<64x64xf32>) -> tensor<64x128xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %init = stablehlo.concatenate %x, %x, dim = 1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x128xf32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %init) : tensor<i32>, tensor<64x128xf32>
    cond {
      %c = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %left = stablehlo.slice %acc [0:64, 64:128] : (tensor<64x128xf32>) -> tensor<64x64xf32>
      %right = stablehlo.slice %acc [0:64, 0:64] : (tensor<64x128xf32>) -> tensor<64x64xf32>
      %twice = stablehlo.add %right, %right : tensor<64x64xf32>
      %next = stablehlo.concatenate %left, %twice, dim = 1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x128xf32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j, %next : tensor<i32>, tensor<64x128xf32>
    }
  return %r#1 : tensor<64x128xf32>
}"""


def test_loop_carried_concatenation():
    x = _random((64, 64), np.float32)
    acc = np.concatenate([x, x], 1)
    for _ in range(3):
        acc = np.concatenate([acc[:, 64:], acc[:, :64] * 2], 1)
    exe = xhlo.compile(LOOP)
    assert _lowered(exe)
    np.testing.assert_array_equal(exe(x), acc)

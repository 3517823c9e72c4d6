"""xhlo-split-complex-dots: complex products as four real ones, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

RNG = np.random.default_rng(12)
ELEM = {np.complex64: "complex<f32>", np.complex128: "complex<f64>"}


def _t(shape, dtype) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{ELEM[dtype]}>"


def _random(shape, dtype) -> np.ndarray:
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


# (lhs shape, rhs shape, batching dims, contracting dims, einsum)
CASES = [
    ((96, 80), (80, 64), ([], []), ([1], [0]), "ik,kj->ij"),
    ((4, 40, 50), (4, 30, 50), ([0], [0]), ([2], [2]), "bik,bjk->bij"),
    ((512, 300), (300,), ([], []), ([1], [0]), "ik,k->i"),
    ((4, 4), (4, 4), ([], []), ([1], [0]), "ik,kj->ij"),  # small: one complex loop
]


def dot_module(lhs_shape, rhs_shape, batch, contract, out_shape, dtype) -> str:
    return f"""func.func @main(%a: {_t(lhs_shape, dtype)}, %b: {_t(rhs_shape, dtype)}) -> {_t(out_shape, dtype)} {{
  %0 = stablehlo.dot_general %a, %b, batching_dims = {batch[0]} x {batch[1]}, contracting_dims = {contract[0]} x {contract[1]}
      : ({_t(lhs_shape, dtype)}, {_t(rhs_shape, dtype)}) -> {_t(out_shape, dtype)}
  return %0 : {_t(out_shape, dtype)}
}}"""


@pytest.mark.parametrize("lhs_shape, rhs_shape, batch, contract, spec", CASES)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_products(lhs_shape, rhs_shape, batch, contract, spec, dtype):
    a, b = _random(lhs_shape, dtype), _random(rhs_shape, dtype)
    want = np.einsum(spec, a.astype(np.complex128), b.astype(np.complex128))
    exe = xhlo.compile(dot_module(lhs_shape, rhs_shape, batch, contract, want.shape, dtype))
    split = exe.ir("xhlo-stablehlo-prepare").count("stablehlo.dot_general")
    assert split == (1 if lhs_shape == (4, 4) else 4)
    got = exe(a, b)
    assert got.dtype == dtype
    tolerance = 1e-4 if dtype == np.complex64 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * np.sqrt(lhs_shape[-1]))

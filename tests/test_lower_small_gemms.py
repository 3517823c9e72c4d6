"""xhlo-lower-small-gemms: few-row products as register-blocked vector loops, checked against numpy.

Covers the shapes the kernel's blocking depends on (one row, row blocks with a
remainder, one- and two-vector column tiles), a transposed lhs read in place,
batches, float64, a folded scale, accumulation into a non-zero result, the
products it leaves to BLAS, and the parallel tile loop.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

RNG = np.random.default_rng(11)


def _t(shape, elem="f32") -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{elem}>"


def _dot(ta, tb, to, dims: str) -> str:
    return f"""func.func @main(%a: {ta}, %b: {tb}) -> {to} {{
  %0 = stablehlo.dot_general %a, %b, {dims} : ({ta}, {tb}) -> {to}
  return %0 : {to}
}}"""


def _matmul(m: int, k: int, n: int, elem: str = "f32") -> str:
    return _dot(_t((m, k), elem), _t((k, n), elem), _t((m, n), elem), "contracting_dims = [1] x [0]")


def _lowered(exe) -> str:
    return exe.ir("xhlo-lower-to-loops")


def _kernel_ran(exe) -> bool:
    loops = _lowered(exe)
    return "vector.fma" in loops and "cblas" not in loops


def _inputs(*shapes, dtype=np.float32):
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("m,k,n", [
    (16, 384, 1024),  # an LSTM step: 16 rows x 1 vector per tile
    (1, 64, 1024),  # one row, 16-vector tiles
    (3, 64, 256),  # 3 rows: 4-vector tiles (16/3 rounded to a power of two that divides)
    (17, 96, 48),  # a 16-row block and a 1-row remainder; 3 one-vector tiles
    (32, 128, 512),  # two row blocks over one rhs panel
])
def test_products_match_numpy(m, k, n):
    exe = xhlo.compile(_matmul(m, k, n))
    assert _kernel_ran(exe)
    a, b = _inputs((m, k), (k, n))
    np.testing.assert_allclose(exe(a, b), a.astype(np.float64) @ b, rtol=2e-5, atol=2e-5)


def test_transposed_lhs_is_read_in_place():
    """lhs stored [k, m] (contracting dimension 0): no transposed copy, strided scalar reads."""
    k, m, n = 256, 8, 512
    exe = xhlo.compile(_dot(_t((k, m)), _t((k, n)), _t((m, n)), "contracting_dims = [0] x [0]"))
    assert _kernel_ran(exe) and "linalg.transpose" not in _lowered(exe)
    a, b = _inputs((k, m), (k, n))
    np.testing.assert_allclose(exe(a, b), a.T.astype(np.float64) @ b, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("batch", [2, 6])  # column tiles on the pool, then whole matrices
def test_batched_products_and_float64(batch):
    m, k, n = 8, 128, 512
    ta, tb, to = _t((batch, m, k), "f64"), _t((batch, k, n), "f64"), _t((batch, m, n), "f64")
    exe = xhlo.compile(_dot(ta, tb, to, "batching_dims = [0] x [0], contracting_dims = [2] x [1]"))
    assert _kernel_ran(exe) and "xhlo_parallel_for" in _lowered(exe)
    a, b = _inputs((batch, m, k), (batch, k, n), dtype=np.float64)
    np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-12)


def test_folded_scale_multiplies_the_sums():
    t_a, t_b, t_o = _t((8, 128)), _t((128, 256)), _t((8, 256))
    exe = xhlo.compile(f"""func.func @main(%a: {t_a}, %b: {t_b}) -> {t_o} {{
  %c = stablehlo.constant dense<8.0> : {t_o}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({t_a}, {t_b}) -> {t_o}
  %1 = stablehlo.divide %0, %c : {t_o}
  return %1 : {t_o}
}}""")
    assert "xhlo.blas_alpha" in exe.ir("xhlo-fuse-and-vectorize") and _kernel_ran(exe)
    a, b = _inputs((8, 128), (128, 256))
    np.testing.assert_allclose(exe(a, b), (a.astype(np.float64) @ b) / 8, rtol=2e-5, atol=2e-5)


def test_accumulates_into_a_non_zero_result():
    """linalg's C += A B with C an argument: the sums start from C, no zero fill to drop."""
    exe = xhlo.compile("""func.func @main(%a: tensor<16x64xf32>, %b: tensor<64x1024xf32>, %c: tensor<16x1024xf32>) -> tensor<16x1024xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x1024xf32>) outs(%c : tensor<16x1024xf32>) -> tensor<16x1024xf32>
  return %0 : tensor<16x1024xf32>
}""")
    assert _kernel_ran(exe)
    a, b, c = _inputs((16, 64), (64, 1024), (16, 1024))
    for _ in range(2):  # the argument is not updated in place
        np.testing.assert_allclose(exe(a, b, c), c + a.astype(np.float64) @ b, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("m,k,n,why", [
    (64, 64, 512, "more rows than max-rows"),
    (16, 64, 1000, "columns not a multiple of the vector width"),
    (16, 1024, 2048, "an 8 MiB rhs streamed in one-vector tiles"),
    (32, 1024, 512, "two row blocks would read a 64 KiB rhs panel twice"),
])
def test_left_to_blas(m, k, n, why):
    from xhlo import blas

    if not blas.available():
        pytest.skip("scipy-openblas32 not installed")
    exe = xhlo.compile(_matmul(m, k, n))
    assert "call @scipy_cblas_sgemm" in _lowered(exe), why
    a, b = _inputs((m, k), (k, n))
    np.testing.assert_allclose(exe(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m", [1, 2])
def test_a_large_rhs_read_in_wide_tiles(m):
    """A matrix-vector product with an 8 MiB matrix (an LLM's decoding step): each step reads
    at least 512 contiguous bytes of a row, which streams better than BLAS's packing."""
    exe = xhlo.compile(_matmul(m, 1024, 2048))
    assert _kernel_ran(exe)
    a, b = _inputs((m, 1024), (1024, 2048))
    np.testing.assert_allclose(exe(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_column_tiles_run_on_the_thread_pool():
    exe = xhlo.compile(_matmul(16, 384, 1024))
    assert "xhlo_parallel_for" in exe.ir("xhlo-lower-to-loops")

"""xhlo-gemm-to-blas: the sgemm/dgemm calls of tagged contractions, checked against numpy.

Covers the call arguments BLAS is sensitive to: transposes, the leading
dimension of a view into a wider buffer, strided batch calls (with and
without a loop around them), beta = 0 in place of a zero fill, single-row and single-column matrices, accumulation into a
non-zero output, and the loop fallback for buffers BLAS cannot describe.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo import blas
from xhlo._mlir import ir, new_context
from xhlo.pipeline import build_pass_manager

pytestmark = pytest.mark.skipif(not blas.available(), reason="scipy-openblas32 not installed")

RNG = np.random.default_rng(3)


def _t(shape, elem="f32") -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{elem}>"


def blas_calls(exe) -> int:
    return exe.ir("xhlo-lower-to-loops").count("call @scipy_cblas_")


def test_dgemm_for_double():
    t = _t((40, 40), "f64")
    exe = xhlo.compile(f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = stablehlo.dot %a, %b : ({t}, {t}) -> {t}
  return %0 : {t}
}}""")
    assert "call @scipy_cblas_dgemm" in exe.ir("xhlo-lower-to-loops")
    a, b = RNG.standard_normal((40, 40)), RNG.standard_normal((40, 40))
    np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-12)


def test_view_into_a_wider_buffer_uses_its_row_stride():
    """The lhs is columns 16..79 of a 64x96 argument: lda must be 96, not 64."""
    src = f"""func.func @main(%a: {_t((64, 96))}, %b: {_t((64, 48))}) -> {_t((64, 48))} {{
  %s = stablehlo.slice %a [0:64, 16:80] : ({_t((64, 96))}) -> {_t((64, 64))}
  %0 = stablehlo.dot %s, %b : ({_t((64, 64))}, {_t((64, 48))}) -> {_t((64, 48))}
  return %0 : {_t((64, 48))}
}}"""
    a, b = RNG.standard_normal((64, 96)).astype(np.float32), RNG.standard_normal((64, 48)).astype(np.float32)
    exe = xhlo.compile(src)
    assert blas_calls(exe) == 1
    np.testing.assert_allclose(exe(a, b), a[:, 16:80].astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def _batched_dot(ta: str, tb: str, to: str, prologue: str = "", lhs: str = "%a") -> str:
    return f"""func.func @main(%a: {ta}, %b: {tb}) -> {to} {{{prologue}
  %0 = stablehlo.dot_general {lhs}, %b, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : ({_t((2, 3, 40, 32))}, {tb}) -> {to}
  return %0 : {to}
}}"""


def test_nesting_batch_dimensions_are_one_batch_call():
    ta, tb, to = _t((2, 3, 40, 32)), _t((2, 3, 32, 36)), _t((2, 3, 40, 36))
    exe = xhlo.compile(_batched_dot(ta, tb, to))
    loops = exe.ir("xhlo-lower-to-loops")
    assert loops.count("call @scipy_cblas_sgemm_batch_strided") == 1 and "scf.for" not in loops
    a = RNG.standard_normal((2, 3, 40, 32)).astype(np.float32)
    b = RNG.standard_normal((2, 3, 32, 36)).astype(np.float32)
    np.testing.assert_allclose(exe(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_batch_dimensions_that_do_not_nest_loop_around_a_batch_call():
    """The lhs is heads 0..2 of a 5-head argument: a loop over the batch, a batch call over heads."""
    ta, tb, to = _t((2, 5, 40, 32)), _t((2, 3, 32, 36)), _t((2, 3, 40, 36))
    head_slice = f"\n  %s = stablehlo.slice %a [0:2, 0:3, 0:40, 0:32] : ({ta}) -> {_t((2, 3, 40, 32))}"
    exe = xhlo.compile(_batched_dot(ta, tb, to, head_slice, lhs="%s"))
    loops = exe.ir("xhlo-lower-to-loops")
    assert loops.count("call @scipy_cblas_sgemm_batch_strided") == 1 and "scf.for" in loops
    a = RNG.standard_normal((2, 5, 40, 32)).astype(np.float32)
    b = RNG.standard_normal((2, 3, 32, 36)).astype(np.float32)
    np.testing.assert_allclose(exe(a, b), a[:, :3].astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_zero_initialized_product_overwrites_a_reused_buffer():
    """beta = 0 drops the zero fill: the scratch buffer a call reuses must not leak into results."""
    t = _t((64, 64))
    exe = xhlo.compile(f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = stablehlo.dot %a, %b : ({t}, {t}) -> {t}
  %1 = stablehlo.dot %0, %b : ({t}, {t}) -> {t}
  return %1 : {t}
}}""")
    loops = exe.ir("xhlo-lower-to-loops")
    assert blas_calls(exe) == 2 and "linalg.fill" not in loops
    for _ in range(3):
        a, b = RNG.standard_normal((64, 64)).astype(np.float32), RNG.standard_normal((64, 64)).astype(np.float32)
        want = (a.astype(np.float64) @ b) @ b
        np.testing.assert_allclose(exe(a, b), want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("m,n", [(1, 2048), (2048, 1), (1, 1)])
def test_degenerate_rows_and_columns(m, n):
    k = 256 if m * n > 1 else 40000
    ta, tb, to = _t((m, k)), _t((k, n)), _t((m, n))
    exe = xhlo.compile(f"""func.func @main(%a: {ta}, %b: {tb}) -> {to} {{
  %0 = stablehlo.dot %a, %b : ({ta}, {tb}) -> {to}
  return %0 : {to}
}}""")
    a, b = RNG.standard_normal((m, k)).astype(np.float32), RNG.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(exe(a, b), a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3)


def test_accumulates_into_the_output_buffer():
    """linalg semantics: C += A B. On buffers with C = ones the call must add (beta = 1)."""
    memref_ir = """
func.func @f(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, n)>] {xhlo.blas}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}"""
    with new_context():
        module = ir.Module.parse(memref_ir)
        build_pass_manager("xhlo-gemm-to-blas").run(module.operation)
        text = str(module)
    assert "linalg.contract" not in text
    call = next(line for line in text.splitlines() if "call @scipy_cblas_sgemm" in line)
    args = call.split("(", 1)[1].split(")", 1)[0].split(", ")
    alpha, beta = args[6], args[11]
    constant = next(line for line in text.splitlines() if line.strip().startswith(f"{beta} = arith.constant"))
    assert alpha == beta and "1.000000e+00 : f32" in constant


def test_column_major_output_falls_back_to_loops():
    memref_ir = """
func.func @f(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32, strided<[1, 64]>>) {
  linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, n)>] {xhlo.blas}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32, strided<[1, 64]>>)
  return
}"""
    with new_context():
        module = ir.Module.parse(memref_ir)
        build_pass_manager("xhlo-gemm-to-blas").run(module.operation)
        assert "linalg.contract" in str(module) and "cblas" not in str(module)


@pytest.mark.parametrize("scale,folded", [("divide 8.0", True), ("multiply 0.7", True), ("divide 3.0", False)])
def test_scaled_product(scale, folded):
    """(A B) / 8 and (A B) * 0.7 become the call's alpha; / 3 (no exact reciprocal) stays a division."""
    op, value = scale.split()
    t = _t((64, 64))
    exe = xhlo.compile(f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %c = stablehlo.constant dense<{value}> : {t}
  %0 = stablehlo.dot %a, %b : ({t}, {t}) -> {t}
  %1 = stablehlo.{op} %0, %c : {t}
  return %1 : {t}
}}""")
    alpha = "xhlo.blas_alpha" in exe.ir("xhlo-fuse-and-vectorize")
    assert alpha == folded
    a, b = RNG.standard_normal((64, 64)).astype(np.float32), RNG.standard_normal((64, 64)).astype(np.float32)
    product = a.astype(np.float64) @ b
    want = product / float(value) if op == "divide" else product * np.float32(value)
    np.testing.assert_allclose(exe(a, b), want, rtol=1e-4, atol=1e-4)


"""xhlo-prepare-gemms: which contractions become BLAS-bound ``linalg.contract`` ops.

Every dot_general layout JAX produces (plain, transposed operands, batch
dimensions, several contracting dimensions, the result's rows coming from the
rhs) and a 2-D convolution go through the whole pipeline and are compared with
numpy in float64; the IR after ``xhlo-fuse-and-vectorize`` shows whether the
contraction was tagged for BLAS.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo import blas

pytestmark = pytest.mark.skipif(not blas.available(), reason="scipy-openblas32 not installed")

RNG = np.random.default_rng(11)
STAGE = "xhlo-fuse-and-vectorize"


def _t(shape, elem="f32") -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{elem}>"


def dot_module(a_shape, b_shape, out_shape, batch, contract, elem="f32") -> str:
    ta, tb, to = _t(a_shape, elem), _t(b_shape, elem), _t(out_shape, elem)
    (lb, rb), (lc, rc) = batch, contract
    return f"""func.func @main(%a: {ta}, %b: {tb}) -> {to} {{
  %0 = stablehlo.dot_general %a, %b, batching_dims = {lb} x {rb}, contracting_dims = {lc} x {rc}
      : ({ta}, {tb}) -> {to}
  return %0 : {to}
}}"""


def tagged_contractions(text: str) -> int:
    return sum("linalg.contract" in line and "{xhlo.blas}" in line for line in text.splitlines())


def tagged(exe) -> int:
    return tagged_contractions(exe.ir(STAGE))


CASES = {
    # name: (a shape, b shape, out shape, (batch dims), (contracting dims), einsum)
    "matmul": ((64, 96), (96, 80), (64, 80), ([], []), ([1], [0]), "mk,kn->mn"),
    "lhs_transposed": ((96, 64), (96, 80), (64, 80), ([], []), ([0], [0]), "km,kn->mn"),
    "rhs_transposed": ((64, 96), (80, 96), (64, 80), ([], []), ([1], [1]), "mk,nk->mn"),
    "both_transposed": ((96, 64), (80, 96), (64, 80), ([], []), ([0], [1]), "km,nk->mn"),
    "batched": ((3, 40, 50), (3, 50, 60), (3, 40, 60), ([0], [0]), ([2], [1]), "bmk,bkn->bmn"),
    "two_batch_dims_attention_scores": ((2, 3, 40, 32), (2, 3, 48, 32), (2, 3, 40, 48), ([0, 1], [0, 1]),
                                        ([3], [3]), "bhqd,bhkd->bhqk"),
    "two_contracting_dims": ((40, 8, 6), (8, 6, 50), (40, 50), ([], []), ([1, 2], [0, 1]), "mij,ijn->mn"),
    "lhs_free_dims_are_columns_of_neither": ((96, 80), (64, 96), (80, 64), ([], []), ([0], [1]), "kn,mk->nm"),
    "matrix_rows_groups": ((4, 10, 96), (96, 80), (4, 10, 80), ([], []), ([2], [0]), "abk,kn->abn"),
    # no matrix view of the lhs: rows between two contracting dims (a transposed copy first)
    "lhs_rows_between_inner_dims": ((8, 40, 6), (8, 6, 50), (40, 50), ([], []), ([0, 2], [0, 1]), "imj,ijn->mn"),
    # ... of the rhs: contracting dims in the other order than the lhs's, columns between them
    "rhs_inner_dims_reordered": ((40, 8, 6), (6, 50, 8), (40, 50), ([], []), ([1, 2], [2, 0]), "mij,jni->mn"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dot_general_layouts(name):
    a_shape, b_shape, out_shape, batch, contract, spec = CASES[name]
    a = RNG.standard_normal(a_shape).astype(np.float32)
    b = RNG.standard_normal(b_shape).astype(np.float32)
    exe = xhlo.compile(dot_module(a_shape, b_shape, out_shape, batch, contract))
    assert tagged(exe) == 1
    expected = np.einsum(spec, a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(exe(a, b), expected, rtol=1e-4, atol=1e-4)


def test_heads_merged_before_the_output_projection():
    """Attention's ``[b, h, q, d] -> [b, q, h*d]`` before ``@ wo``: fusion folds the transpose
    and reshape into the contraction, whose lhs then interleaves rows (b, q) and inner
    loops (h, d). A transposed copy of the lhs makes it a BLAS-bound matmul again."""
    b, h, q, d, n = 2, 4, 32, 16, 48
    src = f"""func.func @main(%o: {_t((b, h, q, d))}, %w: {_t((h * d, n))}) -> {_t((b, q, n))} {{
  %t = stablehlo.transpose %o, dims = [0, 2, 1, 3] : ({_t((b, h, q, d))}) -> {_t((b, q, h, d))}
  %r = stablehlo.reshape %t : ({_t((b, q, h, d))}) -> {_t((b, q, h * d))}
  %y = stablehlo.dot_general %r, %w, contracting_dims = [2] x [0] : ({_t((b, q, h * d))}, {_t((h * d, n))}) -> {_t((b, q, n))}
  return %y : {_t((b, q, n))}
}}"""
    o = RNG.standard_normal((b, h, q, d)).astype(np.float32)
    w = RNG.standard_normal((h * d, n)).astype(np.float32)
    exe = xhlo.compile(src)
    assert tagged(exe) == 1
    merged = o.astype(np.float64).transpose(0, 2, 1, 3).reshape(b, q, h * d)
    np.testing.assert_allclose(exe(o, w), merged @ w, rtol=1e-4, atol=1e-4)


def test_unit_loop_between_batch_dims_is_dropped():
    """JAX's ``dot_product_attention``: the probabilities ``[1, b, n, t, s]`` reach the values'
    product with a one-long loop between the result's rows and columns; without it the
    product is a batched matmul (it had stayed loops, 7.5x XLA's time). Checked against
    numpy through the whole pipeline, both products tagged for BLAS."""
    b, s, n, h = 2, 64, 4, 32
    src = f"""func.func @main(%v: {_t((b, s, n, h))}, %p: {_t((1, b, n, s, s))}) -> {_t((b, n, h, 1, s))} {{
  %y = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [1, 2], contracting_dims = [1] x [4] : ({_t((b, s, n, h))}, {_t((1, b, n, s, s))}) -> {_t((b, n, h, 1, s))}
  return %y : {_t((b, n, h, 1, s))}
}}"""
    v = RNG.standard_normal((b, s, n, h)).astype(np.float32)
    p = RNG.random((1, b, n, s, s)).astype(np.float32)
    exe = xhlo.compile(src)
    assert tagged(exe) == 1
    expected = np.einsum("bsnh,bnts->bnht", v.astype(np.float64), p[0].astype(np.float64))[:, :, :, None, :]
    np.testing.assert_allclose(exe(v, p), expected, rtol=1e-4, atol=1e-4)


def test_jax_dot_product_attention():
    jax = pytest.importorskip("jax")
    from jax import export

    q, k, v = (RNG.standard_normal((2, 128, 4, 32)).astype(np.float32) for _ in range(3))
    attention = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True))
    exe = xhlo.compile(export.export(attention, platforms=["cpu"])(q, k, v))
    assert tagged(exe) == 2
    np.testing.assert_allclose(exe(q, k, v), np.asarray(attention(q, k, v)), rtol=1e-4, atol=1e-5)


TRANSPOSED_WEIGHT = """func.func @main(%w: tensor<96x64xf32>, %g: tensor<48x64xf32>) -> tensor<48x96xf32> {
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<96x64xf32>) -> tensor<64x96xf32>
  %y = stablehlo.dot_general %g, %t, contracting_dims = [1] x [0] : (tensor<48x64xf32>, tensor<64x96xf32>) -> tensor<48x96xf32>
  return %y : tensor<48x96xf32>
}"""


def test_transposed_input_is_read_in_place():
    """``g @ W.T`` as JAX exports it (a transpose, then a plain dot): the BLAS call reads ``W``
    with a transposed-operand flag; no transposed copy of it is made."""
    w = RNG.standard_normal((96, 64)).astype(np.float32)
    g = RNG.standard_normal((48, 64)).astype(np.float32)
    exe = xhlo.compile(TRANSPOSED_WEIGHT)
    assert tagged(exe) == 1
    assert "scf.for" not in exe.ir(STAGE)  # the copy would be a vectorized loop nest
    np.testing.assert_allclose(exe(w, g), g.astype(np.float64) @ w.T, rtol=1e-4, atol=1e-4)


def test_transposed_product_is_computed_directly():
    """A dense layer's weight gradient as JAX exports it: ``x.T @ g`` in the order the
    dot gives, then transposed to the weight's shape. BLAS computes the transposed
    product directly (``C^T = B^T A^T``); no transposed copy of the result is made."""
    src = """func.func @main(%x: tensor<48x96xf32>, %g: tensor<48x64xf32>) -> tensor<96x64xf32> {
  %p = stablehlo.dot_general %g, %x, contracting_dims = [0] x [0] : (tensor<48x64xf32>, tensor<48x96xf32>) -> tensor<64x96xf32>
  %t = stablehlo.transpose %p, dims = [1, 0] : (tensor<64x96xf32>) -> tensor<96x64xf32>
  return %t : tensor<96x64xf32>
}"""
    x = RNG.standard_normal((48, 96)).astype(np.float32)
    g = RNG.standard_normal((48, 64)).astype(np.float32)
    exe = xhlo.compile(src)
    assert tagged(exe) == 1
    assert "scf.for" not in exe.ir(STAGE)
    np.testing.assert_allclose(exe(x, g), x.astype(np.float64).T @ g, rtol=1e-4, atol=1e-4)


def test_a_copy_too_large_for_its_product_stays_loops():
    """Four rows: each element of the rhs copy would buy only four multiply-adds."""
    module = dot_module((4, 64, 32), (32, 256, 64), (4, 256), ([], []), ([1, 2], [2, 0]))
    a = RNG.standard_normal((4, 64, 32)).astype(np.float32)
    b = RNG.standard_normal((32, 256, 64)).astype(np.float32)
    exe = xhlo.compile(module)
    assert tagged(exe) == 0
    np.testing.assert_allclose(exe(a, b), np.einsum("mij,jni->mn", a.astype(np.float64), b), rtol=1e-4, atol=1e-3)


def test_double_precision():
    a, b = RNG.standard_normal((70, 90)), RNG.standard_normal((90, 50))
    exe = xhlo.compile(dot_module((70, 90), (90, 50), (70, 50), ([], []), ([1], [0]), "f64"))
    assert tagged(exe) == 1
    np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-12)


def test_small_integer_and_matvec_products_stay_loops():
    small = xhlo.compile(dot_module((8, 8), (8, 8), (8, 8), ([], []), ([1], [0])))
    ints = xhlo.compile(dot_module((64, 64), (64, 64), (64, 64), ([], []), ([1], [0]), "i32"))
    matvec = xhlo.compile(dot_module((256, 256), (256,), (256,), ([], []), ([1], [0])))
    assert tagged(small) == tagged(ints) == tagged(matvec) == 0
    a = RNG.integers(-9, 9, (64, 64)).astype(np.int32)
    np.testing.assert_array_equal(ints(a, a), a @ a)
    m, v = RNG.standard_normal((256, 256)).astype(np.float32), RNG.standard_normal(256).astype(np.float32)
    np.testing.assert_allclose(matvec(m, v), m.astype(np.float64) @ v, rtol=1e-4, atol=1e-4)


def test_bias_and_relu_are_not_pulled_into_the_matmul():
    """x @ w1 + b, relu, @ w2: both products stay BLAS-bound after elementwise fusion."""
    src = """func.func @main(%x: tensor<32x64xf32>, %w1: tensor<64x128xf32>, %b: tensor<128xf32>,
                     %w2: tensor<128x16xf32>) -> tensor<32x16xf32> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<128xf32>) -> tensor<32x128xf32>
  %s = stablehlo.add %h, %bb : tensor<32x128xf32>
  %z = stablehlo.constant dense<0.0> : tensor<32x128xf32>
  %r = stablehlo.maximum %s, %z : tensor<32x128xf32>
  %y = stablehlo.dot_general %r, %w2, contracting_dims = [1] x [0] : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}"""
    x, w1 = RNG.standard_normal((32, 64)).astype(np.float32), RNG.standard_normal((64, 128)).astype(np.float32)
    b, w2 = RNG.standard_normal(128).astype(np.float32), RNG.standard_normal((128, 16)).astype(np.float32)
    exe = xhlo.compile(src)
    assert tagged(exe) == 2
    h = np.maximum(x.astype(np.float64) @ w1 + b, 0)
    np.testing.assert_allclose(exe(x, w1, b, w2), h @ w2, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("padding", ["[[1, 1], [1, 1]]", "[[0, 0], [0, 0]]"])
def test_convolution_becomes_im2col_times_filter(padding):
    out = 16 if padding.startswith("[[1") else 14
    src = f"""func.func @main(%x: tensor<2x16x16x8xf32>, %w: tensor<3x3x8x12xf32>) -> tensor<2x{out}x{out}x12xf32> {{
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {{stride = [1, 1], pad = {padding}}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}}
       : (tensor<2x16x16x8xf32>, tensor<3x3x8x12xf32>) -> tensor<2x{out}x{out}x12xf32>
  return %0 : tensor<2x{out}x{out}x12xf32>
}}"""
    x = RNG.standard_normal((2, 16, 16, 8)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 8, 12)).astype(np.float32)
    exe = xhlo.compile(src)
    assert tagged(exe) == 1
    p = 1 if out == 16 else 0
    xp = np.pad(x.astype(np.float64), ((0, 0), (p, p), (p, p), (0, 0)))
    expected = np.zeros((2, out, out, 12))
    for i in range(3):
        for j in range(3):
            expected += np.einsum("nhwc,cf->nhwf", xp[:, i:i + out, j:j + out, :], w[i, j])
    np.testing.assert_allclose(exe(x, w), expected, rtol=1e-4, atol=1e-4)


def test_min_volume_option():
    from xhlo._mlir import ir, new_context
    from xhlo.pipeline import build_pass_manager

    text = xhlo.compile(dot_module((64, 64), (64, 64), (64, 64), ([], []), ([1], [0]))).ir("xhlo-stablehlo-to-linalg")
    with new_context():
        for volume, tags in ((64**3, 1), (64**3 + 1, 0)):
            module = ir.Module.parse(text)
            build_pass_manager(f"xhlo-prepare-gemms{{min-volume={volume}}}").run(module.operation)
            assert tagged_contractions(str(module)) == tags


def test_producers_fused_into_a_reshaped_product_are_computed_apart():
    """A layer norm before ``@ w`` whose result is split into heads: folding the reshape
    turns the named contraction back into a generic, and fusion then pulls the layer norm
    (and the conversion of a bf16 operand) into its multiply-add body. The factors are
    computed in elementwise generics of their own again, and the product goes to BLAS
    (it had been a vector loop per output row: 13-31 ms against 0.3-2 for BLAS)."""
    b, s, d, h = 2, 64, 128, 4
    src = f"""func.func @main(%x: {_t((b, s, d))}, %g: {_t((d,))}, %w: {_t((d, d))}) -> {_t((b, h, s, d // h))} {{
  %gb = stablehlo.broadcast_in_dim %g, dims = [2] : ({_t((d,))}) -> {_t((b, s, d))}
  %t = stablehlo.tanh %x : {_t((b, s, d))}
  %n = stablehlo.multiply %t, %gb : {_t((b, s, d))}
  %y = stablehlo.dot_general %n, %w, contracting_dims = [2] x [0] : ({_t((b, s, d))}, {_t((d, d))}) -> {_t((b, s, d))}
  %r = stablehlo.reshape %y : ({_t((b, s, d))}) -> {_t((b, s, h, d // h))}
  %p = stablehlo.transpose %r, dims = [0, 2, 1, 3] : ({_t((b, s, h, d // h))}) -> {_t((b, h, s, d // h))}
  return %p : {_t((b, h, s, d // h))}
}}"""
    x, g = RNG.standard_normal((b, s, d)).astype(np.float32), RNG.standard_normal(d).astype(np.float32)
    w = RNG.standard_normal((d, d)).astype(np.float32)
    exe = xhlo.compile(src, keep_ir=True)
    assert tagged(exe) == 1 and "sgemm" in exe.ir("xhlo-lower-to-loops")
    y = (np.tanh(x.astype(np.float64)) * g) @ w
    np.testing.assert_allclose(exe(x, g, w), y.reshape(b, s, h, d // h).transpose(0, 2, 1, 3), rtol=1e-4, atol=1e-4)

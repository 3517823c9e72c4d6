"""bf16 products: xhlo-bf16-gemm-operands and xhlo-lower-bf16-gemms against numpy.

Every product is exported from JAX and checked against the float64 product of
the same bf16 inputs, within the error of f32 sums (``K * 2**-24`` of
``|a| @ |b|``, the bound of any summation order). On a host with AVX512-BF16
the shapes the kernel takes must run on ``vdpbf16ps`` (no sgemm, no f32
copies); elsewhere, and for the shapes it does not take, they go to sgemm.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
import xhlo
from jax import export
from xhlo import host

RNG = np.random.default_rng(5)
HAS_BF16_DOT = "avx512_bf16" in host.cpu_flags()


def _bf16(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(ml_dtypes.bfloat16)


def _compile(fn, *args) -> xhlo.Executable:
    return xhlo.compile(export.export(jax.jit(fn))(*args).mlir_module(), cache=False, keep_ir=True)


def _runs_on_bf16_dots(exe: xhlo.Executable) -> bool:
    loops = exe.ir("xhlo-lower-to-loops")
    return "x86.avx512.dot" in loops and "sgemm" not in loops


def _check_product(out, a, b, subscripts: str = "...ij,...jk->...ik", scale: float = 1.0) -> None:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    expected = np.einsum(subscripts, a64, b64) * scale
    bound = a.shape[-1] * 2.0 ** -24 * np.einsum(subscripts, abs(a64), abs(b64)) * abs(scale)
    assert out.dtype == np.float32 and out.shape == expected.shape
    assert np.all(abs(out - expected) <= bound), float(np.max(abs(out - expected) - bound))


def _matmul_f32(a, b):
    return jnp.matmul(a, b, preferred_element_type=jnp.float32)


@pytest.mark.parametrize("m,k,n", [
    (250, 512, 512),  # 6 x 4 blocks; two chunks of rows, the last block of the second from row 244
    (100, 64, 96),  # 12 x 2 blocks, the last from row 88
    (130, 200, 48),  # 12 x 1 blocks, the last from row 118
    (5, 1024, 64),  # fewer rows than a block
])
def test_products_of_bf16_matrices(m, k, n):
    a, b = _bf16(m, k), _bf16(k, n)
    exe = _compile(_matmul_f32, a, b)
    _check_product(np.asarray(exe(a, b)), a, b)
    assert _runs_on_bf16_dots(exe) == HAS_BF16_DOT


@pytest.mark.parametrize("m,k,n", [(1, 1024, 4096), (3, 256, 48), (4, 512, 512)])
def test_few_rows_read_the_rhs_in_place(m, k, n):
    """A decoding step's product (at most 4 rows): the rhs is read where it lies, not packed."""
    a, b = _bf16(m, k), _bf16(k, n)
    exe = _compile(_matmul_f32, a, b)
    _check_product(np.asarray(exe(a, b)), a, b)
    assert _runs_on_bf16_dots(exe) == HAS_BF16_DOT
    assert not any("memref.alloc" in line and "xbf16>" in line for line in exe.ir("xhlo-lower-to-loops").splitlines())


def test_batched_product_and_a_folded_scale():
    """A batch of products, scaled as attention's scores are (the scale folds into the kernel)."""
    a, b = _bf16(3, 64, 128), _bf16(3, 128, 64)
    exe = _compile(lambda x, y: jnp.einsum("bij,bjk->bik", x, y, preferred_element_type=jnp.float32) / 8, a, b)
    _check_product(np.asarray(exe(a, b)), a, b, scale=1 / 8)
    assert _runs_on_bf16_dots(exe) == HAS_BF16_DOT


def test_bf16_result_is_the_rounded_f32_product():
    """JAX's default bf16 matmul: f32 sums rounded once to bf16."""
    a, b = _bf16(128, 256), _bf16(256, 128)
    exe = _compile(jnp.matmul, a, b)
    out = np.asarray(exe(a, b))
    assert out.dtype == ml_dtypes.bfloat16
    expected = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32).astype(ml_dtypes.bfloat16)
    ulp = np.abs(out.astype(np.float32) - expected.astype(np.float32)) / np.maximum(abs(expected.astype(np.float32)), 1e-3)
    assert np.max(ulp) <= 2.0 ** -7  # at most one bf16 rounding step apart
    assert _runs_on_bf16_dots(exe) == HAS_BF16_DOT


def test_transposed_operands():
    """A dense layer's gradients as JAX's autodiff writes them (dot_general contracting the
    stored dims, no transposed copy): ``g @ w.T`` reads w stored cols x inner (its pairs
    transposed into the panels), ``x.T @ g`` reads x stored inner x rows (its row pairs
    interleaved into a copy)."""
    x, w, g = _bf16(96, 256), _bf16(256, 160), _bf16(96, 160)
    exe = _compile(lambda w, g: jnp.einsum("mk,nk->mn", g, w, preferred_element_type=jnp.float32), w, g)
    _check_product(np.asarray(exe(w, g)), g, w.T)
    assert _runs_on_bf16_dots(exe) == HAS_BF16_DOT
    assert ("vector<16xi32>, vector<16xi32>" in exe.ir("xhlo-lower-to-loops")) == HAS_BF16_DOT  # the transposes
    exe = _compile(lambda x, g: jnp.einsum("km,kn->mn", x, g, preferred_element_type=jnp.float32), x, g)
    _check_product(np.asarray(exe(x, g)), x.T, g)
    assert _runs_on_bf16_dots(exe) == HAS_BF16_DOT
    assert ("memref<48x512xbf16>" in exe.ir("xhlo-lower-to-loops")) == HAS_BF16_DOT  # the lhs's pairs


def test_attention_scores():
    """``q @ k.T / sqrt(d)`` over batch and heads: transposed rhs, folded scale."""
    q, k = _bf16(2, 4, 128, 64), _bf16(2, 4, 128, 64)
    exe = _compile(lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k, preferred_element_type=jnp.float32) / 8, q, k)
    _check_product(np.asarray(exe(q, k)), q, np.swapaxes(k, -1, -2), scale=1 / 8)
    assert _runs_on_bf16_dots(exe) == HAS_BF16_DOT


@pytest.mark.parametrize("case", ["odd inner", "transposed rhs of 48 inner", "transposed lhs of 40 rows",
                                  "columns not whole vectors"])
def test_shapes_the_kernel_does_not_take_go_to_sgemm(case):
    fn, a, b = {
        "odd inner": (_matmul_f32, _bf16(64, 127), _bf16(127, 64)),
        "transposed rhs of 48 inner": (lambda x, w: jnp.einsum("mk,nk->mn", x, w, preferred_element_type=jnp.float32),
                                       _bf16(64, 48), _bf16(64, 48)),
        "transposed lhs of 40 rows": (lambda x, g: jnp.einsum("km,kn->mn", x, g, preferred_element_type=jnp.float32),
                                      _bf16(128, 40), _bf16(128, 64)),
        "columns not whole vectors": (_matmul_f32, _bf16(64, 128), _bf16(128, 40)),
    }[case]
    exe = _compile(fn, a, b)
    lhs, rhs = (a, b.T) if "rhs" in case else (a.T, b) if "lhs" in case else (a, b)
    _check_product(np.asarray(exe(a, b)), lhs, rhs)
    assert not _runs_on_bf16_dots(exe)
    assert "sgemm" in exe.ir("xhlo-lower-to-loops")


def test_conversions_read_elsewhere_stay():
    """An f32 copy of an operand that is also a result is still computed."""
    a, b = _bf16(64, 128), _bf16(128, 64)
    exe = _compile(lambda x, y: (_matmul_f32(x, y), x.astype(jnp.float32)), a, b)
    product, widened = exe(a, b)
    _check_product(np.asarray(product), a, b)
    np.testing.assert_array_equal(widened, a.astype(np.float32))
    assert _runs_on_bf16_dots(exe) == HAS_BF16_DOT


def test_bf16_results_of_f32_math_feed_the_kernel():
    """A bf16 layer norm computes in f32 and rounds to bf16 before the bf16 product: the
    product reads the rounded bf16 values (the layer norm yields them), split into heads."""
    x, w = _bf16(2, 64, 128), _bf16(128, 128)

    def fn(x, w):
        mean = x.mean(-1, keepdims=True)
        normed = (x - mean) * jax.lax.rsqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)
        return (normed.astype(jnp.bfloat16) @ w).reshape(2, 64, 4, 32).transpose(0, 2, 1, 3)

    exe = _compile(fn, x, w)
    out = np.asarray(exe(x, w), np.float32).transpose(0, 2, 1, 3).reshape(2, 64, 128)
    x64 = x.astype(np.float64)
    normed = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    w64 = w.astype(np.float64)
    # bf16 rounding of the normalized values and of the result: a few 2**-8 of |normed| @ |w|
    assert np.all(abs(out - normed @ w64) <= 2.0 ** -6 * (abs(normed) @ abs(w64)))
    assert _runs_on_bf16_dots(exe) == HAS_BF16_DOT

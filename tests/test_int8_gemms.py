"""int8 products: xhlo-int8-gemm-operands and xhlo-lower-int8-gemms against numpy.

Every product is exported from JAX and checked exactly against numpy's int64
product of the same int8 inputs (wrapped to i32 where the product's type is
i32). On a host with AVX512-VNNI the shapes the kernel takes must run on
``vpdpbusd`` (no BLAS, no float copies); elsewhere, and for the shapes it does
not take, they run in floats (sgemm or dgemm, exact: xhlo-integer-dots-in-float).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import xhlo
from jax import export
from xhlo import host

RNG = np.random.default_rng(8)
HAS_VNNI = "avx512_vnni" in host.cpu_flags()


def _int8(*shape: int) -> np.ndarray:
    return RNG.integers(-128, 128, shape).astype(np.int8)


def _compile(fn, *args) -> xhlo.Executable:
    import jax

    return xhlo.compile(export.export(jax.jit(fn))(*args).mlir_module(), cache=False, keep_ir=True)


def _runs_on_vnni(exe: xhlo.Executable) -> bool:
    loops = exe.ir("xhlo-lower-to-loops")
    return "vpdpbusd" in loops and "gemm" not in loops


def _product(subscripts: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The exact product, wrapped to i32 as the product's i32 arithmetic wraps."""
    return np.einsum(subscripts, a.astype(np.int64), b.astype(np.int64)).astype(np.int32)


def _int32_matmul(a, b):
    return jnp.matmul(a, b, preferred_element_type=jnp.int32)


@pytest.mark.parametrize("m,k,n", [
    (250, 512, 512),  # 6 x 4 blocks; two chunks of rows, the last block of the second from row 244
    (100, 64, 96),  # 12 x 2 blocks, the last from row 88
    (130, 200, 48),  # 12 x 1 blocks
    (5, 2048, 64),  # fewer rows than a block; past 1024 inner elements (dgemm before)
])
def test_products_of_int8_matrices(m, k, n):
    a, b = _int8(m, k), _int8(k, n)
    exe = _compile(_int32_matmul, a, b)
    out = np.asarray(exe(a, b))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, _product("ij,jk->ik", a, b))
    assert _runs_on_vnni(exe) == HAS_VNNI


@pytest.mark.parametrize("m,k,n", [(1, 2048, 4096), (2, 512, 96), (3, 256, 48), (4, 1024, 512)])
def test_few_rows_read_the_rhs_in_place(m, k, n):
    """A decoding step's product (at most 4 rows): the rhs is not packed but read where it lies,
    read unsigned, with each row's sum correcting its sums."""
    a, b = _int8(m, k), _int8(k, n)
    exe = _compile(_int32_matmul, a, b)
    np.testing.assert_array_equal(np.asarray(exe(a, b)), _product("ij,jk->ik", a, b))
    assert _runs_on_vnni(exe) == HAS_VNNI
    packed = any("memref.alloc" in line and "xi8>" in line for line in exe.ir("xhlo-lower-to-loops").splitlines())
    assert not packed


def test_extreme_values():
    """-128 x -128 everywhere: the largest products, and the flipped sign bit of the lhs
    (-128 read as 0) with the column sums' correction."""
    for rows in (24, 2):  # packed, and read in place
        a, b = np.full((rows, 512), -128, np.int8), np.full((512, 32), -128, np.int8)
        b[:, 1::2] = 127
        a[:, 1::3] = 127
        exe = _compile(_int32_matmul, a, b)
        np.testing.assert_array_equal(np.asarray(exe(a, b)), _product("ij,jk->ik", a, b))
        assert _runs_on_vnni(exe) == HAS_VNNI


def test_dequantized_dense_layer():
    """``(x @ w.T).astype(f32) * scale``: a transposed rhs (its groups transposed into the
    panels), the dequantization reading the i32 sums directly."""
    x, w, scale = _int8(96, 512), _int8(160, 512), RNG.standard_normal(160).astype(np.float32)
    exe = _compile(lambda x, w, s: jnp.matmul(x, w.T, preferred_element_type=jnp.int32).astype(jnp.float32) * s,
                   x, w, scale)
    expected = _product("mk,nk->mn", x, w).astype(np.float32) * scale
    np.testing.assert_array_equal(np.asarray(exe(x, w, scale)), expected)
    assert _runs_on_vnni(exe) == HAS_VNNI
    float_copies = "xi8> to vector<16xf32>" in exe.ir("xhlo-fuse-and-vectorize")  # int8 operands converted
    assert float_copies != HAS_VNNI


def test_transposed_lhs_and_batches():
    """``x.T @ g`` (the lhs's row groups interleaved into a copy) over a batch."""
    x, g = _int8(3, 128, 64), _int8(3, 128, 80)
    exe = _compile(lambda x, g: jnp.einsum("bkm,bkn->bmn", x, g, preferred_element_type=jnp.int32), x, g)
    np.testing.assert_array_equal(np.asarray(exe(x, g)), _product("bkm,bkn->bmn", x, g))
    assert _runs_on_vnni(exe) == HAS_VNNI


def test_float_readers_of_the_sums():
    """A reader of the float sums other than a conversion back (the product plus one, in
    f32, next to the i32 product) reads their float form."""
    a, b = _int8(64, 128), _int8(128, 64)
    exe = _compile(lambda a, b: (_int32_matmul(a, b), jnp.matmul(a.astype(jnp.float32), b.astype(jnp.float32)) + 1),
                   a, b)
    product, plus_one = exe(a, b)
    np.testing.assert_array_equal(product, _product("ij,jk->ik", a, b))
    np.testing.assert_array_equal(plus_one, _product("ij,jk->ik", a, b).astype(np.float32) + 1)
    assert _runs_on_vnni(exe) == HAS_VNNI


@pytest.mark.parametrize("case", ["inner not whole groups", "transposed rhs of 96 inner", "columns not whole vectors"])
def test_shapes_the_kernel_does_not_take_stay_in_floats(case):
    fn, a, b, subscripts = {
        "inner not whole groups": (_int32_matmul, _int8(64, 130), _int8(130, 64), "ij,jk->ik"),
        "transposed rhs of 96 inner": (lambda x, w: jnp.einsum("mk,nk->mn", x, w, preferred_element_type=jnp.int32),
                                       _int8(64, 96), _int8(64, 96), "mk,nk->mn"),
        "columns not whole vectors": (_int32_matmul, _int8(64, 128), _int8(128, 40), "ij,jk->ik"),
    }[case]
    exe = _compile(fn, a, b)
    np.testing.assert_array_equal(np.asarray(exe(a, b)), _product(subscripts, a, b))
    assert not _runs_on_vnni(exe)
    assert "gemm" in exe.ir("xhlo-lower-to-loops")

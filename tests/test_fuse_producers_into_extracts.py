"""xhlo-fuse-producers-into-extracts: gathers read elementwise producers where they stand.

Oracles: numpy on the same inputs, and JAX for its exported cross-entropy.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import xhlo

RNG = np.random.default_rng(5)


def _materialized(exe, shape: str) -> bool:
    """Is a tensor of ``shape`` (e.g. ``64x100xf32``) still made after fusion?"""
    return re.search(rf"tensor\.empty\(\) : tensor<{shape}>", exe.ir("xhlo-fuse-and-vectorize")) is not None


def test_cross_entropy_reads_only_the_labelled_log_probabilities():
    """take_along_axis(log_softmax(x), labels): the 64x100 log_softmax is never stored."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import export

    def loss(logits, labels):
        return -jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], 1).mean()

    logits = RNG.standard_normal((64, 100)).astype(np.float32) * 4
    labels = RNG.integers(0, 100, 64).astype(np.int32)
    exe = xhlo.compile(export.export(jax.jit(loss), platforms=["cpu"])(logits, labels))
    assert not _materialized(exe, "64x100xf32")
    x = logits.astype(np.float64)
    log_probs = x - x.max(1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(1, keepdims=True))
    expected = -log_probs[np.arange(64), labels].mean()
    np.testing.assert_allclose(exe(logits, labels), expected, rtol=1e-5)
    np.testing.assert_allclose(exe(logits, labels), np.asarray(jax.jit(loss)(logits, labels)), rtol=1e-6)


GATHER_ROWS = """func.func @main(%x: tensor<{n}x16xf32>, %i: tensor<{k}x1xi32>) -> ({result}) {{
  %e = stablehlo.exponential %x : tensor<{n}x16xf32>
  %g = "stablehlo.gather"(%e, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [1],
      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
      slice_sizes = array<i64: 1, 16>}}> : (tensor<{n}x16xf32>, tensor<{k}x1xi32>) -> tensor<{k}x16xf32>
  return {returned}
}}"""


@pytest.mark.parametrize("n,k,fused", [(64, 8, True), (8, 64, False)])
def test_a_gather_recomputes_only_when_it_reads_fewer_elements(n, k, fused):
    """8 rows of exp(64x16) are computed in the gather; 64 reads of exp(8x16) keep the table."""
    module = GATHER_ROWS.format(n=n, k=k, result=f"tensor<{k}x16xf32>", returned=f"%g : tensor<{k}x16xf32>")
    x = RNG.standard_normal((n, 16)).astype(np.float32)
    rows = RNG.integers(0, n, (k, 1)).astype(np.int32)
    exe = xhlo.compile(module)
    assert _materialized(exe, f"{n}x16xf32") != fused
    np.testing.assert_allclose(exe(x, rows), np.exp(x)[rows[:, 0]], rtol=1e-6)


def test_a_producer_read_elsewhere_too_stays_for_its_other_reader():
    module = GATHER_ROWS.format(
        n=64, k=8, result="tensor<8x16xf32>, tensor<64x16xf32>",
        returned="%g, %e : tensor<8x16xf32>, tensor<64x16xf32>")
    x = RNG.standard_normal((64, 16)).astype(np.float32)
    rows = RNG.integers(0, 64, (8, 1)).astype(np.int32)
    gathered, whole = xhlo.compile(module)(x, rows)
    np.testing.assert_allclose(whole, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(gathered, np.exp(x)[rows[:, 0]], rtol=1e-6)


def test_a_binary_search_keeps_its_steps_apart():
    """jnp.histogram's searchsorted is a chain of gathers, each reading the index the
    step before computed (also read by the next step's update): nothing is copied
    into the gathers, which had nested the whole chain into each of them."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import export

    def histogram(x):
        return jnp.histogram(x, 64, (-4.0, 4.0))[0]

    x = RNG.standard_normal(1 << 20).astype(np.float32)  # large enough for JAX's scan method
    exe = xhlo.compile(export.export(jax.jit(histogram), platforms=["cpu"])(x))
    gathers = exe.ir("xhlo-stablehlo-to-linalg").count("tensor.extract ")
    assert exe.ir("xhlo-fuse-and-vectorize").count("tensor.extract ") <= gathers  # 112 against 25 when copied
    np.testing.assert_array_equal(exe(x), np.histogram(x, 64, (-4.0, 4.0))[0])

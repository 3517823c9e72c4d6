"""xhlo-fuse-row-reductions: a row's reductions and the elementwise ops reading them run
in one loop over rows. Every program is checked against numpy; the vectorized stage
shows whether the chain became one row loop (fused) or stayed op by op.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo._mlir import ir, new_context

from .test_parallelize_loops import softmax_module

RNG = np.random.default_rng(5)


def _top_level_loops(exe: xhlo.Executable) -> int:
    """scf.for loops directly in @main after vectorization: one per op nest left unfused."""
    with new_context():
        module = ir.Module.parse(exe.ir("xhlo-fuse-and-vectorize"))
        main = next(op for op in module.body.operations if op.operation.name == "func.func")
        return sum(op.operation.name == "scf.for" for op in main.regions[0].blocks[0].operations)


def _softmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    e = np.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


def _softmax_over_trailing(shape: tuple[int, ...], reduced: int, also_max: bool = False) -> str:
    """Softmax over the last ``reduced`` dimensions of a tensor of ``shape`` (and the
    maxima as a second result)."""
    kept = len(shape) - reduced
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    r = f"tensor<{'x'.join(map(str, shape[:kept]))}xf32>"
    dims = ", ".join(str(d) for d in range(kept, len(shape)))
    keep = ", ".join(str(d) for d in range(kept))
    results, values = (f"{t}, {r}", "%y, %m") if also_max else (t, "%y")
    return f"""
func.func @main(%x: {t}) -> ({results}) {{
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [{dims}] : ({t}, tensor<f32>) -> {r}
  %mb = stablehlo.broadcast_in_dim %m, dims = [{keep}] : ({r}) -> {t}
  %d = stablehlo.subtract %x, %mb : {t}
  %e = stablehlo.exponential %d : {t}
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [{dims}] : ({t}, tensor<f32>) -> {r}
  %sb = stablehlo.broadcast_in_dim %s, dims = [{keep}] : ({r}) -> {t}
  %y = stablehlo.divide %e, %sb : {t}
  return {values} : {results}
}}"""


@pytest.mark.parametrize("shape, reduced", [((64, 512), 1), ((2, 3, 4, 256), 1), ((4, 8, 16, 32), 2)])
def test_softmax_is_one_row_loop(shape, reduced):
    x = RNG.standard_normal(shape).astype(np.float32) * 4
    exe = xhlo.compile(_softmax_over_trailing(shape, reduced), cache=False)
    np.testing.assert_allclose(exe(x), _softmax(x, tuple(range(len(shape) - reduced, len(shape)))),
                               rtol=2e-6, atol=1e-7)
    assert _top_level_loops(exe) == 1


def test_a_reduction_read_outside_the_chain_is_computed_once():
    """The row maxima are a result too: the max stays outside the row loop (computed
    once), the sum and the division still fuse."""
    x = RNG.standard_normal((32, 1024)).astype(np.float32)
    exe = xhlo.compile(_softmax_over_trailing((32, 1024), 1, also_max=True), cache=False)
    y, m = exe(x)
    np.testing.assert_array_equal(m, x.max(axis=1))
    np.testing.assert_allclose(y, _softmax(x, (1,)), rtol=2e-6, atol=1e-7)
    assert _top_level_loops(exe) == 2  # the maxima, then exp-sum-divide per row


def test_short_rows_are_left_unfused():
    """Rows of 16: the ops vectorize across rows instead."""
    x = RNG.standard_normal((512, 16)).astype(np.float32)
    exe = xhlo.compile(softmax_module(512, 16), cache=False)
    np.testing.assert_allclose(exe(x), _softmax(x, (1,)), rtol=2e-6, atol=1e-7)
    assert _top_level_loops(exe) > 1


def test_a_column_softmax_is_left_unfused():
    """Reduced along dimension 0: a row tile of the division needs every row of the input."""
    x = RNG.standard_normal((256, 300)).astype(np.float32)
    t, r = "tensor<256x300xf32>", "tensor<300xf32>"
    src = f"""func.func @main(%x: {t}) -> {t} {{
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %e = stablehlo.exponential %x : {t}
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [0] : ({t}, tensor<f32>) -> {r}
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : ({r}) -> {t}
  %y = stablehlo.divide %e, %sb : {t}
  return %y : {t}
}}"""
    exe = xhlo.compile(src, cache=False)
    e = np.exp(x)
    np.testing.assert_allclose(exe(x), e / e.sum(axis=0), rtol=2e-6, atol=1e-8)
    assert _top_level_loops(exe) > 1


def _layer_norm(x, g):
    import jax.numpy as jnp
    from jax import lax

    centred = x - x.mean(-1, keepdims=True)  # keepdims: [rows, 1] broadcasts, reshapes in between
    return centred * lax.rsqrt(x.var(-1, keepdims=True) + 1e-5) * g


@pytest.mark.parametrize("grad", [False, True])
def test_jax_layer_norm_and_its_gradient_are_one_row_loop(grad):
    """JAX's keepdims reductions leave unit dimensions that linalg-fold-unit-extent-dims
    drops; the gradient's sums of negated terms vectorize along the row."""
    import jax
    from jax import export

    fn = jax.grad(lambda x, g: _layer_norm(x, g).sum()) if grad else _layer_norm
    x = RNG.standard_normal((512, 1024)).astype(np.float32)
    g = RNG.standard_normal(1024).astype(np.float32)
    exe = xhlo.compile(export.export(jax.jit(fn))(x, g).mlir_module(), cache=False, keep_ir=True)
    np.testing.assert_allclose(exe(x, g), np.asarray(jax.jit(fn)(x, g)), rtol=1e-4, atol=1e-4)
    assert _top_level_loops(exe) == 1
    assert '"reduction"' not in exe.ir("xhlo-fuse-and-vectorize")  # no reduction left scalar

"""xhlo-linearize-point-gathers: element gathers of concatenated index vectors read one
linear index. Oracles: numpy and the StableHLO reference interpreter (the gather's
per-dimension clamping, any index vector dimension) and JAX (advanced indexing)."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo import reference

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from jax import export


def _gather_module(shape, n, index_type, vector_dim) -> str:
    """A point gather from ``shape`` whose index vectors concatenate one column per dimension
    along ``vector_dim`` (0: [rank, n] indices, 1: [n, rank])."""
    rank = len(shape)
    t = "x".join(map(str, shape))
    col = f"tensor<1x{n}x{index_type}>" if vector_dim == 0 else f"tensor<{n}x1x{index_type}>"
    cat = f"tensor<{rank}x{n}x{index_type}>" if vector_dim == 0 else f"tensor<{n}x{rank}x{index_type}>"
    args = ", ".join(f"%i{k}: {col}" for k in range(rank))
    cols = ", ".join(f"%i{k}" for k in range(rank))
    dims = ", ".join(map(str, range(rank)))
    return f"""func.func @main(%x: tensor<{t}xf32>, {args}) -> tensor<{n}xf32> {{
  %idx = stablehlo.concatenate {cols}, dim = {vector_dim} : ({", ".join([col] * rank)}) -> {cat}
  %0 = "stablehlo.gather"(%x, %idx) <{{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [{dims}],
      start_index_map = [{dims}], index_vector_dim = {vector_dim}>, slice_sizes = array<i64: {", ".join(["1"] * rank)}>}}>
      : (tensor<{t}xf32>, {cat}) -> tensor<{n}xf32>
  return %0 : tensor<{n}xf32>
}}"""


@pytest.mark.parametrize("shape", [(7, 5), (3, 4, 6)])
@pytest.mark.parametrize("index_type,dtype", [("i32", np.int32), ("i64", np.int64), ("ui8", np.uint8)])
@pytest.mark.parametrize("vector_dim", [0, 1])
def test_matches_the_reference_interpreter(shape, index_type, dtype, vector_dim):
    n = 300
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    low = 0 if dtype == np.uint8 else -3
    columns = [rng.integers(low, d + 3, n).astype(dtype).reshape((1, n) if vector_dim == 0 else (n, 1))
               for d in shape]  # out of range on both sides: the gather clamps each dimension
    src = _gather_module(shape, n, index_type, vector_dim)
    exe = xhlo.compile(src, keep_ir=True)
    assert "stablehlo.concatenate" not in exe.ir("xhlo-stablehlo-prepare")
    got = exe(x, *columns)
    clamped = tuple(np.clip(c.ravel().astype(np.int64), 0, d - 1) for c, d in zip(columns, shape))
    np.testing.assert_array_equal(got, x[clamped])
    if dtype != np.uint8:  # the interpreter takes signed indices only
        np.testing.assert_array_equal(got, reference.evaluate(src, x, *columns)[0])


def test_advanced_indexing_matches_jax():
    """``x[rows, cols]`` (fill mode: out-of-range rows read NaN) and ``map_coordinates``."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 48)).astype(np.float32)
    rows, cols = rng.integers(-70, 70, 5000).astype(np.int32), rng.integers(0, 48, 5000).astype(np.int32)
    points = rng.uniform(-2, 66, (2, 5000)).astype(np.float32)

    def fn(x, rows, cols, points):
        return x[rows, cols], jax.scipy.ndimage.map_coordinates(x, points, order=1)

    exported = export.export(jax.jit(fn), platforms=["cpu"])(x, rows, cols, points)
    exe = xhlo.compile(exported, keep_ir=True)
    assert "stablehlo.concatenate" not in exe.ir("xhlo-stablehlo-prepare")
    for got, want in zip(exe(x, rows, cols, points), jax.jit(fn)(x, rows, cols, points)):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-6, atol=1e-6)

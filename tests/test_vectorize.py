"""xhlo-vectorize: SIMD tiles of elementwise ops and reductions, checked against numpy.

Shapes are chosen around the tile sizes (16 f32 lanes, 64-lane split reductions,
masked remainders, short loops) and each program's IR is inspected, so a test
fails both on a wrong result and on an op that silently stayed scalar.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo._mlir import ir, new_context
from xhlo.passes.vectorize import plan_for

from .test_parallelize_loops import softmax_module

RNG = np.random.default_rng(6)
STAGE = "xhlo-fuse-and-vectorize"


def _t(shape, elem="f32") -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{elem}>"


def unary_chain(shape, elem="f32") -> str:
    t = _t(shape, elem)
    return f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = stablehlo.multiply %a, %b : {t}
  %1 = stablehlo.add %0, %a : {t}
  %2 = stablehlo.maximum %1, %b : {t}
  return %2 : {t}
}}"""


def reduce_module(shape, dims, op="add", init="0.0", elem="f32") -> str:
    out = [s for i, s in enumerate(shape) if i not in dims]
    t, r, s = _t(shape, elem), _t(out, elem), _t([], elem)
    return f"""func.func @main(%a: {t}) -> {r} {{
  %z = stablehlo.constant dense<{init}> : {s}
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.{op} across dimensions = {list(dims)} : ({t}, {s}) -> {r}
  return %0 : {r}
}}"""


def vectorized(exe) -> bool:
    return "vector<" in exe.ir(STAGE)


@pytest.mark.parametrize("shape", [(4096,), (1000,), (20, 20), (3, 5, 7), (256, 64), (2,)])
def test_elementwise_chain_matches_numpy(shape):
    a = RNG.standard_normal(shape).astype(np.float32)
    b = RNG.standard_normal(shape).astype(np.float32)
    exe = xhlo.compile(unary_chain(shape))
    np.testing.assert_array_equal(exe(a, b), np.maximum(a * b + a, b))
    assert vectorized(exe)


@pytest.mark.parametrize("elem,dtype", [("i32", np.int32), ("i8", np.int8), ("f64", np.float64), ("i64", np.int64)])
def test_integer_and_double_elementwise(elem, dtype):
    shape = (33, 17)
    a = RNG.integers(-50, 50, shape).astype(dtype)
    b = RNG.integers(-50, 50, shape).astype(dtype)
    exe = xhlo.compile(unary_chain(shape, elem))
    np.testing.assert_array_equal(exe(a, b), np.maximum(a * b + a, b))
    assert vectorized(exe)


@pytest.mark.parametrize(
    "shape,dims",
    [((4096,), [0]), ((8, 1000), [1]), ((1000, 8), [0]), ((256, 64), [0]), ((7, 300, 5), [1]), ((6, 40), [0, 1])],
)
def test_sums_match_float64_within_reassociation_error(shape, dims):
    a = RNG.uniform(-1, 1, shape).astype(np.float32)
    exe = xhlo.compile(reduce_module(shape, dims))
    expected = a.astype(np.float64).sum(axis=tuple(dims))
    n = np.prod([shape[d] for d in dims])
    np.testing.assert_allclose(exe(a), expected, rtol=0, atol=4 * n * np.finfo(np.float32).eps)
    assert vectorized(exe)


@pytest.mark.parametrize("op,init,fn", [("maximum", "0xFF800000", np.max), ("minimum", "0x7F800000", np.min)])
def test_max_min_reductions_with_nan(op, init, fn):
    a = RNG.standard_normal((5, 999)).astype(np.float32)
    a[2, 517] = np.nan
    exe = xhlo.compile(reduce_module((5, 999), [1], op, init))
    got = exe(a)
    np.testing.assert_array_equal(got, fn(a, axis=1))  # numpy max/min propagate NaN like StableHLO
    assert np.isnan(got[2]) and not np.isnan(got[[0, 1, 3, 4]]).any()


def test_integer_sum_is_exact():
    a = RNG.integers(-1000, 1000, (3, 5000)).astype(np.int32)
    exe = xhlo.compile(reduce_module((3, 5000), [1], init="0", elem="i32"))
    np.testing.assert_array_equal(exe(a), a.sum(axis=1))
    assert vectorized(exe)


@pytest.mark.parametrize("rows", [64, 1])
@pytest.mark.parametrize("elem, dtype", [("f32", np.float32), ("i32", np.int32)])
def test_sums_of_negated_values_vectorize_along_the_row(elem, dtype, rows):
    """Fusion and canonicalization make ``reduce(add, -x)`` a body ``out - x``: still a sum
    split into vectors of partial sums along the row (one row: no other loop to vectorize)."""
    t, r, s = _t((rows, 1000), elem), _t((rows,), elem), _t([], elem)
    src = f"""func.func @main(%a: {t}, %init: {s}) -> {r} {{
  %n = stablehlo.negate %a : {t}
  %0 = stablehlo.reduce(%n init: %init) applies stablehlo.add across dimensions = [1] : ({t}, {s}) -> {r}
  return %0 : {r}
}}"""
    a = RNG.integers(-1000, 1000, (rows, 1000)).astype(dtype)
    init = np.array(7, dtype)
    exe = xhlo.compile(src, cache=False, keep_ir=True)
    np.testing.assert_array_equal(exe(a, init), (init - a.astype(np.int64).sum(axis=1)).astype(dtype))
    assert '"reduction"' not in exe.ir(STAGE) and "vector.multi_reduction <add>" in exe.ir(STAGE)


def test_softmax_rows():
    shape = (64, 300)
    src = softmax_module(*shape)
    x = RNG.standard_normal(shape).astype(np.float32) * 4
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    exe = xhlo.compile(src)
    np.testing.assert_allclose(exe(x), e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-9)
    assert vectorized(exe)


def test_transpose_and_broadcast():
    t, tt, b = _t((48, 40)), _t((40, 48)), _t((40,))
    src = f"""func.func @main(%a: {t}, %v: {b}) -> {tt} {{
  %0 = stablehlo.transpose %a, dims = [1, 0] : ({t}) -> {tt}
  %1 = stablehlo.broadcast_in_dim %v, dims = [0] : ({b}) -> {tt}
  %2 = stablehlo.add %0, %1 : {tt}
  return %2 : {tt}
}}"""
    a = RNG.standard_normal((48, 40)).astype(np.float32)
    v = RNG.standard_normal(40).astype(np.float32)
    exe = xhlo.compile(src)
    np.testing.assert_array_equal(exe(a, v), a.T + v[:, None])
    assert vectorized(exe)


def test_reverse_keeps_scalar_lowering_and_is_right():
    t = _t((4, 37))
    src = f"""func.func @main(%a: {t}) -> {t} {{
  %0 = stablehlo.reverse %a, dims = [0, 1] : {t}
  return %0 : {t}
}}"""
    a = RNG.standard_normal((4, 37)).astype(np.float32)
    exe = xhlo.compile(src)
    np.testing.assert_array_equal(exe(a), a[::-1, ::-1])


def test_boolean_results_stay_byte_per_element():
    t, tb = _t((70,)), _t((70,), "i1")
    src = f"""func.func @main(%a: {t}, %b: {t}) -> {tb} {{
  %0 = stablehlo.compare GT, %a, %b : ({t}, {t}) -> {tb}
  return %0 : {tb}
}}"""
    a, b = RNG.standard_normal(70).astype(np.float32), RNG.standard_normal(70).astype(np.float32)
    np.testing.assert_array_equal(xhlo.compile(src)(a, b), a > b)


def test_gather_from_a_boolean_tensor_reads_bytes():
    """Rows gathered from an i1 tensor (``(a > 0)[idx]``): a vector<i1> read of that tensor
    would unpack bits of its bytes (it once gave zeros for most of the row)."""
    t, tb = _t((3, 4, 8)), _t((3, 4, 8), "i1")
    src = f"""func.func @main(%a: {t}, %i: tensor<2x1xi32>) -> tensor<2x4x8xf32> {{
  %zero = stablehlo.constant dense<0.0> : {t}
  %mask = stablehlo.compare GT, %a, %zero : ({t}, {t}) -> {tb}
  %rows = "stablehlo.gather"(%mask, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2],
      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4, 8>}}>
      : ({tb}, tensor<2x1xi32>) -> tensor<2x4x8xi1>
  %0 = stablehlo.convert %rows : (tensor<2x4x8xi1>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}}"""
    a = RNG.standard_normal((3, 4, 8)).astype(np.float32)
    index = np.array([[2], [0]], np.int32)
    np.testing.assert_array_equal(xhlo.compile(src)(a, index), (a > 0)[index[:, 0]].astype(np.float32))


@pytest.mark.parametrize("rows", [80, 333])  # 5 tiles of 16 rows; a masked last tile
def test_argmax_pair_reduction(rows):
    """JAX's argmax: two results combined by selects (NaN wins, ties take the lower
    index), no single combiner. Vectorized along rows: each tile of 16 rows walks the
    columns with (value, index) vectors; checked with ties and NaNs against numpy."""
    cols = 333
    t, ti = _t((rows, cols)), _t((rows, cols), "i32")
    src = f"""func.func @main(%x: {t}) -> tensor<{rows}xi32> {{
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %iota = stablehlo.iota dim = 1 : {ti}
  %r:2 = stablehlo.reduce(%x init: %ninf), (%iota init: %c0) across dimensions = [1] : ({t}, {ti}, tensor<f32>, tensor<i32>) -> (tensor<{rows}xf32>, tensor<{rows}xi32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%ia: tensor<i32>, %ib: tensor<i32>) {{
      %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %nan = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %wins = stablehlo.or %gt, %nan : tensor<i1>
      %eq = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %lt = stablehlo.compare LT, %ia, %ib, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %tie = stablehlo.and %eq, %lt : tensor<i1>
      %take = stablehlo.or %wins, %tie : tensor<i1>
      %v = stablehlo.select %wins, %a, %b : tensor<i1>, tensor<f32>
      %i = stablehlo.select %take, %ia, %ib : tensor<i1>, tensor<i32>
      stablehlo.return %v, %i : tensor<f32>, tensor<i32>
    }}
  return %r#1 : tensor<{rows}xi32>
}}"""
    exe = xhlo.compile(src)
    vectorized = exe.ir(STAGE)
    assert "linalg.generic" not in vectorized and "vector<16xi32>" in vectorized
    x = np.round(RNG.standard_normal((rows, cols)), 1).astype(np.float32)  # many ties
    x[3, 200], x[7, 5], x[7, 9] = np.nan, np.nan, np.nan
    np.testing.assert_array_equal(exe(x), x.argmax(axis=1))


def _generic_plan(text: str, **options):
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        func = module.body.operations[0]
        op = func.regions[0].blocks[0].operations[0]
        return plan_for(op.operation, options.get("vector_bits", 512), options.get("reduction_vectors", 4),
                        options.get("masked_reductions", True))


def row_sum(n: int) -> str:
    return f"""
func.func @f(%a: tensor<8x{n}xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {{
  %0 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}}
      ins(%a : tensor<8x{n}xf32>) outs(%init : tensor<8xf32>) {{
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }} -> tensor<8xf32>
  return %0 : tensor<8xf32>
}}"""


def test_plan_splits_a_row_reduction_into_four_vectors_of_partial_sums():
    plan = _generic_plan(row_sum(1024))
    assert (plan.tile_sizes, plan.reduction_tile, plan.vector_sizes) == ((1, 0), (0, 64), None)


def test_plan_masks_a_remainder_no_tile_divides():
    plan = _generic_plan(row_sum(1000))  # 1000 = 15 * 64 + 40, and 32 does not divide it either
    assert (plan.reduction_tile, plan.vector_sizes) == ((0, 64), (1, 64))


def test_plan_without_masked_reductions_takes_a_smaller_dividing_tile():
    """Without cheap masks (AVX2): 8 of 16 lanes divide 1000; 1001 has no such divisor."""
    plan = _generic_plan(row_sum(1000), masked_reductions=False)
    assert (plan.reduction_tile, plan.vector_sizes) == ((0, 8), None)
    plan = _generic_plan(row_sum(1001), masked_reductions=False)
    assert (plan.reduction_tile, plan.vector_sizes) == ((0, 64), (1, 64))


def test_rows_of_1000_match_numpy_with_and_without_masked_reductions():
    from xhlo import pipeline

    x = np.random.default_rng(3).standard_normal((64, 1000)).astype(np.float32)
    src = """func.func @main(%x: tensor<64x1000xf32>) -> tensor<64xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<64x1000xf32>, tensor<f32>) -> tensor<64xf32>
  return %s : tensor<64xf32>
}"""
    for masked in (True, False):
        stages = tuple(
            pipeline.Stage(s.name, s.description, tuple(
                f"xhlo-vectorize{{masked-reductions={str(masked).lower()}}}" if p == "xhlo-vectorize" else p
                for p in s.passes))
            for s in pipeline.STAGES)
        with new_context(), ir.Location.unknown():
            module = ir.Module.parse(src)
            pipeline.build_pass_manager(pipeline.pipeline_text(stages[:3])).run(module.operation)
            text = str(module)
        assert ("vector.create_mask" in text) == masked
    np.testing.assert_allclose(xhlo.compile(src, cache=False)(x), x.sum(1), rtol=1e-5, atol=1e-4)


def test_plan_short_reduction_is_one_vector():
    plan = _generic_plan(row_sum(48))
    assert (plan.tile_sizes, plan.reduction_tile) == ((1, 0), None)


def column_max(rows: int, cols: int) -> str:
    return f"""
func.func @f(%a: tensor<{rows}x{cols}xf32>, %init: tensor<{cols}xf32>) -> tensor<{cols}xf32> {{
  %0 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                       iterator_types = ["reduction", "parallel"]}}
      ins(%a : tensor<{rows}x{cols}xf32>) outs(%init : tensor<{cols}xf32>) {{
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }} -> tensor<{cols}xf32>
  return %0 : tensor<{cols}xf32>
}}"""


def test_plan_reduces_columns_four_vectors_wide():
    """A reduction over rows keeps four vectors of columns a row step (four independent
    accumulators, 256 bytes of each strided row); one vector when four do not divide."""
    assert _generic_plan(column_max(512, 1024)).tile_sizes == (1, 64)
    assert _generic_plan(column_max(512, 1040)).tile_sizes == (1, 16)


def test_column_reductions_match_numpy():
    a = np.random.default_rng(3).standard_normal((2048, 1024)).astype(np.float32)
    for op, reference in (("maximum", np.max), ("add", np.sum)):
        init = "0xFF800000" if op == "maximum" else "0.0"
        src = f"""func.func @main(%a: tensor<2048x1024xf32>) -> tensor<1024xf32> {{
  %init = stablehlo.constant dense<{init}> : tensor<f32>
  %r = stablehlo.reduce(%a init: %init) applies stablehlo.{op} across dimensions = [0] : (tensor<2048x1024xf32>, tensor<f32>) -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}}"""
        exe = xhlo.compile(src)
        np.testing.assert_allclose(exe(a), reference(a.astype(np.float64), axis=0), rtol=1e-5, atol=1e-3)
        assert "vector<64xf32>" in exe.ir("xhlo-fuse-and-vectorize")


def test_narrower_registers_give_narrower_tiles():
    plan = _generic_plan(row_sum(1024), vector_bits=256, reduction_vectors=1)
    assert plan.reduction_tile == (0, 8)


def test_window_ops_vectorize_after_folding_their_unit_loops():
    """A max pool (reduce_window, stride 2) reads x[2i + di, 2j + dj, c]: tiled, the window
    loops fold away and the channels (contiguous) form the vectors."""
    t, r = _t((9, 9, 32)), _t((4, 4, 32))
    src = f"""func.func @main(%x: {t}) -> {r} {{
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %ninf) <{{window_dimensions = array<i64: 3, 3, 1>, window_strides = array<i64: 2, 2, 1>}}> ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }}) : ({t}, tensor<f32>) -> {r}
  return %0 : {r}
}}"""
    x = RNG.standard_normal((9, 9, 32)).astype(np.float32)
    exe = xhlo.compile(src)
    expected = np.full((4, 4, 32), -np.inf, np.float32)
    for di in range(3):
        for dj in range(3):
            expected = np.maximum(expected, x[di:di + 8:2, dj:dj + 8:2, :])
    np.testing.assert_array_equal(exe(x), expected)
    assert vectorized(exe)


def test_half_float_window_stays_scalar_and_right():
    """LLVM aborts on some bf16 vector ops (maximum): such bodies keep scalar loops."""
    import ml_dtypes

    t = _t((12,), "bf16")
    src = f"""func.func @main(%x: {t}) -> {t} {{
  %ninf = stablehlo.constant dense<0xFF80> : tensor<bf16>
  %0 = "stablehlo.reduce_window"(%x, %ninf) <{{padding = dense<[[2, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 3>}}> ({{
  ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
    %m = stablehlo.maximum %a, %b : tensor<bf16>
    stablehlo.return %m : tensor<bf16>
  }}) : ({t}, tensor<bf16>) -> {t}
  return %0 : {t}
}}"""
    x = RNG.standard_normal(12).astype(ml_dtypes.bfloat16)
    wide = x.astype(np.float32)
    expected = np.array([wide[max(0, i - 2): i + 1].max() for i in range(12)]).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(xhlo.compile(src)(x), expected)


def test_embedding_lookup_reads_whole_rows():
    """table[ids]: the row index is hoisted out of each tile, the row read as vectors."""
    jax = pytest.importorskip("jax")
    from jax import export

    table = RNG.standard_normal((500, 96)).astype(np.float32)
    ids = RNG.integers(-600, 600, 300).astype(np.int32)  # out of range ids are clamped, negatives wrap once
    exported = export.export(jax.jit(lambda t, i: t[i]), platforms=["cpu"])(table, ids)
    exe = xhlo.compile(exported)
    np.testing.assert_array_equal(exe(table, ids), np.asarray(jax.jit(lambda t, i: t[i])(table, ids)))
    loops = exe.ir("xhlo-lower-to-loops")
    assert "vector.transfer_read %arg0" in loops and "memref.load %arg0" not in loops  # no scalar table reads


def test_element_gather_with_unit_index_dimension_vectorizes():
    """searchsorted's step gathers one element per query through ``[n, 1]`` indices: the
    trailing unit dimension moves nothing, so the query loop is the vector loop."""
    jax = pytest.importorskip("jax")
    from jax import export

    table = np.sort(RNG.standard_normal(300)).astype(np.float32)
    queries = np.concatenate([RNG.standard_normal(997), table[:3], [np.inf, -np.inf]]).astype(np.float32)
    exe = xhlo.compile(export.export(jax.jit(_searchsorted), platforms=["cpu"])(table, queries))
    np.testing.assert_array_equal(exe(table, queries), np.searchsorted(table, queries))
    assert "vector.gather" in exe.ir(STAGE)


def _searchsorted(table, queries):
    import jax.numpy as jnp

    return jnp.searchsorted(table, queries)


def transpose_generic(rows: int, cols: int, elem: str = "f32") -> str:
    return f"""
func.func @f(%a: tensor<{rows}x{cols}x{elem}>, %out: tensor<{cols}x{rows}x{elem}>) -> tensor<{cols}x{rows}x{elem}> {{
  %0 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%a : tensor<{rows}x{cols}x{elem}>) outs(%out : tensor<{cols}x{rows}x{elem}>) {{
  ^bb0(%x: {elem}, %o: {elem}):
    linalg.yield %x : {elem}
  }} -> tensor<{cols}x{rows}x{elem}>
  return %0 : tensor<{cols}x{rows}x{elem}>
}}"""


@pytest.mark.parametrize(
    "rows,cols,elem,blocks",
    [(256, 512, "f32", (16, 16)), (64, 128, "f64", (8, 8)), (20, 512, "f32", None), (300, 512, "f32", None)],
    ids=["f32", "f64-narrower-blocks", "too-short", "blocks-do-not-divide"],
)
def test_transpose_plan_reads_in_square_blocks(rows, cols, elem, blocks):
    assert _generic_plan(transpose_generic(rows, cols, elem)).block_sizes == blocks


@pytest.mark.parametrize("shape,perm,dtype", [((256, 512), (1, 0), np.float32), ((4, 64, 96), (0, 2, 1), np.int32),
                                              ((48, 32, 80), (2, 1, 0), np.float32)])
def test_blocked_transposes_match_numpy(shape, perm, dtype):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import export

    x = (RNG.standard_normal(shape) * 100).astype(dtype)

    def f(x):
        return jnp.transpose(x, perm) + 1

    exe = xhlo.compile(export.export(jax.jit(f), platforms=["cpu"])(x))
    np.testing.assert_array_equal(exe(x), np.transpose(x, perm) + 1)
    assert vectorized(exe)

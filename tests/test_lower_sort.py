"""stablehlo.sort (and chlo.top_k) lowered by xhlo-lower-sort, checked against
numpy's stable argsort/lexsort and the StableHLO reference interpreter."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xhlo
from xhlo import reference

RNG = np.random.default_rng(20240613)

_MLIR_TYPES = {
    np.dtype(np.float16): "f16",
    np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(np.bool_): "i1",
    np.dtype(np.complex64): "complex<f32>",
}


def _tensor(shape, dtype) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{_MLIR_TYPES[np.dtype(dtype)]}>"


def sort_module(arrays, dimension: int, body: str, stable: bool = True) -> str:
    """``@main`` sorting ``arrays`` together; the comparator ``body`` sees operand k
    at position i as ``%lhs<k>`` and at position j as ``%rhs<k>`` and defines ``%p``."""
    shape = arrays[0].shape
    types = [_tensor(shape, a.dtype) for a in arrays]
    scalars = [_tensor((), a.dtype) for a in arrays]
    params = ", ".join(f"%lhs{k}: {t}, %rhs{k}: {t}" for k, t in enumerate(scalars))
    args = ", ".join(f"%x{k}: {t}" for k, t in enumerate(types))
    operands = ", ".join(f"%x{k}" for k in range(len(arrays)))
    results = ", ".join(f"%r#{k}" for k in range(len(arrays)))
    all_types = ", ".join(types)
    return f"""func.func @main({args}) -> ({all_types}) {{
  %r:{len(arrays)} = "stablehlo.sort"({operands}) ({{
  ^bb0({params}):
    {body}
    stablehlo.return %p : tensor<i1>
  }}) {{dimension = {dimension} : i64, is_stable = {str(stable).lower()}}}
     : ({all_types}) -> ({all_types})
  return {results} : {all_types}
}}"""


def compare(direction: str, lhs: str, rhs: str, scalar: str, kind: str, out: str = "%p") -> str:
    types = f"({scalar}, {scalar}) -> tensor<i1>"
    return f"{out} = stablehlo.compare {direction}, {lhs}, {rhs}, {kind} : {types}"


def key_compare(direction: str, scalar: str, kind: str) -> str:
    """``%p`` = operand 0 at i <direction> operand 0 at j."""
    return compare(direction, "%lhs0", "%rhs0", scalar, kind)


def total_order_key(x: np.ndarray) -> np.ndarray:
    """Integers ordered as IEEE totalOrder orders ``x``: -NaN < -inf < -0 < +0 < inf < +NaN."""
    width = x.dtype.itemsize * 8
    bits = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    magnitude = (bits & np.uint64(2 ** (width - 1) - 1)).astype(np.int64)
    negative = (bits >> np.uint64(width - 1)) == 1
    return np.where(negative, -1 - magnitude, magnitude)


def sort_key(x: np.ndarray) -> np.ndarray:
    if np.issubdtype(x.dtype, np.floating) or x.dtype == ml_dtypes.bfloat16:
        return total_order_key(x)
    return x.astype(np.int64) if x.dtype != np.uint64 else x


def comparison_kind(dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype.kind in "ub":
        return "UNSIGNED"
    if dtype.kind == "i":
        return "SIGNED"
    return "TOTALORDER"


def assert_bits_equal(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal shapes and identical bit patterns (NaN payloads and -0.0 included)."""
    assert actual.shape == expected.shape
    as_bytes = f"u{expected.dtype.itemsize}"
    np.testing.assert_array_equal(
        np.ascontiguousarray(actual).view(as_bytes), np.ascontiguousarray(expected).view(as_bytes)
    )


def sort_by_key(keys: np.ndarray, arrays, axis: int, descending: bool = False):
    """numpy model: stable argsort of ``keys`` along ``axis`` applied to ``arrays``."""
    order = np.argsort(-keys if descending else keys, axis=axis, kind="stable")
    return [np.take_along_axis(a, order, axis=axis) for a in arrays]


def iota_like(shape, axis: int) -> np.ndarray:
    along = [-1 if d == axis else 1 for d in range(len(shape))]
    return np.broadcast_to(np.arange(shape[axis], dtype=np.int32).reshape(along), shape).copy()


# -- the spec's own example ----------------------------------------------------------


def test_semantics_example_sorts_three_operands_by_the_first():
    arrays = [
        np.array([3, 1], np.int32),
        np.array([42, 50], np.int32),
        np.array([-3.0, 1.1], np.float32),
    ]
    src = sort_module(arrays, 0, key_compare("LT", "tensor<i32>", "SIGNED"))
    got = xhlo.compile(src)(*arrays)
    np.testing.assert_array_equal(got[0], [1, 3])
    np.testing.assert_array_equal(got[1], [50, 42])
    np.testing.assert_array_equal(got[2], np.array([1.1, -3.0], np.float32))
    for mine, ref in zip(got, reference.evaluate(src, *arrays)):
        np.testing.assert_array_equal(mine, ref)


# -- floats under a totalOrder comparator --------------------------------------------


def _floats_with_specials(n: int) -> np.ndarray:
    x = RNG.integers(-5, 5, n).astype(np.float32) / 2
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, np.nan, -0.0], np.float32)
    x[RNG.choice(n, special.size, replace=False)] = special
    x[3] = np.uint32(0x7FC01234).view(np.float32)  # a NaN with a payload
    return x


@pytest.mark.parametrize("direction", ["LT", "GT"])
def test_float_total_order_with_nan_and_signed_zero(direction):
    x = _floats_with_specials(37)
    payload = np.arange(37, dtype=np.int32)
    src = sort_module([x, payload], 0, key_compare(direction, "tensor<f32>", "TOTALORDER"))
    values, order = xhlo.compile(src)(x, payload)
    descending = direction == "GT"
    want_values, want_order = sort_by_key(total_order_key(x), [x, payload], 0, descending)
    assert_bits_equal(values, want_values)
    np.testing.assert_array_equal(order, want_order)


# -- multi-dimensional ---------------------------------------------------------------


@pytest.mark.parametrize("dimension", [0, 1])
def test_2d_sorts_columns_or_rows_independently(dimension):
    x = RNG.integers(0, 6, (7, 5)).astype(np.float32)
    payload = iota_like(x.shape, dimension)
    src = sort_module([x, payload], dimension, key_compare("LT", "tensor<f32>", "FLOAT"))
    got = xhlo.compile(src)(x, payload)
    for mine, want in zip(got, sort_by_key(x, [x, payload], dimension)):
        np.testing.assert_array_equal(mine, want)
    for mine, ref in zip(got, reference.evaluate(src, x, payload)):
        np.testing.assert_array_equal(mine, ref)


@pytest.mark.parametrize("dimension", [0, 1, 2])
def test_3d_along_every_dimension(dimension):
    x = RNG.integers(-3, 3, (3, 6, 5)).astype(np.int32)
    payload = RNG.standard_normal(x.shape).astype(np.float32)
    src = sort_module([x, payload], dimension, key_compare("GT", "tensor<i32>", "SIGNED"))
    got = xhlo.compile(src)(x, payload)
    for mine, want in zip(got, sort_by_key(x, [x, payload], dimension, descending=True)):
        np.testing.assert_array_equal(mine, want)


def test_negative_dimension_means_counting_from_the_end():
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    src = sort_module([x], -1, key_compare("LT", "tensor<f32>", "FLOAT"))
    np.testing.assert_array_equal(xhlo.compile(src)(x), np.sort(x, axis=-1))


# -- stability and comparators ------------------------------------------------------


@pytest.mark.parametrize("stable", [True, False])
@pytest.mark.parametrize("direction", ["LT", "GT"])
def test_equal_keys_keep_their_order(direction, stable):
    keys = RNG.integers(0, 4, 200).astype(np.int32)
    payload = np.arange(200, dtype=np.int32)
    src = sort_module([keys, payload], 0, key_compare(direction, "tensor<i32>", "SIGNED"), stable)
    got = xhlo.compile(src)(keys, payload)
    for mine, want in zip(got, sort_by_key(keys, [keys, payload], 0, descending=direction == "GT")):
        np.testing.assert_array_equal(mine, want)


def test_lexicographic_multi_key_comparator():
    major = RNG.integers(0, 3, 60).astype(np.int32)
    minor = RNG.integers(0, 4, 60).astype(np.float32)
    payload = np.arange(60, dtype=np.int32)
    body = "\n    ".join(
        [
            compare("LT", "%lhs0", "%rhs0", "tensor<i32>", "SIGNED", "%lt0"),
            compare("EQ", "%lhs0", "%rhs0", "tensor<i32>", "SIGNED", "%eq0"),
            compare("LT", "%lhs1", "%rhs1", "tensor<f32>", "TOTALORDER", "%lt1"),
            "%tie = stablehlo.and %eq0, %lt1 : tensor<i1>",
            "%p = stablehlo.or %lt0, %tie : tensor<i1>",
        ]
    )
    src = sort_module([major, minor, payload], 0, body)
    got = xhlo.compile(src)(major, minor, payload)
    order = np.lexsort((minor, major))  # last key is primary; lexsort is stable
    for mine, array in zip(got, (major, minor, payload)):
        np.testing.assert_array_equal(mine, array[order])
    for mine, ref in zip(got, reference.evaluate(src, major, minor, payload)):
        np.testing.assert_array_equal(mine, ref)


def test_complex_sorted_by_real_then_imaginary_part():
    x = np.array([1 + 2j, 5j, 1 + 1j, -1j, 3, 4j, 1 + 1j], np.complex64)
    payload = np.arange(x.size, dtype=np.int32)
    body = "\n    ".join(
        [
            "%ar = stablehlo.real %lhs0 : (tensor<complex<f32>>) -> tensor<f32>",
            "%br = stablehlo.real %rhs0 : (tensor<complex<f32>>) -> tensor<f32>",
            "%ai = stablehlo.imag %lhs0 : (tensor<complex<f32>>) -> tensor<f32>",
            "%bi = stablehlo.imag %rhs0 : (tensor<complex<f32>>) -> tensor<f32>",
            compare("LT", "%ar", "%br", "tensor<f32>", "FLOAT", "%lt"),
            compare("EQ", "%ar", "%br", "tensor<f32>", "FLOAT", "%eq"),
            compare("LT", "%ai", "%bi", "tensor<f32>", "FLOAT", "%lti"),
            "%tie = stablehlo.and %eq, %lti : tensor<i1>",
            "%p = stablehlo.or %lt, %tie : tensor<i1>",
        ]
    )
    values, order = xhlo.compile(sort_module([x, payload], 0, body))(x, payload)
    want = np.lexsort((x.imag, x.real))
    np.testing.assert_array_equal(order, want)
    np.testing.assert_array_equal(values, x[want])


# -- element types --------------------------------------------------------------------


def _random_values(dtype, n: int) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        x = RNG.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        x[:4] = [info.min, info.max, info.min, 0]
        x[4:8] = x[8:12]  # ties
        return x
    x = (RNG.standard_normal(n) * 100).astype(dtype)
    x[:5] = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0], np.float32).astype(dtype)
    x[5:9] = x[9:13]
    return x


@pytest.mark.parametrize(
    "dtype",
    [
        np.int8, np.int16, np.int32, np.int64,
        np.uint8, np.uint16, np.uint32, np.uint64,
        np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.bool_,
    ],
    ids=lambda d: np.dtype(d).name,
)
def test_element_types(dtype):
    keys = _random_values(dtype, 41)
    payload = np.arange(41, dtype=np.int32)
    scalar = _tensor((), keys.dtype)
    src = sort_module([keys, payload], 0, key_compare("LT", scalar, comparison_kind(dtype)))
    values, order = xhlo.compile(src)(keys, payload)
    want_values, want_order = sort_by_key(sort_key(keys), [keys, payload], 0)
    assert_bits_equal(values, want_values)
    np.testing.assert_array_equal(order, want_order)


def test_payload_of_another_type_moves_with_the_keys():
    keys = RNG.integers(0, 5, 33).astype(np.uint16)
    payload = RNG.standard_normal(33).astype(ml_dtypes.bfloat16)
    flags = RNG.integers(0, 2, 33).astype(bool)
    src = sort_module([keys, payload, flags], 0, key_compare("GT", "tensor<ui16>", "UNSIGNED"))
    got = xhlo.compile(src)(keys, payload, flags)
    wanted = sort_by_key(keys.astype(np.int64), [keys, payload, flags], 0, descending=True)
    for mine, want in zip(got, wanted):
        assert_bits_equal(mine, want)


# -- sizes -------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 9, 31, 64, 100, 1000])
def test_lengths(n):
    x = RNG.integers(0, max(n // 3, 1), n).astype(np.float32)
    payload = np.arange(n, dtype=np.int32)
    src = sort_module([x, payload], 0, key_compare("LT", "tensor<f32>", "FLOAT"))
    got = xhlo.compile(src)(x, payload)
    for mine, want in zip(got, sort_by_key(x, [x, payload], 0)):
        np.testing.assert_array_equal(mine, want)


@pytest.mark.parametrize(
    ("shape", "dimension"), [((3, 0), 0), ((3, 0), 1), ((0, 4), 1), ((1, 1, 6), 1)]
)
def test_zero_size_and_unit_dimensions(shape, dimension):
    x = RNG.standard_normal(shape).astype(np.float32)
    src = sort_module([x], dimension, key_compare("LT", "tensor<f32>", "FLOAT"))
    got = xhlo.compile(src)(x)
    np.testing.assert_array_equal(got, np.sort(x, axis=dimension))


def test_hundred_thousand_floats_with_payload():
    x = RNG.standard_normal(100_000).astype(np.float32)
    x[::7] = x[1::7][: x[::7].size]  # plenty of ties
    payload = np.arange(x.size, dtype=np.int32)
    src = sort_module([x, payload], 0, key_compare("LT", "tensor<f32>", "TOTALORDER"))
    values, order = xhlo.compile(src)(x, payload)
    np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(values, np.sort(x))


def test_inputs_are_not_modified():
    x = RNG.standard_normal(50).astype(np.float32)
    original = x.copy()
    src = sort_module([x], 0, key_compare("LT", "tensor<f32>", "FLOAT"))
    exe = xhlo.compile(src)
    first = exe(x)
    np.testing.assert_array_equal(x, original)
    np.testing.assert_array_equal(exe(x), first)


# -- top_k and argsort ---------------------------------------------------------------


def _top_k_module(shape, k: int, elem: str) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{elem}>"
    out_shape = (*shape[:-1], k)
    v = f"tensor<{'x'.join(map(str, out_shape))}x{elem}>"
    i = f"tensor<{'x'.join(map(str, out_shape))}xi32>"
    return f"""func.func @main(%x: {t}) -> ({v}, {i}) {{
  %values, %indices = chlo.top_k(%x, k = {k}) : {t} -> ({v}, {i})
  return %values, %indices : {v}, {i}
}}"""


@pytest.mark.parametrize(
    ("dtype", "elem"), [(np.float32, "f32"), (np.int32, "i32"), (np.uint8, "ui8")]
)
def test_top_k_prefers_the_lower_index_on_ties(dtype, elem):
    x = RNG.integers(0, 5, (4, 9)).astype(dtype)
    x[0] = [1, 5, 3, 5, 0, 2, 5, 1, 1]
    values, indices = xhlo.compile(_top_k_module(x.shape, 3, elem))(x)
    want = np.argsort(-sort_key(x), axis=-1, kind="stable")[:, :3]
    np.testing.assert_array_equal(indices, want)
    np.testing.assert_array_equal(values, np.take_along_axis(x, want, axis=-1))
    np.testing.assert_array_equal(indices[0], [1, 3, 6])


def test_top_k_orders_nan_first_and_negative_zero_below_zero():
    x = np.array([[0.0, -0.0, np.nan, 2.0, -np.inf, 2.0]], np.float32)
    values, indices = xhlo.compile(_top_k_module(x.shape, 6, "f32"))(x)
    np.testing.assert_array_equal(indices, [[2, 3, 5, 0, 1, 4]])
    assert_bits_equal(values, x[:, [2, 3, 5, 0, 1, 4]])


@pytest.mark.parametrize(
    ("dtype", "elem", "shape", "k"),
    [
        (np.float32, "f32", (6, 300), 7), (np.int32, "i32", (3, 257), 1), (np.float64, "f64", (2, 3, 80), 10),
        (np.float32, "f32", (5, 1024), 128), (np.int32, "i32", (3, 2100), 255), (np.float64, "f64", (2, 2, 1200), 130),
    ],
)
def test_top_k_of_long_rows_keeps_only_k(dtype, elem, shape, k):
    """Rows at least 8x longer than k take a partial sort (by insertion below HEAP_TOP_K,
    in a heap from it on): the same values and indices as a stable descending argsort
    (NaN first, -0.0 below 0.0, the lower index on ties), with many ties."""
    from xhlo.passes.lower_sort import HEAP_TOP_K

    spread = 4 if k < HEAP_TOP_K else 40  # values per row: ties among the kept ones either way
    if np.dtype(dtype).kind == "f":
        x = RNG.integers(-spread, spread, shape).astype(dtype)
        x.flat[::37] = np.nan
        x.flat[5::41] = -0.0
        x.flat[7::43] = np.inf
    else:
        x = RNG.integers(-25 * spread, 25 * spread, shape).astype(dtype)
    exe = xhlo.compile(_top_k_module(shape, k, elem))
    # the insertion's shift loop is an scf.while; the heap has none
    assert ("scf.while" in exe.ir("xhlo-stablehlo-to-linalg")) == (k < HEAP_TOP_K)
    values, indices = exe(x)
    want = np.argsort(-sort_key(x), axis=-1, kind="stable")[..., :k]
    np.testing.assert_array_equal(indices, want)
    assert_bits_equal(values, np.take_along_axis(x, want, axis=-1))


@pytest.mark.parametrize("k", [None, 8, 200])  # merge sort, insertion, heap
def test_rows_on_the_thread_pool(k):
    """Enough rows for the thread pool: the loop over them is outlined and each row,
    with its own comparator flag, matches numpy's stable argsort (many ties)."""
    x = RNG.integers(-50, 50, (96, 2048)).astype(np.float32)
    if k is None:
        src = sort_module([x], 1, key_compare("LT", "tensor<f32>", "FLOAT"))
        want = [np.sort(x, axis=-1, kind="stable")]
    else:
        src = _top_k_module(x.shape, k, "f32")
        order = np.argsort(-x, axis=-1, kind="stable")[:, :k]
        want = [np.take_along_axis(x, order, axis=-1), order.astype(np.int32)]
    exe = xhlo.compile(src)
    assert "xhlo_parallel_for" in exe.ir("xhlo-lower-to-loops")
    got = exe(x)
    for mine, expected in zip(got if k else [got], want):
        np.testing.assert_array_equal(mine, expected)


def test_top_k_heap_of_an_ascending_sort_with_two_keys():
    """A generic comparator: ascending by the first operand, then descending by the
    second; the heap keeps the first k of the stable sort of both operands."""
    a = RNG.integers(0, 6, (2, 1100)).astype(np.int32)
    b = RNG.integers(0, 50, (2, 1100)).astype(np.float32)
    k = 137
    src = f"""func.func @main(%a: tensor<2x1100xi32>, %b: tensor<2x1100xf32>) -> (tensor<2x{k}xi32>, tensor<2x{k}xf32>) {{
  %s:2 = "stablehlo.sort"(%a, %b) <{{dimension = 1 : i64, is_stable = true}}> ({{
  ^bb0(%x: tensor<i32>, %y: tensor<i32>, %u: tensor<f32>, %v: tensor<f32>):
    %lt = stablehlo.compare LT, %x, %y, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %x, %y, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %gt = stablehlo.compare GT, %u, %v, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %both = stablehlo.and %eq, %gt : tensor<i1>
    %p = stablehlo.or %lt, %both : tensor<i1>
    stablehlo.return %p : tensor<i1>
  }}) : (tensor<2x1100xi32>, tensor<2x1100xf32>) -> (tensor<2x1100xi32>, tensor<2x1100xf32>)
  %ta = stablehlo.slice %s#0 [0:2, 0:{k}] : (tensor<2x1100xi32>) -> tensor<2x{k}xi32>
  %tb = stablehlo.slice %s#1 [0:2, 0:{k}] : (tensor<2x1100xf32>) -> tensor<2x{k}xf32>
  return %ta, %tb : tensor<2x{k}xi32>, tensor<2x{k}xf32>
}}"""
    got_a, got_b = xhlo.compile(src)(a, b)
    order = np.lexsort((-b, a), axis=-1)[:, :k]  # stable: by a, then by -b
    np.testing.assert_array_equal(got_a, np.take_along_axis(a, order, axis=-1))
    np.testing.assert_array_equal(got_b, np.take_along_axis(b, order, axis=-1))


def test_sort_read_beyond_its_first_k_is_sorted_whole():
    """A sliced sort whose results are also read whole keeps the full merge sort."""
    x = RNG.standard_normal((2, 100)).astype(np.float32)
    src = """func.func @main(%x: tensor<2x100xf32>) -> (tensor<2x4xf32>, tensor<2x100xf32>) {
  %s = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<2x100xf32>) -> tensor<2x100xf32>
  %top = stablehlo.slice %s [0:2, 0:4] : (tensor<2x100xf32>) -> tensor<2x4xf32>
  return %top, %s : tensor<2x4xf32>, tensor<2x100xf32>
}"""
    exe = xhlo.compile(src)
    assert "scf.while" not in exe.ir("xhlo-stablehlo-to-linalg")
    top, whole = exe(x)
    np.testing.assert_array_equal(whole, -np.sort(-x, axis=1))
    np.testing.assert_array_equal(top, whole[:, :4])


def test_argsort_pattern_sort_values_with_iota():
    x = RNG.integers(-20, 20, (5, 30)).astype(np.float32)
    src = f"""func.func @main(%x: tensor<5x30xf32>) -> tensor<5x30xi32> {{
  %iota = stablehlo.iota dim = 1 : tensor<5x30xi32>
  %r:2 = "stablehlo.sort"(%x, %iota) ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    {compare("LT", "%a", "%b", "tensor<f32>", "TOTALORDER")}
    stablehlo.return %p : tensor<i1>
  }}) {{dimension = 1 : i64, is_stable = true}}
     : (tensor<5x30xf32>, tensor<5x30xi32>) -> (tensor<5x30xf32>, tensor<5x30xi32>)
  return %r#1 : tensor<5x30xi32>
}}"""
    np.testing.assert_array_equal(xhlo.compile(src)(x), np.argsort(x, axis=1, kind="stable"))


# -- how the comparator is evaluated ---------------------------------------------------


def test_elementwise_comparator_becomes_a_scalar_map():
    x = RNG.standard_normal(10).astype(np.float32)
    src = sort_module([x], 0, key_compare("LT", "tensor<f32>", "FLOAT"))
    exe = xhlo.compile(src)
    assert "stablehlo.map" in exe.ir("xhlo-stablehlo-prepare")
    assert "stablehlo.sort" not in exe.ir("xhlo-stablehlo-prepare")


def test_comparator_with_shape_ops_is_inlined():
    x = RNG.standard_normal(12).astype(np.float32)
    body = "\n    ".join(
        [
            "%a1 = stablehlo.reshape %lhs0 : (tensor<f32>) -> tensor<1xf32>",
            "%b1 = stablehlo.broadcast_in_dim %rhs0, dims = [] : (tensor<f32>) -> tensor<1xf32>",
            "%p1 = stablehlo.compare GT, %a1, %b1, FLOAT"
            " : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>",
            "%p = stablehlo.reshape %p1 : (tensor<1xi1>) -> tensor<i1>",
        ]
    )
    src = sort_module([x], 0, body)
    exe = xhlo.compile(src)
    assert "stablehlo.map" not in exe.ir("xhlo-stablehlo-prepare")
    np.testing.assert_array_equal(exe(x), np.sort(x)[::-1])
    np.testing.assert_array_equal(exe(x), reference.evaluate(src, x)[0])


def test_comparator_capturing_an_outer_value():
    src = """func.func @main(%x: tensor<7xf32>, %c: tensor<f32>) -> tensor<7xf32> {
  %r = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %da = stablehlo.subtract %a, %c : tensor<f32>
    %db = stablehlo.subtract %b, %c : tensor<f32>
    %aa = stablehlo.abs %da : tensor<f32>
    %ab = stablehlo.abs %db : tensor<f32>
    %p = stablehlo.compare LT, %aa, %ab, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<7xf32>) -> tensor<7xf32>
  return %r : tensor<7xf32>
}"""
    x = np.array([1, 5, 2, 4, 3, 7, 0], np.float32)
    got = xhlo.compile(src)(x, np.float32(3.2))
    np.testing.assert_array_equal(got, x[np.argsort(np.abs(x - np.float32(3.2)), kind="stable")])


def test_sort_inside_a_while_loop():
    src = """func.func @main(%x: tensor<6xi32>) -> tensor<6xi32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<6xi32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %s = "stablehlo.sort"(%v) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %p = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }) {dimension = 0 : i64} : (tensor<6xi32>) -> tensor<6xi32>
    %twice = stablehlo.add %s, %s : tensor<6xi32>
    %neg = stablehlo.negate %twice : tensor<6xi32>
    stablehlo.return %i2, %neg : tensor<i32>, tensor<6xi32>
  }
  return %r#1 : tensor<6xi32>
}"""
    x = np.array([4, -1, 3, 0, 2, -5], np.int32)
    want = x
    for _ in range(3):
        want = -2 * np.sort(want)
    np.testing.assert_array_equal(xhlo.compile(src)(x), want)

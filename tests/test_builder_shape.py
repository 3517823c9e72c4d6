"""xb.Shape / xb.Layout: text notation, linear index and physical buffers,
checked against the worked examples of seeds 001/002 and plain numpy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from xhlo import builder as xb


@pytest.mark.parametrize(
    "text",
    [
        "f32[]",
        "f32[3,5]",
        "pred[2,2]",
        "s8[0]",
        "bf16[4,8]{1,0}",
        "f32[3,5]{0,1}",
        "f32[3,5]{1,0:T(2,2)}",
        "bf16[8,128]{1,0:T(8,128)(2,1)}",
        "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
        "(f32[3], (s32[], u8[2]{0}), c64[1,1])",
        "f32[2,3]{0,1:P(3,5)}",
    ],
)
def test_print_parse_round_trip(text):
    assert str(xb.Shape.parse(text)) == text


def test_parse_accepts_spaces_and_builds_fields():
    s = xb.Shape.parse(" f32[3, 5]{1,0 : T(2,2)} ")
    assert s.element_type() == "f32" and s.dimensions() == (3, 5)
    assert s.layout() == xb.Layout((1, 0), [(2, 2)])
    assert s.numpy_dtype() == np.float32 and s.rank() == 2


@pytest.mark.parametrize(
    "bad", ["f32[3", "q32[3]", "f32[3]{0,0}", "f32[3,5]{1,0:T(2,*)}", "f32[3]{0:X(1)}", "f32[-1]"]
)
def test_parse_errors(bad):
    with pytest.raises(ValueError):
        xb.Shape.parse(bad)


def test_shape_queries():
    s = xb.Shape.array_shape(np.float32, (1, 4, 1, 3))
    assert s.rank() == 4 and s.true_rank() == 2 and s.element_count() == 12
    assert s.minor_to_major() == (3, 2, 1, 0) and s.has_default_layout()
    assert s == xb.Shape.parse("f32[1,4,1,3]{3,2,1,0}")  # explicit default layout
    assert s != xb.Shape.parse("f32[1,4,1,3]{0,1,2,3}")
    assert s.equal_ignoring_layout(xb.Shape.parse("f32[1,4,1,3]{0,1,2,3}"))
    t = xb.Shape.tuple_shape([s, xb.Shape.scalar_shape(np.int32)])
    assert t.is_tuple() and len(t.tuple_shapes()) == 2 and t.leaves()[1] == xb.Shape.parse("s32[]")
    assert xb.Shape.array_shape(ml_dtypes.bfloat16, (2,)).element_type() == xb.PrimitiveType.BF16


def test_tiled_linear_index_worked_example():
    """Seed 002: element (2,3) of f32[3,5] with 2x2 tiles has linear index 17."""
    s = xb.Shape.parse("f32[3,5]{1,0:T(2,2)}")
    assert s.linear_index((2, 3)) == 17
    assert s.physical_dimensions() == (2, 3, 2, 2) and s.buffer_size() == 24


def test_linear_index_untiled_matches_numpy_strides():
    dims = (3, 4, 5)
    for m2m in [(2, 1, 0), (0, 1, 2), (1, 0, 2)]:
        s = xb.Shape.array_shape(np.float32, dims, m2m)
        order = tuple(reversed(m2m))  # major to minor
        buffer = np.arange(60).reshape([dims[d] for d in order])
        for e in [(0, 0, 0), (2, 3, 4), (1, 2, 3)]:
            assert s.linear_index(e) == buffer[tuple(e[d] for d in order)]


def test_repeated_tiling_interleaves_rows():
    """Seed 002 figure 2: 4x8 with T(2,4)(2,1) pairs elements of adjacent rows."""
    s = xb.Shape.parse("bf16[4,8]{1,0:T(2,4)(2,1)}")
    assert s.physical_dimensions() == (2, 2, 1, 4, 2, 1)
    index = np.array([[s.linear_index((i, j)) for j in range(8)] for i in range(4)])
    np.testing.assert_array_equal(index[:2, :4], [[0, 2, 4, 6], [1, 3, 5, 7]])
    np.testing.assert_array_equal(index[:2, 4:], [[8, 10, 12, 14], [9, 11, 13, 15]])
    np.testing.assert_array_equal(index[2:], index[:2] + 16)


def test_combined_dimensions_equal_explicit_merge():
    """Seed 002: f32[2,7,8,11,10]{..:T(*,*,2,*,3)} == f32[112,110]{1,0:T(2,3)}."""
    combined = xb.Shape.parse("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")
    merged = xb.Shape.parse("f32[112,110]{1,0:T(2,3)}")
    assert combined.physical_dimensions() == merged.physical_dimensions() == (56, 37, 2, 3)
    rng = np.random.default_rng(0)
    for e in rng.integers(0, [2, 7, 8, 11, 10], size=(20, 5)):
        row, col = (e[0] * 7 + e[1]) * 8 + e[2], e[3] * 10 + e[4]
        assert combined.linear_index(tuple(e)) == merged.linear_index((row, col))


def test_padded_dimensions_example():
    """Seed 001: [[a,b,c],[d,e,f]] column-major padded to [3,5]."""
    s = xb.Shape.array_shape(np.int32, (2, 3), (0, 1), padded_dimensions=(3, 5))
    buf = xb.to_physical(np.array([[1, 2, 3], [4, 5, 6]], np.int32), s).ravel()
    np.testing.assert_array_equal(buf, [1, 4, 0, 2, 5, 0, 3, 6, 0, 0, 0, 0, 0, 0, 0])


def test_to_physical_column_major_is_transpose():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    s = xb.Shape.parse("f32[3,4]{0,1}")
    np.testing.assert_array_equal(xb.to_physical(x, s), x.T)
    np.testing.assert_array_equal(xb.from_physical(x.T.ravel(), s), x)


def test_to_physical_tiled_matches_pad_reshape_transpose():
    """Seed 002's description of one tile level as pad + reshape + transpose."""
    x = np.arange(15, dtype=np.float32).reshape(3, 5) + 1
    s = xb.Shape.parse("f32[3,5]{1,0:T(2,2)}")
    padded = np.zeros((4, 6), np.float32)
    padded[:3, :5] = x
    expected = padded.reshape(2, 2, 3, 2).transpose(0, 2, 1, 3)
    np.testing.assert_array_equal(xb.to_physical(x, s), expected)
    assert xb.to_physical(x, s).ravel()[17] == x[2, 3]
    np.testing.assert_array_equal(xb.from_physical(expected, s), x)


def test_physical_round_trip_with_every_layout_feature():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 6, 7)).astype(np.float32)
    for text in [
        "f32[5,6,7]{0,2,1:T(2,4)(2,1)}",
        "f32[5,6,7]{2,1,0:T(*,3,4)}",
        "f32[5,6,7]{1,0,2:T(3)}",
    ]:
        s = xb.Shape.parse(text)
        buf = xb.to_physical(x, s)
        assert buf.shape == s.physical_dimensions()
        np.testing.assert_array_equal(xb.from_physical(buf, s), x)
        for e in [(0, 0, 0), (4, 5, 6), (2, 3, 1)]:
            assert buf.ravel()[s.linear_index(e)] == x[e]


@pytest.mark.parametrize(
    "make",
    [
        lambda: xb.Shape.array_shape(np.float32, (2, 3), (0, 0)),
        lambda: xb.Shape.array_shape(np.float32, (2, 3), (0, 1, 2)),
        lambda: xb.Shape.array_shape(np.float32, (2, 3), (1, 0), padded_dimensions=(1, 3)),
        lambda: xb.Shape.array_shape(np.float32, (2, 3), (1, 0), tiles=[(2, 2, 2)]),
        lambda: xb.Shape.array_shape(np.float32, (2, 3), (1, 0), tiles=[(0, 2)]),
    ],
)
def test_invalid_layouts_raise(make):
    with pytest.raises(ValueError):
        make()


def test_linear_index_out_of_bounds():
    with pytest.raises(ValueError, match="out of bounds"):
        xb.Shape.parse("f32[3,5]").linear_index((3, 0))

"""XLA shapes and layouts: element types, dimensions, minor-to-major order,
padding and (repeated, combining) tiles.

The builder computes in logical row-major order; a layout only says how a
parameter or result is laid out in memory. This module gives the text
notation (``f32[3,5]{1,0:T(2,2)}``), the linear index of an element, and the
numpy conversion between a logical array and its physical buffer, which is
what the compiled executable takes and returns for a non-default layout.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence

import ml_dtypes
import numpy as np

# -- element types -----------------------------------------------------------------

# XLA primitive type name -> (numpy dtype, MLIR element type spelling)
_ELEMENT_TYPES: dict[str, tuple[np.dtype, str]] = {
    "pred": (np.dtype(np.bool_), "i1"),
    "s4": (np.dtype(ml_dtypes.int4), "i4"),
    "s8": (np.dtype(np.int8), "i8"),
    "s16": (np.dtype(np.int16), "i16"),
    "s32": (np.dtype(np.int32), "i32"),
    "s64": (np.dtype(np.int64), "i64"),
    "u4": (np.dtype(ml_dtypes.uint4), "ui4"),
    "u8": (np.dtype(np.uint8), "ui8"),
    "u16": (np.dtype(np.uint16), "ui16"),
    "u32": (np.dtype(np.uint32), "ui32"),
    "u64": (np.dtype(np.uint64), "ui64"),
    "f16": (np.dtype(np.float16), "f16"),
    "bf16": (np.dtype(ml_dtypes.bfloat16), "bf16"),
    "f32": (np.dtype(np.float32), "f32"),
    "f64": (np.dtype(np.float64), "f64"),
    "c64": (np.dtype(np.complex64), "complex<f32>"),
    "c128": (np.dtype(np.complex128), "complex<f64>"),
    "f8e4m3fn": (np.dtype(ml_dtypes.float8_e4m3fn), "f8E4M3FN"),
    "f8e5m2": (np.dtype(ml_dtypes.float8_e5m2), "f8E5M2"),
    "f8e4m3fnuz": (np.dtype(ml_dtypes.float8_e4m3fnuz), "f8E4M3FNUZ"),
    "f8e5m2fnuz": (np.dtype(ml_dtypes.float8_e5m2fnuz), "f8E5M2FNUZ"),
    "f8e4m3b11fnuz": (np.dtype(ml_dtypes.float8_e4m3b11fnuz), "f8E4M3B11FNUZ"),
    "f8e3m4": (np.dtype(ml_dtypes.float8_e3m4), "f8E3M4"),
    "f8e4m3": (np.dtype(ml_dtypes.float8_e4m3), "f8E4M3"),
    "f8e8m0fnu": (np.dtype(ml_dtypes.float8_e8m0fnu), "f8E8M0FNU"),
    "f4e2m1fn": (np.dtype(ml_dtypes.float4_e2m1fn), "f4E2M1FN"),
}
_BY_DTYPE = {dt: name for name, (dt, _) in _ELEMENT_TYPES.items()}
TOKEN = "token"  # orders side effects (infeed, outfeed, send, recv); has no data
_BY_MLIR = {mlir: name for name, (_, mlir) in _ELEMENT_TYPES.items()}


class PrimitiveType:
    """XLA element type names (``PrimitiveType.F32 == "f32"``)."""

    PRED, S4, S8, S16, S32, S64 = "pred", "s4", "s8", "s16", "s32", "s64"
    U4, U8, U16, U32, U64 = "u4", "u8", "u16", "u32", "u64"
    F16, BF16, F32, F64, C64, C128 = "f16", "bf16", "f32", "f64", "c64", "c128"
    F8E4M3FN, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ = "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz"
    F8E4M3B11FNUZ, F8E3M4, F8E4M3, F8E8M0FNU, F4E2M1FN = (
        "f8e4m3b11fnuz",
        "f8e3m4",
        "f8e4m3",
        "f8e8m0fnu",
        "f4e2m1fn",
    )


def element_type_name(element_type) -> str:
    """The XLA name (``f32``, ``s32``, ``pred``...) of a name, numpy dtype or MLIR spelling."""
    if isinstance(element_type, str):
        key = element_type.lower()
        if key in _ELEMENT_TYPES or key == TOKEN:
            return key
        if element_type in _BY_MLIR:
            return _BY_MLIR[element_type]
    try:
        return _BY_DTYPE[np.dtype(element_type)]
    except (TypeError, KeyError):
        raise TypeError(f"unknown element type {element_type!r}") from None


def numpy_dtype(element_type) -> np.dtype:
    name = element_type_name(element_type)
    if name == TOKEN:
        raise TypeError("a token has no dtype: it carries no data")
    return _ELEMENT_TYPES[name][0]


def mlir_element_type(element_type) -> str:
    name = element_type_name(element_type)
    if name == TOKEN:
        raise TypeError("a token is not an array element type")
    return _ELEMENT_TYPES[name][1]


def is_float(name: str) -> bool:
    return name in ("f16", "bf16", "f32", "f64") or name.startswith(("f8", "f4"))


def is_complex(name: str) -> bool:
    return name in ("c64", "c128")


def is_signed_int(name: str) -> bool:
    return name in ("s4", "s8", "s16", "s32", "s64")


def is_unsigned_int(name: str) -> bool:
    return name in ("u4", "u8", "u16", "u32", "u64")


def is_integer(name: str) -> bool:
    return is_signed_int(name) or is_unsigned_int(name)


def bit_width(name: str) -> int:
    if name == "pred":
        return 1
    if name in ("s4", "u4", "f4e2m1fn"):
        return 4
    return numpy_dtype(name).itemsize * 8


def complex_part_type(name: str) -> str:
    return {"c64": "f32", "c128": "f64"}[name]


def complex_type_of(name: str) -> str:
    try:
        return {"f32": "c64", "f64": "c128"}[name]
    except KeyError:
        raise TypeError(f"no complex type has {name} parts (only f32 and f64)") from None


# -- layout ------------------------------------------------------------------------

COMBINE = -1  # a tile entry '*': merge this dimension into the next more-minor one


@dataclasses.dataclass(frozen=True)
class Layout:
    """How an array is laid out in memory.

    ``minor_to_major``: dimension numbers from the fastest-varying to the slowest.
    ``tiles``: tiles applied one after the other to the most-minor physical
    dimensions (``-1`` = combine with the next more-minor dimension).
    ``padded_dimensions``: legacy per-dimension padded bounds (seed 001),
    filled with ``padding_value``.
    """

    minor_to_major: tuple[int, ...]
    tiles: tuple[tuple[int, ...], ...] = ()
    padded_dimensions: tuple[int, ...] | None = None
    padding_value: float = 0

    def __init__(self, minor_to_major, tiles=(), padded_dimensions=None, padding_value=0):
        object.__setattr__(self, "minor_to_major", tuple(int(d) for d in minor_to_major))
        object.__setattr__(self, "tiles", tuple(tuple(int(t) for t in tile) for tile in tiles))
        padded = None if padded_dimensions is None else tuple(int(d) for d in padded_dimensions)
        object.__setattr__(self, "padded_dimensions", padded)
        object.__setattr__(self, "padding_value", padding_value)

    @staticmethod
    def default(rank: int) -> Layout:
        return Layout(tuple(range(rank - 1, -1, -1)))

    def is_default(self) -> bool:
        rank = len(self.minor_to_major)
        return (
            self.minor_to_major == tuple(range(rank - 1, -1, -1))
            and not self.tiles
            and self.padded_dimensions is None
        )

    def __str__(self) -> str:
        text = ",".join(str(d) for d in self.minor_to_major)
        suffix = ""
        if self.tiles:
            suffix += "T" + "".join(
                "(" + ",".join("*" if t == COMBINE else str(t) for t in tile) + ")"
                for tile in self.tiles
            )
        if self.padded_dimensions is not None:
            suffix += "P(" + ",".join(str(d) for d in self.padded_dimensions) + ")"
        return "{" + text + (":" + suffix if suffix else "") + "}"

    def validate(self, dimensions: Sequence[int]) -> None:
        """ValueError unless this layout fits an array of ``dimensions``."""
        rank = len(dimensions)
        if sorted(self.minor_to_major) != list(range(rank)):
            raise ValueError(
                f"layout {self}: minor_to_major must be a permutation of 0..{rank - 1} "
                f"for an array of rank {rank}"
            )
        if self.padded_dimensions is not None:
            if len(self.padded_dimensions) != rank:
                raise ValueError(f"layout {self}: {rank} padded dimensions expected")
            for d, (n, p) in enumerate(zip(dimensions, self.padded_dimensions)):
                if p < n:
                    raise ValueError(
                        f"layout {self}: padded bound {p} of dimension {d} is below its size {n}"
                    )
        bounds = _padded_physical_bounds(dimensions, self)
        for tile in self.tiles:
            if not tile or len(tile) > len(bounds):
                raise ValueError(
                    f"layout {self}: tile {tile} is longer than the {len(bounds)} dimensions it tiles"
                )
            if any(t == 0 or t < COMBINE for t in tile):
                raise ValueError(f"layout {self}: tile entries must be positive or '*'")
            if tile[-1] == COMBINE:
                raise ValueError(f"layout {self}: the most-minor tile entry cannot be '*'")
            bounds = _tile_bounds(bounds, tile)


# -- shape -------------------------------------------------------------------------


class Shape:
    """An array shape (element type, dimensions, optional layout) or a tuple of shapes."""

    __slots__ = ("_dimensions", "_element_type", "_layout", "_tuple")

    def __init__(
        self, element_type=None, dimensions=(), layout: Layout | None = None, *, tuple_shapes=None
    ):
        if tuple_shapes is not None:
            self._tuple = tuple(tuple_shapes)
            for s in self._tuple:
                if not isinstance(s, Shape):
                    raise TypeError(f"tuple shape elements must be Shapes, got {type(s).__name__}")
            self._element_type, self._dimensions, self._layout = "tuple", (), None
            return
        self._tuple = None
        self._element_type = element_type_name(element_type)
        dims = tuple(int(d) for d in dimensions)
        if any(d < 0 for d in dims):
            raise ValueError(f"negative dimension size in {list(dims)}")
        self._dimensions = dims
        if layout is not None:
            layout.validate(dims)
        self._layout = layout

    # construction ------------------------------------------------------------------

    @staticmethod
    def array_shape(
        element_type, dimensions, minor_to_major=None, *, tiles=(), padded_dimensions=None
    ) -> Shape:
        layout = None
        if minor_to_major is not None or tiles or padded_dimensions is not None:
            m2m = (
                minor_to_major if minor_to_major is not None else range(len(dimensions) - 1, -1, -1)
            )
            layout = Layout(m2m, tiles, padded_dimensions)
        return Shape(element_type, dimensions, layout)

    @staticmethod
    def scalar_shape(element_type) -> Shape:
        return Shape(element_type, ())

    @staticmethod
    def tuple_shape(shapes: Sequence[Shape]) -> Shape:
        return Shape(tuple_shapes=shapes)

    @staticmethod
    def token_shape() -> Shape:
        return Shape(TOKEN, ())

    @staticmethod
    def parse(text: str) -> Shape:
        parser = _Parser(text)
        shape = parser.shape()
        parser.end()
        return shape

    def with_layout(self, layout: Layout | Sequence[int] | None) -> Shape:
        if layout is not None and not isinstance(layout, Layout):
            layout = Layout(layout)
        return Shape(self._element_type, self._dimensions, layout)

    def without_layout(self) -> Shape:
        if self.is_tuple():
            return Shape.tuple_shape([s.without_layout() for s in self._tuple])
        return Shape(self._element_type, self._dimensions)

    # queries -----------------------------------------------------------------------

    def is_tuple(self) -> bool:
        return self._tuple is not None

    def is_array(self) -> bool:
        return self._tuple is None and self._element_type != TOKEN

    def is_token(self) -> bool:
        return self._element_type == TOKEN

    def tuple_shapes(self) -> tuple[Shape, ...]:
        if self._tuple is None:
            raise ValueError(f"{self} is not a tuple shape")
        return self._tuple

    def element_type(self) -> str:
        return self._element_type

    def numpy_dtype(self) -> np.dtype:
        if self.is_tuple():
            raise ValueError(f"tuple shape {self} has no dtype")
        return numpy_dtype(self._element_type)

    def dimensions(self) -> tuple[int, ...]:
        return self._dimensions

    def rank(self) -> int:
        return len(self._dimensions)

    def true_rank(self) -> int:
        """Number of dimensions of size greater than one."""
        return sum(1 for d in self._dimensions if d > 1)

    def element_count(self) -> int:
        return math.prod(self._dimensions)

    def has_layout(self) -> bool:
        return self._layout is not None

    def layout(self) -> Layout:
        return self._layout if self._layout is not None else Layout.default(self.rank())

    def minor_to_major(self) -> tuple[int, ...]:
        return self.layout().minor_to_major

    def has_default_layout(self) -> bool:
        if self.is_tuple():
            return all(s.has_default_layout() for s in self._tuple)
        return self.layout().is_default()

    def equal_ignoring_layout(self, other: Shape) -> bool:
        if self.is_tuple() or other.is_tuple():
            return (
                self.is_tuple()
                and other.is_tuple()
                and len(self._tuple) == len(other._tuple)
                and all(a.equal_ignoring_layout(b) for a, b in zip(self._tuple, other._tuple))
            )
        return self._element_type == other._element_type and self._dimensions == other._dimensions

    def leaves(self) -> list[Shape]:
        """The array shapes of this shape, flattened depth-first."""
        if self._tuple is None:
            return [self]
        return [leaf for s in self._tuple for leaf in s.leaves()]

    def __eq__(self, other) -> bool:
        if not isinstance(other, Shape):
            return NotImplemented
        if self.is_tuple() or other.is_tuple():
            return self.is_tuple() and other.is_tuple() and self._tuple == other._tuple
        return self.equal_ignoring_layout(other) and self.layout() == other.layout()

    def __hash__(self) -> int:
        if self._tuple is not None:
            return hash(self._tuple)
        return hash((self._element_type, self._dimensions, self.layout()))

    def __str__(self) -> str:
        if self._tuple is not None:
            return "(" + ", ".join(str(s) for s in self._tuple) + ")"
        text = f"{self._element_type}[{','.join(str(d) for d in self._dimensions)}]"
        return text + (str(self._layout) if self._layout is not None else "")

    def __repr__(self) -> str:
        return f"Shape({self})"

    # physical layout ----------------------------------------------------------------

    def physical_dimensions(self) -> tuple[int, ...]:
        """Bounds of the physical buffer, major to minor, after padding and tiling."""
        return physical_dimensions(self)

    def buffer_size(self) -> int:
        return buffer_size(self)

    def linear_index(self, index: Sequence[int]) -> int:
        return linear_index(self, index)


# -- physical layout: index mapping (seeds 001/002) ---------------------------------


def _physical_order(layout: Layout) -> tuple[int, ...]:
    """Logical dimension numbers from the most major to the most minor."""
    return tuple(reversed(layout.minor_to_major))


def _padded_physical_bounds(dimensions: Sequence[int], layout: Layout) -> list[int]:
    bounds = layout.padded_dimensions or dimensions
    return [bounds[d] for d in _physical_order(layout)]


def _combine(bounds: list, index: list | None, tile: Sequence[int]):
    """Remove '*' dims of the tiled suffix, merging each into the next more-minor dim."""
    k = len(tile)
    lead_b, tail_b = list(bounds[:-k]), list(bounds[-k:])
    lead_i, tail_i = (list(index[:-k]), list(index[-k:])) if index is not None else (None, None)
    kept_tile, kept_b, kept_i = [], [], []
    carry_b, carry_i = 1, 0
    for pos, t in enumerate(tile):
        b = tail_b[pos] * carry_b
        i = carry_i * tail_b[pos] + tail_i[pos] if index is not None else None
        if t == COMBINE:
            carry_b, carry_i = b, i
            continue
        carry_b, carry_i = 1, 0
        kept_tile.append(t)
        kept_b.append(b)
        kept_i.append(i)
    return lead_b, kept_b, lead_i, kept_i, kept_tile


def _tile_bounds(bounds: list, tile: Sequence[int]) -> list[int]:
    lead, tail, _, _, kept = _combine(bounds, None, tile)
    return lead + [-(-b // t) for b, t in zip(tail, kept)] + list(kept)


def _tile_index(bounds: list, index: list, tile: Sequence[int]):
    lead_b, tail_b, lead_i, tail_i, kept = _combine(bounds, index, tile)
    new_bounds = lead_b + [-(-b // t) for b, t in zip(tail_b, kept)] + list(kept)
    new_index = (
        lead_i + [i // t for i, t in zip(tail_i, kept)] + [i % t for i, t in zip(tail_i, kept)]
    )
    return new_bounds, new_index


def _array_layout(shape: Shape) -> Layout:
    if shape.is_tuple():
        raise ValueError(f"tuple shape {shape} has no physical layout; use its elements")
    return shape.layout()


def physical_dimensions(shape: Shape) -> tuple[int, ...]:
    layout = _array_layout(shape)
    bounds = _padded_physical_bounds(shape.dimensions(), layout)
    for tile in layout.tiles:
        bounds = _tile_bounds(bounds, tile)
    return tuple(bounds)


def buffer_size(shape: Shape) -> int:
    """Number of elements of the physical buffer (padding included)."""
    return math.prod(physical_dimensions(shape))


def physical_index(shape: Shape, index: Sequence) -> tuple:
    """The physical multi-index of logical ``index`` (entries may be numpy arrays)."""
    layout = _array_layout(shape)
    bounds = _padded_physical_bounds(shape.dimensions(), layout)
    phys = [index[d] for d in _physical_order(layout)]
    for tile in layout.tiles:
        bounds, phys = _tile_index(bounds, phys, tile)
    return tuple(phys)


def linear_index(shape: Shape, index: Sequence[int]) -> int:
    """Position of element ``index`` in the physical buffer."""
    if len(index) != shape.rank():
        raise ValueError(f"index {list(index)} has {len(index)} entries for {shape}")
    for d, (i, n) in enumerate(zip(index, shape.dimensions())):
        if not 0 <= i < n:
            raise ValueError(f"index {list(index)} is out of bounds in dimension {d} of {shape}")
    linear = 0
    for i, b in zip(physical_index(shape, index), physical_dimensions(shape)):
        linear = linear * b + int(i)
    return linear


def _logical_grid(shape: Shape) -> tuple:
    return tuple(np.indices(shape.dimensions(), dtype=np.int64)) if shape.rank() else ()


def to_physical(array, shape: Shape) -> np.ndarray:
    """The physical buffer of logical ``array`` laid out as ``shape``, shaped
    as ``physical_dimensions(shape)`` (its C-order flattening is the buffer).
    Padding holds the layout's ``padding_value``."""
    array = np.asarray(array, dtype=shape.numpy_dtype())
    if array.shape != shape.dimensions():
        raise ValueError(f"array of shape {array.shape} does not match {shape}")
    out = np.full(physical_dimensions(shape), _array_layout(shape).padding_value, dtype=array.dtype)
    out[physical_index(shape, _logical_grid(shape))] = array
    return out


def from_physical(buffer, shape: Shape) -> np.ndarray:
    """The logical array stored in the physical ``buffer`` (flat or shaped)."""
    buffer = np.asarray(buffer, dtype=shape.numpy_dtype())
    phys = physical_dimensions(shape)
    if buffer.size != math.prod(phys):
        raise ValueError(f"buffer of {buffer.size} elements, {shape} needs {math.prod(phys)}")
    return buffer.reshape(phys)[physical_index(shape, _logical_grid(shape))].copy()


# -- text parsing ------------------------------------------------------------------


class _Parser:
    """Recursive-descent parser of the shape notation (SEMANTICS 3.3)."""

    _TOKEN = re.compile(r"\s*([A-Za-z][A-Za-z0-9]*|-?\d+|[\[\]{}(),:*])")

    def __init__(self, text: str):
        self.text, self.tokens, pos = text, [], 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = self._TOKEN.match(text, pos)
            if not m:
                raise ValueError(f"cannot parse shape {text!r} at position {pos}")
            self.tokens.append(m.group(1))
            pos = m.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            want = f"{expected!r}" if expected else "more input"
            raise ValueError(f"cannot parse shape {self.text!r}: expected {want}, got {tok!r}")
        self.i += 1
        return tok

    def end(self) -> None:
        if self.peek() is not None:
            raise ValueError(f"cannot parse shape {self.text!r}: unexpected {self.peek()!r}")

    def ints(self, close: str, allow_star: bool = False) -> list[int]:
        values = []
        while self.peek() != close:
            tok = self.take()
            if tok == "*" and allow_star:
                values.append(COMBINE)
            else:
                try:
                    values.append(int(tok))
                except ValueError:
                    raise ValueError(
                        f"cannot parse shape {self.text!r}: expected an integer, got {tok!r}"
                    ) from None
            if self.peek() == ",":
                self.take(",")
        self.take(close)
        return values

    def shape(self) -> Shape:
        if self.peek() == "(":
            self.take("(")
            elements = []
            while self.peek() != ")":
                elements.append(self.shape())
                if self.peek() == ",":
                    self.take(",")
            self.take(")")
            return Shape.tuple_shape(elements)
        etype = self.take()
        if etype.lower() not in _ELEMENT_TYPES and etype.lower() != TOKEN:
            raise ValueError(f"cannot parse shape {self.text!r}: unknown element type {etype!r}")
        self.take("[")
        dims = self.ints("]")
        layout = self.layout() if self.peek() == "{" else None
        return Shape(etype, dims, layout)

    def layout(self) -> Layout:
        self.take("{")
        m2m = []
        while self.peek() not in ("}", ":"):
            m2m.append(int(self.take()))
            if self.peek() == ",":
                self.take(",")
        tiles, padded = [], None
        if self.peek() == ":":
            self.take(":")
            while self.peek() != "}":
                kind = self.take()
                if kind == "T":
                    while self.peek() == "(":
                        self.take("(")
                        tiles.append(self.ints(")", allow_star=True))
                elif kind == "P":
                    self.take("(")
                    padded = self.ints(")")
                else:
                    raise ValueError(
                        f"cannot parse shape {self.text!r}: unknown layout field {kind!r}"
                    )
        self.take("}")
        return Layout(m2m, tiles, padded)

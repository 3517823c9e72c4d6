"""Helpers shared by the op modules: builder resolution, operand checks,
constants, attribute encodings and the generic "one StableHLO op" emitter."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from . import shape as shp
from .builder import XlaBuilder, XlaOp, current_builder, flatten, unflatten
from .shape import Shape

# -- builders ----------------------------------------------------------------------


def accepts_builder(fn: Callable) -> Callable:
    """Allow the xla_client spelling with the builder first: ``Iota(b, shape, 0)``.

    The builder is made current while ``fn`` runs, so ops without operands
    (constants, iotas, parameters of nested calls) find it.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if args and isinstance(args[0], XlaBuilder):
            with args[0]:
                return fn(*args[1:], **kwargs)
        return fn(*args, **kwargs)

    return wrapper


def resolve_builder(op_name: str, *values) -> XlaBuilder:
    """The builder of the first XlaOp among ``values`` (nested lists allowed), else the current one."""
    for v in values:
        if isinstance(v, XlaOp):
            return v.builder
        if isinstance(v, (list, tuple)):
            for item in v:
                if isinstance(item, XlaOp):
                    return item.builder
    builder = current_builder()
    if builder is None:
        raise ValueError(
            f"{op_name}: no builder; pass it as the first argument or build inside `with builder:`"
        )
    return builder


# -- operand checks ----------------------------------------------------------------


def as_list(value) -> list:
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def array(op_name: str, x, what: str = "operand") -> Shape:
    """The array shape of ``x``, which must be an array-shaped XlaOp."""
    if not isinstance(x, XlaOp):
        raise TypeError(f"{op_name}: {what} must be an XlaOp, got {type(x).__name__}")
    if not x.shape.is_array():
        kind = "tuple" if x.shape.is_tuple() else "token"
        raise TypeError(f"{op_name}: {what} must be an array, got the {kind} {x.shape}")
    return x.shape


def dims_list(op_name: str, values, what: str) -> list[int]:
    try:
        return [int(v) for v in values]
    except TypeError:
        raise TypeError(
            f"{op_name}: {what} must be a sequence of integers, got {values!r}"
        ) from None


def check_dimensions(
    op_name: str, dims: Sequence[int], rank: int, what: str, shape: Shape | None = None
) -> list[int]:
    """Dimension numbers in ``[0, rank)`` without repeats (negative ones count from the end)."""
    out = []
    for d in dims:
        d = int(d)
        nd = d + rank if d < 0 else d
        if not 0 <= nd < rank:
            of = f" of {shape}" if shape is not None else ""
            raise ValueError(f"{op_name}: {what} {d} is out of range for rank {rank}{of}")
        if nd in out:
            raise ValueError(f"{op_name}: {what} {list(dims)} repeats dimension {nd}")
        out.append(nd)
    return out


def same_element_type(op_name: str, *xs: XlaOp) -> str:
    types = [x.shape.element_type() for x in xs]
    if len(set(types)) != 1:
        shapes = ", ".join(str(x.shape) for x in xs)
        raise TypeError(f"{op_name}: operands must have the same element type, got {shapes}")
    return types[0]


def scalar_shape(element_type: str) -> Shape:
    return Shape(element_type, ())


# -- constants ---------------------------------------------------------------------


def constant_array(value, dtype=None) -> np.ndarray:
    """``value`` as a numpy array; Python scalars and lists default to 32-bit types (integers
    that s32 cannot hold: s64)."""
    if dtype is not None:
        return np.asarray(value, dtype=shp.numpy_dtype(dtype))
    arr = np.asarray(value)
    if not isinstance(value, (np.ndarray, np.generic)):
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64 and _fits_int32(arr):
            arr = arr.astype(np.int32)
        elif arr.dtype == np.complex128:
            arr = arr.astype(np.complex64)
    return arr


def _fits_int32(arr: np.ndarray) -> bool:
    limits = np.iinfo(np.int32)
    return arr.size == 0 or (limits.min <= arr.min() and arr.max() <= limits.max)


def emit_constant(em, arr: np.ndarray, name: str) -> ir.Value:
    """A ``stablehlo.constant`` holding ``arr`` (any element type of the builder)."""
    ttype = em.tensor_type(Shape(name, arr.shape))
    flat = arr.reshape(-1)
    if flat.size and (flat == flat[0]).all():  # NaN never compares equal: no NaN splats
        return _splat(em, ttype, flat[0], name)
    if shp.is_complex(name):
        part = shp.complex_part_type(name)
        re = emit_constant(em, np.ascontiguousarray(arr.real), part)
        im = emit_constant(em, np.ascontiguousarray(arr.imag), part)
        return sh.complex_from_parts(re, im)
    if name == "pred":
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(arr, dtype=np.bool_))
    elif shp.bit_width(name) < 8:
        wide = "s8" if name == "s4" else "u8" if name == "u4" else "f32"
        return sh.convert(
            emit_constant(em, arr.astype(shp.numpy_dtype(wide)), wide), em.element_type(name)
        )
    else:
        raw = np.ascontiguousarray(arr).view(np.dtype(f"u{arr.dtype.itemsize}"))
        attr = ir.DenseElementsAttr.get(raw, type=em.element_type(name))
    return sh.create("stablehlo.constant", [], [ttype], {"value": attr}).result


def _splat(em, ttype, value, name: str) -> ir.Value:
    if shp.bit_width(name) < 8 and not (shp.is_integer(name)):
        return sh.convert(
            sh.constant(float(value), sh.tensor_type(ttype.shape, ir.F32Type.get())),
            ttype.element_type,
        )
    if name == "u64" and int(value) >= 2**63:
        value = int(value) - 2**64  # the attribute stores the bit pattern
    if shp.is_complex(name):
        return sh.constant(complex(value), ttype)
    return sh.constant(value.item() if hasattr(value, "item") else value, ttype)


# -- attributes --------------------------------------------------------------------


def i64_attr(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(sh.i64(), int(value))


def i32_attr(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(sh.i32(), int(value))


def bool_attr(value: bool) -> ir.Attribute:
    return ir.BoolAttr.get(bool(value))


def dense_i64_matrix(rows: Sequence[Sequence[int]], columns: int | None = None) -> ir.Attribute:
    """A ``tensor<RxCxi64>`` attribute (padding, replica groups, pairs)."""
    rows = [list(r) for r in rows]
    if not rows:
        return ir.Attribute.parse(f"dense<> : tensor<0x{columns or 0}xi64>")
    return ir.DenseElementsAttr.get(np.array(rows, dtype=np.int64))


def dims_text(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")


def precision_list(op_name: str, precision_config, count: int = 2) -> list[str] | None:
    """Normalize a precision config (None, a name, names, or an object with
    ``operand_precision``) to ``count`` precision names."""
    if precision_config is None:
        return None
    values = getattr(precision_config, "operand_precision", precision_config)
    values = [values] * count if isinstance(values, (str, int)) else list(values)
    names = []
    for v in values:
        name = PRECISIONS[v] if isinstance(v, int) else str(getattr(v, "name", v)).upper()
        if name not in PRECISIONS:
            raise ValueError(f"{op_name}: unknown precision {v!r}; expected one of {PRECISIONS}")
        names.append(name)
    if len(names) != count:
        raise ValueError(f"{op_name}: precision_config needs {count} entries, got {len(names)}")
    return names


def precision_attr(names: list[str] | None, dialect: str = "stablehlo") -> ir.Attribute | None:
    if names is None:
        return None
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#{dialect}<precision {n}>") for n in names])


# -- generic emission ---------------------------------------------------------------


def structured(shape: Shape, results) -> object:
    results = list(results)
    if shape.is_tuple():
        return unflatten(shape, results)
    return results[0]


def single_op(
    op_name: str,
    mlir_name: str,
    shape: Shape,
    operands: Sequence[XlaOp],
    attrs: Callable[[], dict] | None = None,
    builder: XlaBuilder | None = None,
    side_effect: bool = False,
    dynamic_sizes: dict | None = None,
) -> XlaOp:
    """An XlaOp emitted as one ``mlir_name`` op of result type ``shape``."""

    def emit(em, *values):
        attributes = {k: v for k, v in (attrs() if attrs else {}).items() if v is not None}
        op = sh.create(mlir_name, flatten(list(values)), em.types(shape), attributes)
        return structured(shape, op.results)

    builder = builder or resolve_builder(op_name, *operands)
    return builder.add_op(
        op_name, shape, operands, emit, side_effect=side_effect, dynamic_sizes=dynamic_sizes
    )

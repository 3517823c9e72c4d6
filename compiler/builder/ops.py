"""The XlaBuilder operations (seed 003), named and ordered as documented there.

Every function checks its operands and infers the result shape in Python,
raising ``ValueError`` (shapes, dimension numbers) or ``TypeError`` (element
types, computation signatures) that name the op; the StableHLO is emitted
later by ``XlaComputation``. Ops without operands accept the builder first,
as in ``xla_client`` (``Iota(b, shape, 0)``), or use the builder entered with
``with b:``. Computations are XlaComputations or Python callables of XlaOps.
"""

from __future__ import annotations

import functools
import math
import threading
import types
from collections.abc import Callable

import numpy as np

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from . import shape as shp
from ._support import (
    accepts_builder,
    array,
    as_list,
    check_dimensions,
    constant_array,
    dims_list,
    emit_constant,
    i32_attr,
    i64_attr,
    resolve_builder,
    same_element_type,
    single_op,
)
from .builder import XlaBuilder, XlaOp
from .shape import Shape

# -- parameters and constants ------------------------------------------------------


def Parameter(
    builder: XlaBuilder,
    parameter_number: int,
    shape: Shape,
    name: str = "",
    replicated_at_leaf_buffers=None,
) -> XlaOp:
    """Argument ``parameter_number`` of the computation, of ``shape`` (its layout
    is the buffer layout the compiled entry takes)."""
    if not isinstance(builder, XlaBuilder):
        raise TypeError(
            f"Parameter: the first argument must be an XlaBuilder, got {type(builder).__name__}"
        )
    return builder.add_parameter(int(parameter_number), shape, name)


@accepts_builder
def ConstantLiteral(literal, dtype=None) -> XlaOp:
    """A constant array (numpy array or Python value; Python floats/ints are f32/s32)."""
    builder = resolve_builder("Constant")
    if (
        isinstance(literal, (list, tuple))
        and literal
        and any(isinstance(v, (list, tuple, np.ndarray)) for v in literal)
    ):
        shapes = {np.shape(v) for v in literal}
        if len(shapes) > 1:  # a tuple literal
            return Tuple(builder, [ConstantLiteral(builder, v) for v in literal])
    arr = constant_array(literal, dtype)
    name = shp.element_type_name(arr.dtype)
    shape = Shape(name, arr.shape)
    frozen = arr.copy()
    return builder.add_op("Constant", shape, (), lambda em: emit_constant(em, frozen, name))


Constant = ConstantLiteral


def _as_op(value, like: XlaOp | None = None, builder: XlaBuilder | None = None, op_name: str = "Constant") -> XlaOp:
    """An XlaOp for ``value``: XlaOps pass through; numbers become constants of
    ``like``'s element type (an error unless it holds them)."""
    if isinstance(value, XlaOp):
        return value
    builder = builder or (like.builder if like is not None else resolve_builder("constant"))
    if (
        like is not None
        and like.shape.is_array()
        and not isinstance(value, (np.ndarray, np.generic))
    ):
        dtype = like.shape.numpy_dtype()  # Python numbers take the other operand's type
        arr = np.asarray(value)
        if (
            np.issubdtype(dtype, np.integer)
            and arr.dtype.kind == "f"
            and not np.all(arr == np.round(arr))
        ):
            raise TypeError(f"{op_name}: cannot use the non-integer {value!r} with the integer operand {like}")
        if arr.dtype.kind == "c" and dtype.kind != "c":
            raise TypeError(f"{op_name}: cannot use the complex {value!r} with the real operand {like}")
        with np.errstate(all="ignore"):
            cast = arr.astype(dtype)
            exact = dtype.kind in "fc" or np.array_equal(cast.astype(arr.dtype), arr)
        if not exact:
            raise ValueError(f"{op_name}: cannot use {value!r} with the operand {like}: "
                             f"{like.shape.element_type()} cannot hold it")
        return ConstantLiteral(builder, cast)
    return ConstantLiteral(builder, value)


# -- element-wise unary ops --------------------------------------------------------

_FLOATING = "floating"  # float or complex
_REAL_FLOAT = "float"
_INTEGRAL = "integer"
_SIGNED = "signed"  # signed int, float, complex
_NUMERIC = "numeric"
_LOGICAL = "logical"  # integer or pred


def _type_allowed(kind: str, t: str) -> bool:
    return {
        _FLOATING: shp.is_float(t) or shp.is_complex(t),
        _REAL_FLOAT: shp.is_float(t),
        _INTEGRAL: shp.is_integer(t),
        _SIGNED: shp.is_signed_int(t) or shp.is_float(t) or shp.is_complex(t),
        _NUMERIC: t != "pred",
        _LOGICAL: shp.is_integer(t) or t == "pred",
    }[kind]


_KIND_TEXT = {
    _FLOATING: "a floating-point or complex",
    _REAL_FLOAT: "a floating-point",
    _INTEGRAL: "an integer",
    _SIGNED: "a signed integer, floating-point or complex",
    _NUMERIC: "a numeric",
    _LOGICAL: "an integer or pred",
}


def _result_accuracy_text(op_name: str, result_accuracy) -> str | None:
    """The ``#stablehlo.result_accuracy`` of a mode name (DEFAULT/HIGHEST) or a
    tolerance (dict or object with atol/rtol/ulps)."""
    if result_accuracy is None:
        return None
    if isinstance(result_accuracy, str):
        mode = result_accuracy.upper()
        if mode not in ("DEFAULT", "HIGHEST"):
            raise ValueError(
                f"{op_name}: result_accuracy mode must be DEFAULT or HIGHEST, got {result_accuracy!r}"
            )
        return f"#stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<{mode}>>"
    tol = dict(result_accuracy) if isinstance(result_accuracy, dict) else vars(result_accuracy)
    unknown = set(tol) - {"atol", "rtol", "ulps"}
    if unknown:
        raise ValueError(f"{op_name}: unknown result_accuracy fields {sorted(unknown)}")
    atol, rtol, ulps = (
        float(tol.get("atol", 0.0)),
        float(tol.get("rtol", 0.0)),
        int(tol.get("ulps", 0)),
    )
    if atol < 0 or rtol < 0 or ulps < 0:
        raise ValueError(f"{op_name}: result_accuracy tolerances must be >= 0, got {tol}")
    return (
        f"#stablehlo.result_accuracy<atol = {atol:e}, rtol = {rtol:e}, ulps = {ulps}, "
        "mode = #stablehlo.result_accuracy_mode<TOLERANCE>>"
    )


def _unary(
    op_name: str, mlir_name: str, kind: str, x, result_type: str | None = None, result_accuracy=None
) -> XlaOp:
    shape = array(op_name, x)
    t = shape.element_type()
    if not _type_allowed(kind, t):
        raise TypeError(
            f"{op_name}: operand must have {_KIND_TEXT[kind]} element type, got {shape}"
        )
    accuracy = _result_accuracy_text(op_name, result_accuracy)
    out = Shape(result_type or t, shape.dimensions())
    return single_op(
        op_name,
        mlir_name,
        out,
        [x],
        lambda: {"result_accuracy": accuracy and ir.Attribute.parse(accuracy)},
    )


def _part_type(t: str) -> str:
    return shp.complex_part_type(t) if shp.is_complex(t) else t


def Abs(operand) -> XlaOp:
    """|x|; complex operands give their (real) modulus."""
    t = array("Abs", operand).element_type()
    if shp.is_unsigned_int(t):
        return operand
    return _unary("Abs", "stablehlo.abs", _SIGNED, operand, _part_type(t))


def Neg(operand) -> XlaOp:
    return _unary("Neg", "stablehlo.negate", _NUMERIC, operand)


def Sign(operand) -> XlaOp:
    return _unary("Sign", "stablehlo.sign", _SIGNED, operand)


def Not(operand) -> XlaOp:
    """Logical not of pred, bitwise not of integers."""
    return _unary("Not", "stablehlo.not", _LOGICAL, operand)


def _math(op_name: str, mlir_name: str):
    """An element-wise floating-point function that takes XLA's ``result_accuracy``."""

    def op(operand, result_accuracy=None) -> XlaOp:
        return _unary(op_name, mlir_name, _FLOATING, operand, result_accuracy=result_accuracy)

    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = f"Element-wise ``{mlir_name}`` of a floating-point or complex operand."
    return op


Exp = _math("Exp", "stablehlo.exponential")
Expm1 = _math("Expm1", "stablehlo.exponential_minus_one")
Log = _math("Log", "stablehlo.log")
Log1p = _math("Log1p", "stablehlo.log_plus_one")
Logistic = _math("Logistic", "stablehlo.logistic")
Sqrt = _math("Sqrt", "stablehlo.sqrt")
Rsqrt = _math("Rsqrt", "stablehlo.rsqrt")
Cbrt = _math("Cbrt", "stablehlo.cbrt")
Sin = _math("Sin", "stablehlo.sine")
Cos = _math("Cos", "stablehlo.cosine")
Tan = _math("Tan", "stablehlo.tan")
Tanh = _math("Tanh", "stablehlo.tanh")


def Erf(operand, result_accuracy=None) -> XlaOp:
    """erf(x), as ``chlo.erf`` (``result_accuracy`` is checked but CHLO has no slot for it)."""
    _result_accuracy_text("Erf", result_accuracy)
    return _unary("Erf", "chlo.erf", _REAL_FLOAT, operand)


def Cosh(operand, result_accuracy=None) -> XlaOp:
    """cosh(x), as ``chlo.cosh`` (``result_accuracy`` is checked but CHLO has no slot for it)."""
    _result_accuracy_text("Cosh", result_accuracy)
    return _unary("Cosh", "chlo.cosh", _FLOATING, operand)


def Floor(operand) -> XlaOp:
    return _unary("Floor", "stablehlo.floor", _REAL_FLOAT, operand)


def Ceil(operand) -> XlaOp:
    return _unary("Ceil", "stablehlo.ceil", _REAL_FLOAT, operand)


def RoundNearestAfz(operand) -> XlaOp:
    """Round to nearest, ties away from zero."""
    return _unary("RoundNearestAfz", "stablehlo.round_nearest_afz", _REAL_FLOAT, operand)


def Round(operand) -> XlaOp:
    """Round to nearest, ties away from zero (same as RoundNearestAfz)."""
    return _unary("Round", "stablehlo.round_nearest_afz", _REAL_FLOAT, operand)


def RoundNearestEven(operand) -> XlaOp:
    return _unary("RoundNearestEven", "stablehlo.round_nearest_even", _REAL_FLOAT, operand)


def IsFinite(operand) -> XlaOp:
    return _unary("IsFinite", "stablehlo.is_finite", _REAL_FLOAT, operand, "pred")


def Clz(operand) -> XlaOp:
    return _unary("Clz", "stablehlo.count_leading_zeros", _INTEGRAL, operand)


def PopulationCount(operand) -> XlaOp:
    return _unary("PopulationCount", "stablehlo.popcnt", _INTEGRAL, operand)


def Real(operand) -> XlaOp:
    """Real part; a real operand is returned unchanged."""
    t = array("Real", operand).element_type()
    if not shp.is_complex(t):
        return operand
    return _unary("Real", "stablehlo.real", _FLOATING, operand, _part_type(t))


def Imag(operand) -> XlaOp:
    """Imaginary part; a real floating-point operand gives zeros."""
    shape = array("Imag", operand)
    t = shape.element_type()
    if shp.is_float(t):
        return Broadcast(
            ConstantLiteral(operand.builder, np.zeros((), shape.numpy_dtype())), shape.dimensions()
        )
    return _unary("Imag", "stablehlo.imag", _FLOATING, operand, _part_type(t))


def Conj(operand) -> XlaOp:
    """Complex conjugate; a real operand is returned unchanged."""
    shape = array("Conj", operand)
    if not shp.is_complex(shape.element_type()):
        return operand
    return Complex(Real(operand), Neg(Imag(operand)))


# -- element-wise binary ops with XLA broadcasting ----------------------------------


def _binary_operands(op_name: str, lhs, rhs):
    if not isinstance(lhs, XlaOp) and not isinstance(rhs, XlaOp):
        raise TypeError(f"{op_name}: at least one operand must be an XlaOp")
    if not isinstance(lhs, XlaOp):
        lhs = _as_op(lhs, like=rhs, op_name=op_name)
    if not isinstance(rhs, XlaOp):
        rhs = _as_op(rhs, like=lhs, op_name=op_name)
    return lhs, rhs


def _broadcast_shapes(
    op_name: str, lhs: XlaOp, rhs: XlaOp, broadcast_dimensions
) -> tuple[list[int], list, list]:
    """XLA's implicit broadcasting: (result dims, lhs map, rhs map) where a map
    sends each operand dimension to a result dimension."""
    ls, rs = array(op_name, lhs, "lhs"), array(op_name, rhs, "rhs")
    ld, rd = list(ls.dimensions()), list(rs.dimensions())
    bd = list(broadcast_dimensions or ())
    if bd and len(ld) == len(rd) and bd != list(range(len(ld))):
        raise ValueError(
            f"{op_name}: broadcast_dimensions {bd} must be the identity for same-rank {ls} and {rs}"
        )
    if len(ld) == len(rd):
        maps = (list(range(len(ld))), list(range(len(rd))))
        big = ld
    elif not bd:
        if ls.rank() == 0 or rs.rank() == 0:
            out = ld if rs.rank() == 0 else rd
            return (
                list(out),
                ([] if ls.rank() == 0 else list(range(len(out)))),
                ([] if rs.rank() == 0 else list(range(len(out)))),
            )
        raise ValueError(
            f"{op_name}: shapes {ls} and {rs} have different ranks; pass broadcast_dimensions "
            "to map the lower-rank operand into the higher-rank one"
        )
    else:
        small_is_lhs = len(ld) < len(rd)
        small, big = (ld, rd) if small_is_lhs else (rd, ld)
        if len(bd) != len(small):
            raise ValueError(
                f"{op_name}: broadcast_dimensions {bd} needs one entry per dimension of the "
                f"lower-rank operand ({ls if small_is_lhs else rs})"
            )
        bd = check_dimensions(op_name, bd, len(big), "broadcast dimension")
        if bd != sorted(bd):
            raise ValueError(f"{op_name}: broadcast_dimensions {bd} must be increasing")
        maps = (bd, list(range(len(big)))) if small_is_lhs else (list(range(len(big))), bd)
    out = list(big)
    for dims, mapping, shape in ((ld, maps[0], ls), (rd, maps[1], rs)):
        for size, d in zip(dims, mapping):
            if size == out[d] or size == 1:
                continue
            if out[d] == 1:
                out[d] = size
            else:
                raise ValueError(f"{op_name}: shapes {ls} and {rs} are not broadcast-compatible")
    for dims, mapping in ((ld, maps[0]), (rd, maps[1])):  # a second pass for degenerate sizes
        for size, d in zip(dims, mapping):
            if size not in (1, out[d]):
                raise ValueError(f"{op_name}: shapes {ls} and {rs} are not broadcast-compatible")
    return out, maps[0], maps[1]


def _broadcast_to(x: XlaOp, dims: list[int], mapping: list[int]) -> XlaOp:
    if list(x.shape.dimensions()) == dims and mapping == list(range(len(dims))):
        return x
    return BroadcastInDim(x, dims, mapping)


def _elementwise(
    op_name: str, lhs, rhs, broadcast_dimensions, emit_fn, result_type=None, check=None
) -> XlaOp:
    lhs, rhs = _binary_operands(op_name, lhs, rhs)
    out, lmap, rmap = _broadcast_shapes(op_name, lhs, rhs, broadcast_dimensions)
    t = same_element_type(op_name, lhs, rhs)
    if check is not None and not _type_allowed(check, t):
        raise TypeError(
            f"{op_name}: operands must have {_KIND_TEXT[check]} element type, got {lhs.shape} and {rhs.shape}"
        )
    lhs, rhs = _broadcast_to(lhs, out, lmap), _broadcast_to(rhs, out, rmap)
    shape = Shape(result_type(t) if result_type else t, out)
    return lhs.builder.add_op(op_name, shape, [lhs, rhs], lambda em, a, b: emit_fn(em, shape, a, b))


def _binary(op_name: str, mlir_name: str, check: str | None = None):
    def op(lhs, rhs, broadcast_dimensions=()) -> XlaOp:
        def emit(em, shape, a, b):
            return sh.create(mlir_name, [a, b], [em.tensor_type(shape)]).result

        return _elementwise(op_name, lhs, rhs, broadcast_dimensions, emit, check=check)

    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = (
        f"Element-wise ``{mlir_name}``; ``broadcast_dimensions`` maps the lower-rank operand."
    )
    return op


Add = _binary("Add", "stablehlo.add")
Sub = _binary("Sub", "stablehlo.subtract", _NUMERIC)
Mul = _binary("Mul", "stablehlo.multiply")
Div = _binary("Div", "stablehlo.divide", _NUMERIC)
Rem = _binary("Rem", "stablehlo.remainder", _NUMERIC)
Max = _binary("Max", "stablehlo.maximum")
Min = _binary("Min", "stablehlo.minimum")
Pow = _binary("Pow", "stablehlo.power", _NUMERIC)
And = _binary("And", "stablehlo.and", _LOGICAL)
Or = _binary("Or", "stablehlo.or", _LOGICAL)
Xor = _binary("Xor", "stablehlo.xor", _LOGICAL)
Atan2 = _binary("Atan2", "stablehlo.atan2", _FLOATING)
ShiftLeft = _binary("ShiftLeft", "stablehlo.shift_left", _INTEGRAL)
ShiftRightArithmetic = _binary(
    "ShiftRightArithmetic", "stablehlo.shift_right_arithmetic", _INTEGRAL
)
ShiftRightLogical = _binary("ShiftRightLogical", "stablehlo.shift_right_logical", _INTEGRAL)


def Complex(lhs, rhs, broadcast_dimensions=()) -> XlaOp:
    """A complex array from real (lhs) and imaginary (rhs) parts."""

    def emit(em, shape, a, b):
        return sh.complex_from_parts(a, b)

    return _elementwise(
        "Complex", lhs, rhs, broadcast_dimensions, emit, shp.complex_type_of, _REAL_FLOAT
    )


def _compare_type(t: str, total_order: bool) -> str:
    if shp.is_float(t):
        return "TOTALORDER" if total_order else "FLOAT"
    if shp.is_complex(t):
        return "FLOAT"
    return "SIGNED" if shp.is_signed_int(t) else "UNSIGNED"


def Compare(
    lhs, rhs, broadcast_dimensions=(), direction: str = "EQ", compare_type: str | None = None
) -> XlaOp:
    """Element-wise comparison (``direction`` EQ/NE/GE/GT/LE/LT) giving pred."""
    direction = str(getattr(direction, "name", direction)).upper()
    if direction not in ("EQ", "NE", "GE", "GT", "LE", "LT"):
        raise ValueError(f"Compare: unknown direction {direction!r}")
    op_name = {"EQ": "Eq", "NE": "Ne", "GE": "Ge", "GT": "Gt", "LE": "Le", "LT": "Lt"}[direction]
    if compare_type is not None:
        compare_type = str(getattr(compare_type, "name", compare_type)).upper()
        if compare_type not in ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"):
            raise ValueError(f"{op_name}: unknown compare type {compare_type!r}")
    lhs, rhs = _binary_operands(op_name, lhs, rhs)
    t = same_element_type(op_name, lhs, rhs)
    if shp.is_complex(t) and direction not in ("EQ", "NE"):
        raise TypeError(
            f"{op_name}: complex operands ({lhs.shape}) can only be compared for (in)equality"
        )
    kind = compare_type or _compare_type(t, False)
    allowed = ("FLOAT", "TOTALORDER") if shp.is_float(t) or shp.is_complex(t) else (_compare_type(t, False),)
    if kind not in allowed:
        raise ValueError(f"{op_name}: compare type {kind} does not fit {t} operands (use {' or '.join(allowed)})")

    def emit(em, shape, a, b):
        return sh.compare(direction, a, b, kind)

    return _elementwise(op_name, lhs, rhs, broadcast_dimensions, emit, lambda _: "pred")


def _comparison(op_name: str, direction: str, total_order: bool):
    def op(lhs, rhs, broadcast_dimensions=()) -> XlaOp:
        lhs2, rhs2 = _binary_operands(op_name, lhs, rhs)
        t = same_element_type(op_name, lhs2, rhs2)
        result = Compare(lhs2, rhs2, broadcast_dimensions, direction, _compare_type(t, total_order))
        result.op_name = op_name
        return result

    op.__name__ = op.__qualname__ = op_name
    order = " in the total order -NaN < -Inf < -x < -0 < +0 < x < Inf < NaN" if total_order else ""
    op.__doc__ = f"Element-wise ``lhs {direction} rhs``{order}, giving pred."
    return op


Eq = _comparison("Eq", "EQ", False)
Ne = _comparison("Ne", "NE", False)
Ge = _comparison("Ge", "GE", False)
Gt = _comparison("Gt", "GT", False)
Le = _comparison("Le", "LE", False)
Lt = _comparison("Lt", "LT", False)
EqTotalOrder = _comparison("EqTotalOrder", "EQ", True)
NeTotalOrder = _comparison("NeTotalOrder", "NE", True)
GeTotalOrder = _comparison("GeTotalOrder", "GE", True)
GtTotalOrder = _comparison("GtTotalOrder", "GT", True)
LeTotalOrder = _comparison("LeTotalOrder", "LE", True)
LtTotalOrder = _comparison("LtTotalOrder", "LT", True)


# -- type conversion ---------------------------------------------------------------


def ConvertElementType(operand, new_element_type) -> XlaOp:
    shape = array("ConvertElementType", operand)
    new = shp.element_type_name(new_element_type)
    if new == shape.element_type():
        return operand
    return single_op(
        "ConvertElementType", "stablehlo.convert", Shape(new, shape.dimensions()), [operand]
    )


def BitcastConvertType(operand, new_element_type) -> XlaOp:
    """Reinterpret the bits; a narrower type adds a minor dimension, a wider
    one consumes the minor dimension (seed 003)."""
    shape = array("BitcastConvertType", operand)
    old, new = shape.element_type(), shp.element_type_name(new_element_type)
    if shp.is_complex(old) != shp.is_complex(new):
        raise TypeError(f"BitcastConvertType: cannot reinterpret {old} as {new} (real and complex types)")
    ob, nb = shp.bit_width(old), shp.bit_width(new)
    dims = list(shape.dimensions())
    if ob > nb:
        if ob % nb:
            raise TypeError(f"BitcastConvertType: {old} is not a multiple of {new}'s width")
        dims.append(ob // nb)
    elif ob < nb:
        if nb % ob or not dims or dims[-1] != nb // ob:
            raise ValueError(
                f"BitcastConvertType: {shape} -> {new} needs a last dimension of size {nb // ob}"
            )
        dims.pop()
    return single_op("BitcastConvertType", "stablehlo.bitcast_convert", Shape(new, dims), [operand])


def ReducePrecision(operand, exponent_bits: int, mantissa_bits: int) -> XlaOp:
    shape = array("ReducePrecision", operand)
    if not shp.is_float(shape.element_type()):
        raise TypeError(f"ReducePrecision: operand must be floating-point, got {shape}")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(
            f"ReducePrecision: need exponent_bits >= 1 and mantissa_bits >= 0, got {exponent_bits}, {mantissa_bits}"
        )
    return single_op(
        "ReducePrecision",
        "stablehlo.reduce_precision",
        shape.without_layout(),
        [operand],
        lambda: {
            "exponent_bits": i32_attr(exponent_bits),
            "mantissa_bits": i32_attr(mantissa_bits),
        },
    )


# -- shape manipulation ------------------------------------------------------------


def BroadcastInDim(operand, out_dim_size, broadcast_dimensions) -> XlaOp:
    """Broadcast to ``out_dim_size``; operand dim i goes to ``broadcast_dimensions[i]``."""
    shape = array("BroadcastInDim", operand)
    out = dims_list("BroadcastInDim", out_dim_size, "out_dim_size")
    bd = dims_list("BroadcastInDim", broadcast_dimensions, "broadcast_dimensions")
    if len(bd) != shape.rank():
        raise ValueError(
            f"BroadcastInDim: {len(bd)} broadcast_dimensions for operand {shape} of rank {shape.rank()}"
        )
    bd = check_dimensions("BroadcastInDim", bd, len(out), "broadcast dimension")
    for i, d in enumerate(bd):
        if shape.dimensions()[i] not in (1, out[d]):
            raise ValueError(
                f"BroadcastInDim: operand dimension {i} of {shape} has size {shape.dimensions()[i]}, "
                f"output dimension {d} has size {out[d]}"
            )
    result = Shape(shape.element_type(), out)
    return single_op(
        "BroadcastInDim",
        "stablehlo.broadcast_in_dim",
        result,
        [operand],
        lambda: {"broadcast_dimensions": sh.dense_i64(bd)},
        dynamic_sizes={bd[i]: size for i, size in operand.dynamic_sizes.items()},
    )


def Broadcast(operand, broadcast_sizes) -> XlaOp:
    """Add new major dimensions of ``broadcast_sizes`` on the left."""
    shape = array("Broadcast", operand)
    sizes = dims_list("Broadcast", broadcast_sizes, "broadcast_sizes")
    op = BroadcastInDim(
        operand, sizes + list(shape.dimensions()), range(len(sizes), len(sizes) + shape.rank())
    )
    op.op_name = "Broadcast"
    return op


@accepts_builder
def Reshape(*args, **kwargs) -> XlaOp:
    """``Reshape(operand, new_sizes)``, ``Reshape(operand, dimensions, new_sizes)``
    (collapse in the order ``dimensions`` first) or ``Reshape(shape, operand)``."""
    if args and isinstance(args[0], Shape):
        target, operand = args[0], (args[1] if len(args) > 1 else kwargs.pop("operand"))
        if target.element_type() != array("Reshape", operand).element_type():
            raise TypeError(
                f"Reshape: target {target} and operand {operand.shape} differ in element type"
            )
        return _reshape(operand, target.dimensions())
    operand = args[0] if args else kwargs.pop("operand")
    rest = list(args[1:])
    if len(rest) == 2 or ("new_sizes" in kwargs and (rest or "dimensions" in kwargs)):
        dimensions = rest[0] if rest else kwargs.pop("dimensions")
        new_sizes = rest[1] if len(rest) > 1 else kwargs.pop("new_sizes")
        shape = array("Reshape", operand)
        perm = check_dimensions(
            "Reshape", dims_list("Reshape", dimensions, "dimensions"), shape.rank(), "dimension"
        )
        if len(perm) != shape.rank():
            raise ValueError(
                f"Reshape: dimensions {list(dimensions)} must be a permutation of {shape}'s dimensions"
            )
        return _reshape(Transpose(operand, perm) if perm != sorted(perm) else operand, new_sizes)
    new_sizes = rest[0] if rest else kwargs.pop("new_sizes", kwargs.pop("dimensions", None))
    return _reshape(operand, new_sizes)


def _reshape(operand, new_sizes) -> XlaOp:
    shape = array("Reshape", operand)
    sizes = dims_list("Reshape", new_sizes, "new_sizes")
    if any(s < 0 for s in sizes) or math.prod(sizes) != shape.element_count():
        raise ValueError(
            f"Reshape: cannot reshape {shape} ({shape.element_count()} elements) to {sizes}"
        )
    if sizes == list(shape.dimensions()):
        return operand
    return single_op("Reshape", "stablehlo.reshape", Shape(shape.element_type(), sizes), [operand])


def Collapse(operand, dimensions) -> XlaOp:
    """Merge consecutive, in-order ``dimensions`` into one."""
    shape = array("Collapse", operand)
    dims = dims_list("Collapse", dimensions, "dimensions")
    if not dims:
        return operand
    check_dimensions("Collapse", dims, shape.rank(), "dimension")
    if dims != list(range(dims[0], dims[0] + len(dims))):
        raise ValueError(f"Collapse: dimensions {dims} must be consecutive and increasing")
    d = list(shape.dimensions())
    new = d[: dims[0]] + [math.prod(d[dims[0] : dims[-1] + 1])] + d[dims[-1] + 1 :]
    op = _reshape(operand, new)
    return op


def Transpose(operand, permutation) -> XlaOp:
    shape = array("Transpose", operand)
    perm = dims_list("Transpose", permutation, "permutation")
    if sorted(perm) != list(range(shape.rank())):
        raise ValueError(f"Transpose: {perm} is not a permutation of the dimensions of {shape}")
    if perm == list(range(shape.rank())):
        return operand
    out = Shape(shape.element_type(), [shape.dimensions()[p] for p in perm])
    return single_op(
        "Transpose",
        "stablehlo.transpose",
        out,
        [operand],
        lambda: {"permutation": sh.dense_i64(perm)},
    )


def Rev(operand, dimensions) -> XlaOp:
    shape = array("Rev", operand)
    dims = check_dimensions(
        "Rev", dims_list("Rev", dimensions, "dimensions"), shape.rank(), "dimension", shape
    )
    return single_op(
        "Rev",
        "stablehlo.reverse",
        shape.without_layout(),
        [operand],
        lambda: {"dimensions": sh.dense_i64(dims)},
    )


def Slice(operand, start_indices, limit_indices, strides=None) -> XlaOp:
    shape = array("Slice", operand)
    start = dims_list("Slice", start_indices, "start_indices")
    limit = dims_list("Slice", limit_indices, "limit_indices")
    stride = dims_list("Slice", strides, "strides") if strides is not None else [1] * shape.rank()
    if not len(start) == len(limit) == len(stride) == shape.rank():
        raise ValueError(f"Slice: start/limit/strides need {shape.rank()} entries each for {shape}")
    for d, (lo, hi, st, n) in enumerate(zip(start, limit, stride, shape.dimensions())):
        if not (0 <= lo <= hi <= n) or st < 1:
            raise ValueError(f"Slice: [{lo}:{hi}:{st}] is invalid for dimension {d} of {shape}")
    out = Shape(
        shape.element_type(), [-(-(hi - lo) // st) for lo, hi, st in zip(start, limit, stride)]
    )
    return single_op(
        "Slice",
        "stablehlo.slice",
        out,
        [operand],
        lambda: {
            "start_indices": sh.dense_i64(start),
            "limit_indices": sh.dense_i64(limit),
            "strides": sh.dense_i64(stride),
        },
    )


def SliceInDim(operand, start_index: int, limit_index: int, stride: int, dimno: int) -> XlaOp:
    shape = array("SliceInDim", operand)
    (d,) = check_dimensions("SliceInDim", [dimno], shape.rank(), "dimension", shape)
    start, limit, strides = [0] * shape.rank(), list(shape.dimensions()), [1] * shape.rank()
    start[d], limit[d], strides[d] = start_index, limit_index, stride
    return Slice(operand, start, limit, strides)


def _start_indices(op_name: str, start_indices, operand: XlaOp) -> list[XlaOp]:
    """Scalar integer start indices (a list of scalars or one 1-D array) into ``operand``;
    Python integers are s32 constants (s64 when they need it)."""
    if (
        isinstance(start_indices, XlaOp)
        and start_indices.shape.is_array()
        and start_indices.shape.rank() == 1
    ):
        vec = start_indices
        starts = [Reshape(Slice(vec, [i], [i + 1]), []) for i in range(vec.shape.dimensions()[0])]
    elif isinstance(start_indices, np.ndarray):
        starts = list(start_indices.reshape(-1))
    else:
        starts = as_list(start_indices)
    builder = resolve_builder(op_name, operand, *starts)
    starts = [s if isinstance(s, XlaOp) else _index_constant(op_name, builder, s) for s in starts]
    dims = operand.shape.dimensions()
    if len(starts) != len(dims):
        raise ValueError(f"{op_name}: {len(starts)} start indices for an operand of rank {len(dims)}")
    for i, s in enumerate(starts):
        ss = array(op_name, s, f"start index {i}")
        if ss.rank() != 0 or not shp.is_integer(ss.element_type()):
            raise TypeError(f"{op_name}: start index {i} must be an integer scalar, got {ss}")
    types = {s.shape.element_type() for s in starts}
    if len(types) > 1:  # one type, s64: an unsigned start is clamped to the dimension first (no wrap)
        starts = [ConvertElementType(_at_most(s, n) if shp.is_unsigned_int(s.shape.element_type()) else s, "s64")
                  for s, n in zip(starts, dims)]
    return starts


def _index_constant(op_name: str, builder, value) -> XlaOp:
    """A Python start index as a constant: s32, or s64 when s32 cannot hold it (as any
    Python integer constant)."""
    value = int(value)
    if not np.iinfo(np.int64).min <= value <= np.iinfo(np.int64).max:
        raise ValueError(f"{op_name}: start index {value} does not fit s64")
    return ConstantLiteral(builder, value)


def _at_most(x: XlaOp, bound: int) -> XlaOp:
    return Min(x, ConstantLiteral(x.builder, np.array(bound, x.dtype)))


def DynamicSlice(operand, start_indices, slice_sizes) -> XlaOp:
    """The ``slice_sizes`` block at runtime ``start_indices`` (clamped to fit)."""
    shape = array("DynamicSlice", operand)
    sizes = dims_list("DynamicSlice", slice_sizes, "slice_sizes")
    starts = _start_indices("DynamicSlice", start_indices, operand)
    if len(sizes) != shape.rank() or any(
        not 0 <= s <= n for s, n in zip(sizes, shape.dimensions())
    ):
        raise ValueError(f"DynamicSlice: slice_sizes {sizes} do not fit {shape}")
    out = Shape(shape.element_type(), sizes)
    return single_op(
        "DynamicSlice",
        "stablehlo.dynamic_slice",
        out,
        [operand, *starts],
        lambda: {"slice_sizes": sh.dense_i64(sizes)},
    )


def DynamicUpdateSlice(operand, update, start_indices) -> XlaOp:
    """``operand`` with ``update`` written at runtime ``start_indices`` (clamped to fit)."""
    shape = array("DynamicUpdateSlice", operand)
    ushape = array("DynamicUpdateSlice", update, "update")
    same_element_type("DynamicUpdateSlice", operand, update)
    if ushape.rank() != shape.rank() or any(
        u > n for u, n in zip(ushape.dimensions(), shape.dimensions())
    ):
        raise ValueError(f"DynamicUpdateSlice: update {ushape} does not fit in {shape}")
    starts = _start_indices("DynamicUpdateSlice", start_indices, operand)
    return single_op(
        "DynamicUpdateSlice",
        "stablehlo.dynamic_update_slice",
        shape.without_layout(),
        [operand, update, *starts],
    )


@accepts_builder
def ConcatInDim(operands, dimension: int) -> XlaOp:
    """Concatenate ``operands`` along ``dimension``."""
    operands = as_list(operands)
    if not operands:
        raise ValueError("ConcatInDim: needs at least one operand")
    shapes = [array("ConcatInDim", x, f"operand {i}") for i, x in enumerate(operands)]
    same_element_type("ConcatInDim", *operands)
    rank = shapes[0].rank()
    if rank == 0:
        raise ValueError("ConcatInDim: scalars cannot be concatenated")
    (d,) = check_dimensions("ConcatInDim", [dimension], rank, "dimension", shapes[0])
    for s in shapes[1:]:
        if s.rank() != rank or any(
            a != b for i, (a, b) in enumerate(zip(s.dimensions(), shapes[0].dimensions())) if i != d
        ):
            raise ValueError(
                f"ConcatInDim: shapes {', '.join(map(str, shapes))} differ outside dimension {d}"
            )
    if len(operands) == 1:
        return operands[0]
    dims = list(shapes[0].dimensions())
    dims[d] = sum(s.dimensions()[d] for s in shapes)
    out = Shape(shapes[0].element_type(), dims)
    return single_op(
        "ConcatInDim", "stablehlo.concatenate", out, operands, lambda: {"dimension": i64_attr(d)}
    )


@accepts_builder
def Concatenate(*args) -> XlaOp:
    """``Concatenate(operands..., dimension)`` (seed spelling of ConcatInDim)."""
    if len(args) == 2 and isinstance(args[0], (list, tuple)):
        return ConcatInDim(*args)
    return ConcatInDim(list(args[:-1]), args[-1])


def _padding_config(op_name: str, padding_config, rank: int) -> list[tuple[int, int, int]]:
    dims = getattr(padding_config, "dimensions", padding_config)
    out = []
    for entry in dims:
        if hasattr(entry, "edge_padding_low"):
            out.append((entry.edge_padding_low, entry.edge_padding_high, entry.interior_padding))
        else:
            entry = tuple(entry)
            out.append(entry if len(entry) == 3 else (entry[0], entry[1], 0))
    if len(out) != rank:
        raise ValueError(f"{op_name}: padding_config has {len(out)} entries for rank {rank}")
    return [(int(lo), int(hi), int(i)) for lo, hi, i in out]


def Pad(operand, padding_value, padding_config) -> XlaOp:
    """Pad with (edge low, edge high, interior) per dimension; interior first,
    negative edge padding removes elements."""
    shape = array("Pad", operand)
    padding_value = _as_op(padding_value, like=operand, op_name="Pad")
    pshape = array("Pad", padding_value, "padding_value")
    if pshape.rank() != 0:
        raise ValueError(f"Pad: padding_value must be a scalar, got {pshape}")
    same_element_type("Pad", operand, padding_value)
    config = _padding_config("Pad", padding_config, shape.rank())
    dims = []
    for d, (n, (lo, hi, interior)) in enumerate(zip(shape.dimensions(), config)):
        if interior < 0:
            raise ValueError(f"Pad: interior padding {interior} of dimension {d} is negative")
        size = lo + hi + (n + (n - 1) * interior if n else 0)
        if size < 0:
            raise ValueError(
                f"Pad: padding {config[d]} removes more than dimension {d} of {shape} holds"
            )
        dims.append(size)
    out = Shape(shape.element_type(), dims)
    low, high, interior = ([c[k] for c in config] for k in range(3))
    return single_op(
        "Pad",
        "stablehlo.pad",
        out,
        [operand, padding_value],
        lambda: {
            "edge_padding_low": sh.dense_i64(low),
            "edge_padding_high": sh.dense_i64(high),
            "interior_padding": sh.dense_i64(interior),
        },
    )


def PadInDim(operand, padding_value, dimno: int, pad_lo: int, pad_hi: int) -> XlaOp:
    shape = array("PadInDim", operand)
    (d,) = check_dimensions("PadInDim", [dimno], shape.rank(), "dimension", shape)
    config = [(0, 0, 0)] * shape.rank()
    config[d] = (pad_lo, pad_hi, 0)
    return Pad(operand, padding_value, config)


def Select(pred, on_true, on_false) -> XlaOp:
    """Element-wise choice; ``pred`` may be a scalar. Tuples select element-wise
    with a scalar ``pred``."""
    if isinstance(on_true, XlaOp) and on_true.shape.is_tuple():
        if not isinstance(on_false, XlaOp) or not on_false.shape.equal_ignoring_layout(
            on_true.shape
        ):
            raise TypeError(
                f"Select: tuple operands must have the same shape, got {on_true.shape} and {getattr(on_false, 'shape', on_false)}"
            )
        ps = array("Select", pred, "pred")
        if ps.rank() != 0:
            raise ValueError(f"Select: selecting tuples needs a scalar pred, got {ps}")
        return Tuple(on_true.builder, [Select(pred, a, b) for a, b in zip(on_true, on_false)])
    on_true, on_false = _binary_operands("Select", on_true, on_false)
    ts, fs = array("Select", on_true, "on_true"), array("Select", on_false, "on_false")
    if not ts.equal_ignoring_layout(fs):
        raise ValueError(f"Select: on_true {ts} and on_false {fs} must have the same shape")
    ps = array("Select", pred, "pred")
    if ps.element_type() != "pred":
        raise TypeError(f"Select: pred must have element type pred, got {ps}")
    if ps.rank() != 0 and ps.dimensions() != ts.dimensions():
        raise ValueError(f"Select: pred {ps} must be a scalar or have the shape of {ts}")
    return single_op("Select", "stablehlo.select", ts.without_layout(), [pred, on_true, on_false])


def Clamp(min, operand, max) -> XlaOp:
    """min(max(min, x), max); ``min``/``max`` may be scalars."""
    shape = array("Clamp", operand)
    lo, hi = _as_op(min, like=operand, op_name="Clamp"), _as_op(max, like=operand, op_name="Clamp")
    same_element_type("Clamp", lo, operand, hi)
    for what, b in (("min", lo), ("max", hi)):
        bs = array("Clamp", b, what)
        if bs.rank() != 0 and bs.dimensions() != shape.dimensions():
            raise ValueError(f"Clamp: {what} {bs} must be a scalar or have the shape of {shape}")
    return single_op("Clamp", "stablehlo.clamp", shape.without_layout(), [lo, operand, hi])


@accepts_builder
def Iota(shape, iota_dimension=0) -> XlaOp:
    """``Iota(shape, iota_dimension)``, or ``Iota(element_type, size)`` for a vector."""
    builder = resolve_builder("Iota")
    if not isinstance(shape, Shape):
        shape, iota_dimension = Shape(shape, [int(iota_dimension)]), 0
    if shape.is_tuple() or shape.rank() == 0:
        raise ValueError(f"Iota: shape must be an array of rank >= 1, got {shape}")
    if shape.element_type() == "pred" or shp.is_complex(shape.element_type()):
        raise TypeError(f"Iota: element type must be integer or floating-point, got {shape}")
    (d,) = check_dimensions("Iota", [iota_dimension], shape.rank(), "iota_dimension", shape)
    out = shape.without_layout()
    return single_op(
        "Iota", "stablehlo.iota", out, [], lambda: {"iota_dimension": i64_attr(d)}, builder=builder
    )


def GetDimensionSize(operand, dimension: int) -> XlaOp:
    """The size of ``dimension`` as an s32 scalar: its runtime size if it is dynamic."""
    shape = array("GetDimensionSize", operand)
    (d,) = check_dimensions("GetDimensionSize", [dimension], shape.rank(), "dimension", shape)
    if d in operand.dynamic_sizes:
        return operand.dynamic_sizes[d]
    return ConstantLiteral(operand.builder, np.int32(shape.dimensions()[d]))


# -- tuples ------------------------------------------------------------------------


@accepts_builder
def Tuple(elements) -> XlaOp:
    """A tuple of ``elements``; kept as a Python list, never a ``stablehlo.tuple``."""
    elements = as_list(elements)
    builder = resolve_builder("Tuple", elements)
    for i, e in enumerate(elements):
        if not isinstance(e, XlaOp):
            raise TypeError(f"Tuple: element {i} is a {type(e).__name__}, not an XlaOp")
    shape = Shape.tuple_shape([e.shape for e in elements])
    op = builder.add_op("Tuple", shape, elements, lambda em, *values: list(values))
    op.element_dynamic_sizes = tuple(dict(e.dynamic_sizes) for e in elements)
    return op


def GetTupleElement(tuple_data, index: int) -> XlaOp:
    if not isinstance(tuple_data, XlaOp) or not tuple_data.shape.is_tuple():
        raise TypeError(
            f"GetTupleElement: operand must be a tuple XlaOp, got {getattr(tuple_data, 'shape', tuple_data)}"
        )
    elements = tuple_data.shape.tuple_shapes()
    if not 0 <= index < len(elements):
        raise ValueError(f"GetTupleElement: index {index} is out of range for {tuple_data.shape}")
    sizes = tuple_data.element_dynamic_sizes[index] if tuple_data.element_dynamic_sizes else {}
    return tuple_data.builder.add_op(
        "GetTupleElement", elements[index], [tuple_data], lambda em, t: t[index], dynamic_sizes=sizes
    )


# -- Python operator helpers --------------------------------------------------------


def _getitem(x: XlaOp, key) -> XlaOp:
    """Static indexing: integers, slices (any step), ``...`` and ``None``."""
    if x.shape.is_tuple():
        if not isinstance(key, (int, np.integer)):
            raise TypeError(f"a tuple XlaOp is indexed by an integer, got {key!r}")
        return GetTupleElement(x, int(key))
    key = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, XlaOp) for k in key):
        raise TypeError(
            "XlaOp indices must be static (ints and slices); use DynamicSlice or Gather"
        )
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis")
    rank = x.shape.rank()
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > rank:
        raise IndexError(f"too many indices for {x.shape}")
    if Ellipsis in [k for k in key if not isinstance(k, slice)]:
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (rank - used) + key[i + 1 :]
    else:
        key = key + (slice(None),) * (rank - used)
    start, limit, strides, reverse, out_dims = [], [], [], [], []
    d = 0
    for k in key:
        if k is None:
            out_dims.append(1)
            continue
        n = x.shape.dimensions()[d]
        if isinstance(k, slice):
            lo, hi, st = k.indices(n)
            count = len(range(lo, hi, st))
            if st < 0:
                reverse.append(d)
                lo, st = n - 1 - lo, -st
            start.append(lo)
            limit.append(lo + (count - 1) * st + 1 if count else lo)
            strides.append(st)
            out_dims.append(count)
        elif isinstance(k, (int, np.integer)):
            i = int(k) + n if k < 0 else int(k)
            if not 0 <= i < n:
                raise IndexError(f"index {k} is out of bounds for dimension {d} of {x.shape}")
            start.append(i)
            limit.append(i + 1)
            strides.append(1)
        else:
            raise TypeError(f"unsupported XlaOp index {k!r}")
        d += 1
    y = Rev(x, reverse) if reverse else x
    if start != [0] * rank or limit != list(x.shape.dimensions()) or strides != [1] * rank:
        y = Slice(y, start, limit, strides)
    return Reshape(y, out_dims)


def _matmul(a: XlaOp, b: XlaOp) -> XlaOp:
    from .linalg import Dot, DotGeneral, DotDimensionNumbers

    ra, rb = array("matmul", a).rank(), array("matmul", b).rank()
    if ra <= 2 and rb <= 2:
        return Dot(a, b)
    if ra != rb:
        raise ValueError(
            f"matmul: batched operands need the same rank, got {a.shape} and {b.shape}"
        )
    batch = list(range(ra - 2))
    return DotGeneral(a, b, DotDimensionNumbers([ra - 1], [rb - 2], batch, batch))


# the rest of the op set lives in topic modules; ``xb.ops`` exposes all of it
from .computations import *
from .computations import _inline, _window_output, _window_padding  # noqa: F401
from .gather_scatter import *
from .linalg import *
from .collectives import *
from .side_effects import *
from .dynamic import *
from .tensor_iterator import *


# -- errors name the op the caller called ---------------------------------------------

_calls = threading.local()  # how deep in op calls this thread is (only the outermost names)


def _naming_errors(name: str, op: Callable) -> Callable:
    """``op`` whose shape and type errors start with ``name``: an error raised inside it
    (a Shape of an unknown type, an op it is made of) says which op the caller called."""

    @functools.wraps(op)
    def checked(*args, **kwargs):
        depth = getattr(_calls, "depth", 0)
        _calls.depth = depth + 1
        try:
            return op(*args, **kwargs)
        except (ValueError, TypeError, IndexError, OverflowError) as err:
            message = str(err)
            if depth == 0 and err.args and isinstance(err.args[0], str) and not message.startswith(f"{name}:"):
                err.args = (f"{name}: {message}", *err.args[1:])
            raise
        finally:
            _calls.depth = depth

    return checked


for _name, _op in list(globals().items()):
    if _name[:1].isupper() and isinstance(_op, types.FunctionType):
        globals()[_name] = _naming_errors(_name, _op)
del _name, _op

"""Bounded dynamic dimensions: SetDimensionSize and DynamicReshape.

Part of ``xb.ops``. As in XLA, an array with a dynamic dimension keeps its
static bound as its shape and carries the dimension's runtime size (an s32
scalar) beside it (``XlaOp.dynamic_sizes``); the elements past the size are
padding. The builder plays the part of XLA's dynamic padder: element-wise ops
and BroadcastInDim carry the sizes along, Reduce replaces the padding by its
init value first (so it is ignored), GetDimensionSize returns the runtime
size, and other ops refuse dynamic operands rather than compute on padding.
A result keeps its bound shape; its padding holds whatever the last op left.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._support import array, check_dimensions, dims_list
from .builder import XlaOp
from .shape import Shape, numpy_dtype

__all__ = ["DynamicReshape", "SetDimensionSize"]


def _size_scalar(op_name: str, value, what: str) -> XlaOp:
    shape = array(op_name, value, what)
    if shape.rank() != 0 or shape.element_type() != "s32":
        raise TypeError(f"{op_name}: {what} must be an s32 scalar, got {shape}")
    return value


def _static_view(x: XlaOp) -> XlaOp:
    """``x`` without its dynamic sizes: the whole bound-shaped buffer, padding included."""
    return x.builder.add_op("StaticView", x.shape, [x], lambda em, v: v, dynamic_sizes={})


def mask_padding(x: XlaOp, fill: XlaOp, dims: Sequence[int]) -> XlaOp:
    """``x`` with the padding of its dynamic dimensions among ``dims`` set to scalar ``fill``."""
    from . import ops

    for d in sorted(set(dims) & set(x.dynamic_sizes)):
        bounds = x.shape.dimensions()
        position = ops.Iota(x.builder, Shape("s32", bounds), d)
        inside = ops.Lt(position, x.dynamic_sizes[d])
        x = ops.Select(inside, x, ops.Broadcast(fill, bounds))
    return x


def SetDimensionSize(operand, val, dimension: int) -> XlaOp:
    """``operand`` with dimension ``dimension`` of runtime size ``val`` (s32) within its bound."""
    shape = array("SetDimensionSize", operand)
    (d,) = check_dimensions("SetDimensionSize", [dimension], shape.rank(), "dimension", shape)
    size = _size_scalar("SetDimensionSize", val, "val")
    if size.builder is not operand.builder:
        raise ValueError("SetDimensionSize: val and operand belong to different builders")
    sizes = {**operand.dynamic_sizes, d: size}
    return operand.builder.add_op(
        "SetDimensionSize", shape.without_layout(), [operand], lambda em, v: v, dynamic_sizes=sizes
    )


def _linear(positions: list[XlaOp], sizes: list[XlaOp]) -> XlaOp:
    """Row-major linear index of ``positions`` in an array of (runtime) ``sizes``."""
    from . import ops

    index = positions[0]
    for position, size in zip(positions[1:], sizes[1:]):
        index = ops.Add(ops.Mul(index, size), position)
    return index


def _logical_sizes(builder, x: XlaOp) -> list[XlaOp]:
    from . import ops

    return [
        x.dynamic_sizes[d] if d in x.dynamic_sizes else ops.ConstantLiteral(builder, np.int32(n))
        for d, n in enumerate(x.shape.dimensions())
    ]


def DynamicReshape(
    operand,
    dim_sizes: Sequence[XlaOp],
    new_size_bounds: Sequence[int],
    dims_are_dynamic: Sequence[bool],
) -> XlaOp:
    """Reshape the logical elements of ``operand`` (row-major) into ``dim_sizes``.

    The result has the static shape ``new_size_bounds``; dimension k is dynamic
    (of runtime size ``dim_sizes[k]``) when ``dims_are_dynamic[k]``, else its
    size is its bound. Positions past the sizes are zero padding.
    """
    from . import ops

    shape = array("DynamicReshape", operand)
    bounds = dims_list("DynamicReshape", new_size_bounds, "new_size_bounds")
    dynamic = [bool(f) for f in dims_are_dynamic]
    sizes = list(dim_sizes)
    if not (len(sizes) == len(bounds) == len(dynamic)):
        raise ValueError(
            f"DynamicReshape: dim_sizes ({len(sizes)}), new_size_bounds ({len(bounds)}) and "
            f"dims_are_dynamic ({len(dynamic)}) must have one entry per result dimension"
        )
    for k, size in enumerate(sizes):
        _size_scalar("DynamicReshape", size, f"dim_sizes[{k}]")
    if not operand.dynamic_sizes and not any(dynamic):
        if math.prod(bounds) != math.prod(shape.dimensions()):
            raise ValueError(
                f"DynamicReshape: static bounds {bounds} do not hold the {math.prod(shape.dimensions())} "
                f"elements of {shape}"
            )
        return ops.Reshape(operand, bounds)
    builder = operand.builder
    out_sizes = [
        size if is_dynamic else ops.ConstantLiteral(builder, np.int32(bound))
        for size, bound, is_dynamic in zip(sizes, bounds, dynamic)
    ]
    # for every result position: its row-major rank among the logical result elements ...
    index_shape = Shape("s32", bounds)
    positions = [ops.Iota(builder, index_shape, k) for k in range(len(bounds))]
    rank = _linear(positions, out_sizes)
    valid = None
    for position, size in zip(positions, out_sizes):
        inside = ops.Lt(position, size)
        valid = inside if valid is None else ops.And(valid, inside)
    # ... is the operand element of the same rank in the operand's logical shape
    in_sizes = _logical_sizes(builder, operand)
    flat_index = None
    remainder = rank
    strides = [math.prod(shape.dimensions()[d + 1 :]) for d in range(shape.rank())]
    for d in reversed(range(shape.rank())):
        coordinate = ops.Rem(remainder, in_sizes[d])
        remainder = ops.Div(remainder, in_sizes[d])
        term = ops.Mul(coordinate, ops.ConstantLiteral(builder, np.int32(strides[d])))
        flat_index = term if flat_index is None else ops.Add(flat_index, term)
    if flat_index is None:  # a scalar operand
        flat_index = ops.Broadcast(ops.ConstantLiteral(builder, np.int32(0)), bounds)
    flat = ops.Reshape(_static_view(operand), [math.prod(shape.dimensions())])
    gathered = ops.Gather(
        flat,
        ops.Reshape(flat_index, [*bounds, 1]),
        offset_dims=[],
        collapsed_slice_dims=[0],
        start_index_map=[0],
        index_vector_dim=len(bounds),
        slice_sizes=[1],
    )
    zero = ops.Broadcast(ops.ConstantLiteral(builder, _zero(shape.element_type())), bounds)
    result = ops.Select(valid, gathered, zero)
    result_sizes = {
        k: size for k, (size, is_dynamic) in enumerate(zip(sizes, dynamic)) if is_dynamic
    }
    return builder.add_op(
        "DynamicReshape", result.shape, [result], lambda em, v: v, dynamic_sizes=result_sizes
    )


def _zero(element_type: str):
    return np.zeros((), numpy_dtype(element_type))[()]

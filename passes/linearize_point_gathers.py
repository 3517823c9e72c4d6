"""xhlo-linearize-point-gathers: element gathers whose index vectors are concatenated
read the flattened operand at one linear index instead.

JAX's advanced indexing ``x[rows, cols]`` (and ``map_coordinates``, which does
it four times) builds the index vectors with a ``concatenate`` of the
per-dimension indices, then gathers single elements. Lowered as written, the
concatenation is a strided copy into an [N, rank] buffer (a serial loop per
column: 1M points in ~1 ms each) that the gather then reads back.

When a gather picks single elements (every operand dimension is indexed,
collapsed and sliced 1 wide) and its index vectors come from a
``concatenate`` along ``index_vector_dim``, this pass computes the linear
index ``sum_k clamp(index_k, 0, d_k - 1) * stride_k`` elementwise from the
concatenated pieces (the clamp is the gather's own, per dimension) and gathers
from the operand reshaped to one dimension. The index math fuses into the
gather's loop, and the concatenation is gone.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir, stablehlo_api
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, defining_op, walk_ops


def _numbers(op: ir.Operation):
    return stablehlo_api.GatherDimensionNumbers(op.attributes["dimension_numbers"])


def _is_point_gather(op: ir.Operation) -> bool:
    """Does ``op`` gather single elements, indexing every operand dimension in order?"""
    operand, indices = op.operands
    rank = len(sh.shape_of(operand))
    numbers = _numbers(op)
    return (
        list(op.attributes["slice_sizes"]) == [1] * rank
        and list(numbers.start_index_map) == list(range(rank))
        and sorted(numbers.collapsed_slice_dims) == list(range(rank))
        and not list(numbers.offset_dims)
        and not list(numbers.operand_batching_dims)
        and numbers.index_vector_dim < len(sh.shape_of(indices))
    )


def _columns(concat: ir.Operation, axis: int) -> list[ir.Value]:
    """The concatenation's index columns, each without the index vector dimension."""
    columns = []
    for piece in concat.operands:
        shape = list(sh.shape_of(piece))
        for k in range(shape[axis]):
            column = sh.slice_along(piece, axis, k, k + 1) if shape[axis] > 1 else piece
            columns.append(sh.reshape(column, shape[:axis] + shape[axis + 1 :]))
    return columns


def _linear_index(columns: list[ir.Value], dims: list[int]) -> ir.Value:
    """``sum_k clamp(column_k, 0, dims[k] - 1) * stride_k`` in i32 (i64 past 2^31 elements)."""
    wide = sh.i64() if math.prod(dims) >= 2**31 else sh.i32()
    total = None
    stride = math.prod(dims)
    for column, extent in zip(columns, dims):
        stride //= extent
        lo, hi = (sh.constant(v, column.type) for v in (0, extent - 1))
        clamped = sh.minimum(column, hi) if sh.is_unsigned(sh.element_type(column)) else sh.clamp(lo, column, hi)
        term = clamped if sh.element_type(clamped) == wide else sh.convert(clamped, wide)
        if stride != 1:
            term = sh.multiply(term, sh.constant(stride, term.type))
        total = term if total is None else sh.add(total, term)
    return total


def _linearize(op: ir.Operation, concat: ir.Operation) -> None:
    operand, _ = op.operands
    dims = list(sh.shape_of(operand))
    linear = _linear_index(_columns(concat, _numbers(op).index_vector_dim), dims)
    flat = sh.reshape(operand, [math.prod(dims)])
    numbers = stablehlo_api.GatherDimensionNumbers.get(
        offset_dims=[], collapsed_slice_dims=[0], operand_batching_dims=[], start_indices_batching_dims=[],
        start_index_map=[0], index_vector_dim=len(sh.shape_of(linear)),
    )
    gathered = sh.create(
        "stablehlo.gather", [flat, linear], [op.results[0].type],
        {"dimension_numbers": numbers, "slice_sizes": sh.dense_i64([1])},
    )
    op.results[0].replace_all_uses_with(gathered.results[0])
    op.erase()


@dataclasses.dataclass(frozen=True)
class LinearizePointGathers(ModulePass):
    """Element gathers of concatenated index vectors -> one linear index, no concatenation."""

    NAME = "xhlo-linearize-point-gathers"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.gather"):
            concat = defining_op(op.operands[1], "stablehlo.concatenate")
            if concat is None or not _is_point_gather(op):
                continue
            if ir.IntegerAttr(concat.attributes["dimension"]).value != _numbers(op).index_vector_dim:
                continue
            with ir.InsertionPoint(op), op.location:
                _linearize(op, concat)

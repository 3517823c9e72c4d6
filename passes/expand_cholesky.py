"""xhlo-expand-cholesky: stablehlo.cholesky as a column loop of StableHLO ops.

The upstream linalg lowering has no Cholesky pattern and xhlo calls no LAPACK,
so the factorization is built from ops that do lower: a left-looking
(Cholesky-Crout) ``stablehlo.while`` over the columns. Step ``j`` computes
column ``j`` of ``L`` from column ``j`` of ``A`` minus ``L @ conj(L[j, :])`` (the
columns of ``L`` not computed yet are still zero, so the full product only sums
over ``k < j``). Code size is independent of ``n``; work is O(n^3) per matrix.

Only the selected triangle of the input is read; the other triangle of the
result is zero (the spec leaves it implementation-defined). ``lower = false``
factors ``conj(A^T)`` and returns ``conj(L^T)``. Input that is not positive
definite yields NaNs (implementation-defined in the spec).
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops


def adjoint(x: ir.Value) -> ir.Value:
    """Conjugate transpose of the two minor dimensions."""
    rank = len(sh.shape_of(x))
    return sh.conj(sh.transpose(x, [*range(rank - 2), rank - 1, rank - 2]))


def _check(op: ir.Operation) -> ir.RankedTensorType:
    operand_type = op.operands[0].type
    if not isinstance(operand_type, ir.RankedTensorType) or not operand_type.has_static_shape:
        raise PassError(
            op, f"'stablehlo.cholesky' needs a statically shaped operand, got {operand_type}"
        )
    shape = operand_type.shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise PassError(
            op, f"'stablehlo.cholesky' needs square minor dimensions, got {operand_type}"
        )
    return operand_type


def lower_cholesky(a: ir.Value) -> ir.Value:
    """L with L @ L^H = A, reading only A's lower triangle; zeros above the diagonal."""
    shape = sh.shape_of(a)
    batch_rank, n = len(shape) - 2, shape[-1]
    batch = list(range(batch_rank))
    batch_shape = list(shape[:-2])
    column_shape = [*batch_shape, n, 1]
    zero_index = sh.index_scalar(0)

    def starts(row: ir.Value, col: ir.Value) -> list[ir.Value]:
        return [zero_index] * batch_rank + [row, col]

    def has_columns_left(j: ir.Value, factor: ir.Value) -> ir.Value:
        return sh.compare("LT", j, sh.index_scalar(n))

    def next_column(j: ir.Value, factor: ir.Value) -> list[ir.Value]:
        row_j = sh.dynamic_slice(factor, starts(j, zero_index), [*batch_shape, 1, n])
        # sum_k L[i, k] conj(L[j, k]): columns k >= j of L are still zero
        minor = batch_rank + 1
        projection = sh.dot_general(
            factor, sh.conj(row_j), batch=(batch, batch), contract=([minor], [minor])
        )
        residual = sh.subtract(sh.dynamic_slice(a, starts(zero_index, j), column_shape), projection)
        pivot = sh.dynamic_slice(residual, starts(j, zero_index), [*batch_shape, 1, 1])
        root = _as_element_type(sh.unary("sqrt", sh.real(pivot)), sh.element_type(a))
        root = sh.broadcast_in_dim(root, column_shape, list(range(batch_rank + 2)))
        rows = sh.iota(column_shape, batch_rank, sh.i32())
        j_column = sh.broadcast_in_dim(j, column_shape, [])
        below = sh.select(
            sh.compare("GT", rows, j_column),
            sh.binary("divide", residual, root),
            sh.constant(0, residual.type),
        )
        column = sh.select(sh.compare("EQ", rows, j_column), root, below)
        updated = sh.dynamic_update_slice(factor, column, starts(zero_index, j))
        return [sh.add(j, sh.index_scalar(1)), updated]

    zeros = sh.constant(0, a.type)
    return sh.while_loop([zero_index, zeros], has_columns_left, next_column)[1]


def _as_element_type(real_value: ir.Value, elem: ir.Type) -> ir.Value:
    """A real tensor as ``elem`` (imaginary part zero when ``elem`` is complex)."""
    if not isinstance(elem, ir.ComplexType):
        return real_value
    return sh.complex_from_parts(real_value, sh.constant(0, real_value.type))


def expand_cholesky(a: ir.Value, lower: bool) -> ir.Value:
    """The Cholesky factor of ``a`` in the selected triangle (f16/bf16 computed in f32)."""
    elem = sh.element_type(a)
    if sh.is_half_float(elem):
        return sh.convert(expand_cholesky(sh.convert(a, ir.F32Type.get()), lower), elem)
    if lower:
        return lower_cholesky(a)
    return adjoint(lower_cholesky(adjoint(a)))


@dataclasses.dataclass(frozen=True)
class ExpandCholesky(ModulePass):
    """Expand stablehlo.cholesky into a while loop over the columns."""

    NAME = "xhlo-expand-cholesky"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.cholesky"):
            operand_type = _check(op)
            lower = "lower" in op.attributes and ir.BoolAttr(op.attributes["lower"]).value
            if operand_type.shape[-1] == 0:
                result = op.operands[0]
            else:
                with ir.InsertionPoint(op), op.location:
                    result = expand_cholesky(op.operands[0], lower)
            op.results[0].replace_all_uses_with(result)
            op.erase()

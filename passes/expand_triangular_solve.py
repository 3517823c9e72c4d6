"""xhlo-expand-triangular-solve: stablehlo.triangular_solve as substitution loops.

The upstream linalg lowering has no triangular-solve pattern and xhlo calls no
BLAS, so the solve is built from ops that do lower. Every variant is first
reduced to ``M @ X = B`` with ``M`` triangular:

* ``x @ op(a) = b`` is ``op(a)^T @ x^T = b^T`` (right side -> left side, where
  ``ADJOINT^T`` is a plain conjugate);
* ``op(a)`` is materialized after masking ``a`` to its selected triangle (the
  other triangle is never read, the spec says it may hold anything) and, with
  ``unit_diagonal``, putting ones on the diagonal.

Then a ``stablehlo.while`` over the rows of ``X`` (forward substitution for a
lower ``M``, backward for an upper one) solves all right-hand sides at once:
``X[i] = (B[i] - M[i, :] @ X) / M[i, i]``, where rows not solved yet are zero.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops

NO_TRANSPOSE, TRANSPOSE, ADJOINT = "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"
CONJUGATE = "CONJUGATE"  # conj(a) without transposing: what ADJOINT becomes on the right side

# x @ op(a) = b  <=>  op(a)^T @ x^T = b^T: the mode of op(a)^T
RIGHT_TO_LEFT = {NO_TRANSPOSE: TRANSPOSE, TRANSPOSE: NO_TRANSPOSE, ADJOINT: CONJUGATE}


@dataclasses.dataclass(frozen=True)
class SolveOptions:
    left_side: bool
    lower: bool
    unit_diagonal: bool
    transpose_a: str


def swap_minor(x: ir.Value) -> ir.Value:
    """Transpose of the two minor dimensions."""
    rank = len(sh.shape_of(x))
    return sh.transpose(x, [*range(rank - 2), rank - 1, rank - 2])


def _bool_attr(op: ir.Operation, name: str) -> bool:
    return name in op.attributes and ir.BoolAttr(op.attributes[name]).value


def _options(op: ir.Operation) -> SolveOptions:
    mode = NO_TRANSPOSE
    if "transpose_a" in op.attributes:
        mode = str(op.attributes["transpose_a"]).rstrip(">").split()[-1]
    if mode not in (NO_TRANSPOSE, TRANSPOSE, ADJOINT):
        raise PassError(op, f"'stablehlo.triangular_solve': unsupported transpose_a {mode}")
    return SolveOptions(
        _bool_attr(op, "left_side"), _bool_attr(op, "lower"), _bool_attr(op, "unit_diagonal"), mode
    )


def _check_shapes(op: ir.Operation) -> None:
    for value in op.operands:
        if not isinstance(value.type, ir.RankedTensorType) or not value.type.has_static_shape:
            raise PassError(
                op, f"'stablehlo.triangular_solve' needs static shapes, got {value.type}"
            )
    a_shape = sh.shape_of(op.operands[0])
    if len(a_shape) < 2 or a_shape[-1] != a_shape[-2]:
        raise PassError(
            op, f"'stablehlo.triangular_solve' needs a square 'a', got {op.operands[0].type}"
        )


def select_triangle(a: ir.Value, lower: bool, unit_diagonal: bool) -> ir.Value:
    """``a`` with the unselected triangle zeroed (and ones on the diagonal if unit)."""
    shape = sh.shape_of(a)
    rows = sh.iota(shape, len(shape) - 2, sh.i32())
    cols = sh.iota(shape, len(shape) - 1, sh.i32())
    zero = sh.constant(0, a.type)
    masked = sh.select(sh.compare("LE" if lower else "GE", cols, rows), a, zero)
    if unit_diagonal:
        masked = sh.select(sh.compare("EQ", rows, cols), sh.constant(1, a.type), masked)
    return masked


def apply_mode(a: ir.Value, mode: str) -> ir.Value:
    if mode == TRANSPOSE:
        return swap_minor(a)
    if mode == ADJOINT:
        return sh.conj(swap_minor(a))
    if mode == CONJUGATE:
        return sh.conj(a)
    return a


def substitute(m: ir.Value, b: ir.Value, lower: bool, unit_diagonal: bool) -> ir.Value:
    """X with M @ X = B for triangular M [..., n, n] and B [..., n, k]."""
    b_shape = sh.shape_of(b)
    batch_rank, n, k = len(b_shape) - 2, b_shape[-2], b_shape[-1]
    batch = list(range(batch_rank))
    batch_shape = list(b_shape[:-2])
    row_shape = [*batch_shape, 1, k]
    zero_index = sh.index_scalar(0)

    def at(row: ir.Value, col: ir.Value) -> list[ir.Value]:
        return [zero_index] * batch_rank + [row, col]

    def has_rows_left(step: ir.Value, x: ir.Value) -> ir.Value:
        return sh.compare("LT", step, sh.index_scalar(n))

    def solve_row(step: ir.Value, x: ir.Value) -> list[ir.Value]:
        # forward substitution walks rows 0..n-1, backward substitution n-1..0
        row = step if lower else sh.subtract(sh.index_scalar(n - 1), step)
        m_row = sh.dynamic_slice(m, at(row, zero_index), [*batch_shape, 1, n])
        solved_part = sh.dot_general(
            m_row, x, batch=(batch, batch), contract=([batch_rank + 1], [batch_rank])
        )
        b_row = sh.dynamic_slice(b, at(row, zero_index), row_shape)
        value = sh.subtract(b_row, solved_part)
        if not unit_diagonal:
            diagonal = sh.dynamic_slice(m, at(row, row), [*batch_shape, 1, 1])
            diagonal = sh.broadcast_in_dim(diagonal, row_shape, list(range(batch_rank + 2)))
            value = sh.binary("divide", value, diagonal)
        updated = sh.dynamic_update_slice(x, value, at(row, zero_index))
        return [sh.add(step, sh.index_scalar(1)), updated]

    zeros = sh.constant(0, b.type)
    return sh.while_loop([zero_index, zeros], has_rows_left, solve_row)[1]


def triangular_solve(a: ir.Value, b: ir.Value, options: SolveOptions) -> ir.Value:
    """The solution of op(a) @ x = b (left side) or x @ op(a) = b (right side)."""
    elem = sh.element_type(a)
    if sh.is_half_float(elem):
        f32 = ir.F32Type.get()
        return sh.convert(triangular_solve(sh.convert(a, f32), sh.convert(b, f32), options), elem)
    mode = options.transpose_a if options.left_side else RIGHT_TO_LEFT[options.transpose_a]
    rhs = b if options.left_side else swap_minor(b)
    m = apply_mode(select_triangle(a, options.lower, options.unit_diagonal), mode)
    m_is_lower = options.lower != (mode in (TRANSPOSE, ADJOINT))
    x = substitute(m, rhs, m_is_lower, options.unit_diagonal)
    return x if options.left_side else swap_minor(x)


@dataclasses.dataclass(frozen=True)
class ExpandTriangularSolve(ModulePass):
    """Expand stablehlo.triangular_solve into a substitution while loop."""

    NAME = "xhlo-expand-triangular-solve"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.triangular_solve"):
            _check_shapes(op)
            options = _options(op)
            a, b = op.operands
            if 0 in sh.shape_of(b):
                result = b
            else:
                with ir.InsertionPoint(op), op.location:
                    result = triangular_solve(a, b, options)
            op.results[0].replace_all_uses_with(result)
            op.erase()

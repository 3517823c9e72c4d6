"""xhlo-legalize-lapack-custom-calls: JAX's LAPACK custom calls as StableHLO loops.

``jnp.linalg`` on the CPU lowers to ``stablehlo.custom_call @lapack_<t><routine>_ffi``
(``t`` in s/d/c/z), which XLA links to LAPACK. xhlo calls no LAPACK, so each
call is replaced by StableHLO ops that compute what the routine returns, with
LAPACK's output conventions (so the code JAX wraps around the call keeps working):

* ``potrf`` (Cholesky) -> ``stablehlo.cholesky`` + ``info``; the other triangle keeps
  the input, as in LAPACK;
* ``trsm`` (triangular solve) -> ``stablehlo.triangular_solve``;
* ``getrf`` (LU) -> a column loop with partial pivoting (largest magnitude, first
  on ties, ``|re| + |im|`` for complex as ``i?amax``); 1-based ``ipiv``;
  ``info = j`` for the first exactly-zero pivot ``U[j-1, j-1]``;
* ``geqrf`` (QR) -> a Householder column loop (``?larfg`` reflectors: ``R`` on and
  above the diagonal, the reflector tails below, ``tau``); ``orgqr``/``ungqr``
  multiplies the reflectors out into ``Q``;
* ``syevd``/``heevd`` (eigh) -> cyclic Jacobi rotations until the off-diagonal
  norm is below ``eps * ||A||_F``; eigenvalues ascending;
* ``gesdd`` (SVD) -> Householder QR, then one-sided (Hestenes) Jacobi on ``R``
  until its columns are orthogonal to ``eps * sqrt(n)``; singular values
  descending. A wide matrix is decomposed through its adjoint;
* ``geev`` (nonsymmetric eig) -> complex Schur form by shifted QR steps
  (Wilkinson shifts, deflation per matrix), eigenvectors by substitution on the
  triangular factor, normalized as LAPACK's (unit norm, largest entry real);
  complex ``gees`` (Schur) returns that Schur form (the real quasi-triangular
  form of real ``gees`` is not produced: an error);
* ``gtsv`` (tridiagonal solve) -> LAPACK's elimination with row swaps, then back
  substitution.

An empty operand returns at once, as LAPACK does: ``info`` 0, results zero.

Batch dimensions lead (``num_batch_dims``); loop indices are shared by the
batch, per-matrix choices (pivot rows, rotations) are made with masks, never
with per-matrix dynamic indices. Every loop has a static trip count or a
sweep limit, so the code size does not depend on the matrix size.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Sequence

import numpy as np
from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops

TARGET = re.compile(
    r"^lapack_([sdcz])(potrf|trsm|getrf|geqrf|orgqr|ungqr|syevd|heevd|gesdd|geev|gees|gtsv)_ffi$"
)

# LAPACK's character arguments, as JAX stores them in mhlo.backend_config (ui8 codes)
LOWER, UPPER = ord("L"), ord("U")
LEFT = ord("L")
NO_TRANS, TRANS, CONJ_TRANS = ord("N"), ord("T"), ord("C")
UNIT = ord("U")
VECTORS = ord("V")
SVD_ALL, SVD_SOME, SVD_NONE = ord("A"), ord("S"), ord("N")

MAX_JACOBI_SWEEPS = 30  # cyclic Jacobi converges quadratically: ~6-10 sweeps in practice


# -- small builders ----------------------------------------------------------------------


def _rank(x: ir.Value) -> int:
    return len(sh.shape_of(x))


def _batch(x: ir.Value) -> list[int]:
    """Leading (batch) dimensions of a matrix stack ``[..., m, n]``."""
    return list(sh.shape_of(x)[:-2])


def _is_complex(elem: ir.Type) -> bool:
    return isinstance(elem, ir.ComplexType)


def _real_elem(elem: ir.Type) -> ir.Type:
    return ir.ComplexType(elem).element_type if _is_complex(elem) else elem


def _eps(elem: ir.Type) -> float:
    return float(
        np.finfo(np.float64 if isinstance(_real_elem(elem), ir.F64Type) else np.float32).eps
    )


def _expand(x: ir.Value, shape: Sequence[int]) -> ir.Value:
    """Broadcast ``x`` (same rank, size-1 dims) to ``shape``."""
    if tuple(shape) == sh.shape_of(x):
        return x
    return sh.broadcast_in_dim(x, shape, list(range(len(shape))))


def _like(real_value: ir.Value, elem: ir.Type) -> ir.Value:
    """A real tensor as ``elem`` (zero imaginary part when ``elem`` is complex)."""
    if not _is_complex(elem):
        return real_value
    return sh.complex_from_parts(real_value, sh.constant(0, real_value.type))


def _abs(x: ir.Value) -> ir.Value:
    """|x| as a real tensor."""
    result_type = sh.tensor_type(sh.shape_of(x), _real_elem(sh.element_type(x)))
    return sh.create("stablehlo.abs", [x], [result_type]).result


def _abs_squared(x: ir.Value) -> ir.Value:
    return sh.real(sh.multiply(x, sh.conj(x)))


def _divide(a: ir.Value, b: ir.Value) -> ir.Value:
    return sh.binary("divide", a, b)


def _sqrt(x: ir.Value) -> ir.Value:
    return sh.unary("sqrt", x)


def _iota(x_shape: Sequence[int], dimension: int) -> ir.Value:
    return sh.iota(x_shape, dimension, sh.i32())


def _scalar_like(index: ir.Value, shape: Sequence[int]) -> ir.Value:
    """A 0-d i32 broadcast to ``shape``."""
    return sh.broadcast_in_dim(index, shape, [])


def _keep_dims_sum(x: ir.Value, dimension: int) -> ir.Value:
    """Sum over ``dimension``, keeping it as size 1."""
    shape = list(sh.shape_of(x))
    total = sh.reduce_sum(x, [dimension])
    shape[dimension] = 1
    return sh.reshape(total, shape)


def _keep_dims_reduce(x: ir.Value, dimension: int, combine: str, init: float) -> ir.Value:
    shape = list(sh.shape_of(x))
    start = sh.constant(init, sh.element_type(x))
    total = sh.reduce([x], [start], [dimension], lambda a, b: [sh.binary(combine, a, b)])[0]
    shape[dimension] = 1
    return sh.reshape(total, shape)


def _outer(column: ir.Value, row: ir.Value) -> ir.Value:
    """``[..., m, 1] x [..., 1, n] -> [..., m, n]`` (a contraction over the size-1 dims)."""
    rank = _rank(column)
    batch = list(range(rank - 2))
    return sh.dot_general(column, row, batch=(batch, batch), contract=([rank - 1], [rank - 2]))


def _adjoint_times(column: ir.Value, matrix: ir.Value) -> ir.Value:
    """``column^H @ matrix``: ``[..., m, 1], [..., m, n] -> [..., 1, n]``."""
    rank = _rank(column)
    batch = list(range(rank - 2))
    return sh.dot_general(
        sh.conj(column), matrix, batch=(batch, batch), contract=([rank - 2], [rank - 2])
    )


def _matmul(a: ir.Value, b: ir.Value) -> ir.Value:
    rank = _rank(a)
    batch = list(range(rank - 2))
    return sh.dot_general(a, b, batch=(batch, batch), contract=([rank - 1], [rank - 2]))


def _adjoint(x: ir.Value) -> ir.Value:
    rank = _rank(x)
    return sh.conj(sh.transpose(x, [*range(rank - 2), rank - 1, rank - 2]))


def _identity(shape: Sequence[int], elem: ir.Type) -> ir.Value:
    rank = len(shape)
    eq = sh.compare("EQ", _iota(shape, rank - 2), _iota(shape, rank - 1))
    return sh.select(
        eq, sh.constant(1, sh.tensor_type(shape, elem)), sh.constant(0, sh.tensor_type(shape, elem))
    )


def _starts(batch_rank: int, row: ir.Value, col: ir.Value) -> list[ir.Value]:
    zero = sh.index_scalar(0)
    return [zero] * batch_rank + [row, col]


def _column(x: ir.Value, j: ir.Value) -> ir.Value:
    *batch, m, _ = sh.shape_of(x)
    return sh.dynamic_slice(x, _starts(len(batch), sh.index_scalar(0), j), [*batch, m, 1])


def _row(x: ir.Value, i: ir.Value) -> ir.Value:
    *batch, _, n = sh.shape_of(x)
    return sh.dynamic_slice(x, _starts(len(batch), i, sh.index_scalar(0)), [*batch, 1, n])


def _entry(x: ir.Value, i: ir.Value, j: ir.Value) -> ir.Value:
    batch = _batch(x)
    return sh.dynamic_slice(x, _starts(len(batch), i, j), [*batch, 1, 1])


def _set_column(x: ir.Value, column: ir.Value, j: ir.Value) -> ir.Value:
    return sh.dynamic_update_slice(x, column, _starts(len(_batch(x)), sh.index_scalar(0), j))


def _set_row(x: ir.Value, row: ir.Value, i: ir.Value) -> ir.Value:
    return sh.dynamic_update_slice(x, row, _starts(len(_batch(x)), i, sh.index_scalar(0)))


def _set_entry(x: ir.Value, value: ir.Value, i: ir.Value, j: ir.Value) -> ir.Value:
    return sh.dynamic_update_slice(x, value, _starts(len(_batch(x)), i, j))


def _set_vector_entry(vector: ir.Value, value: ir.Value, k: ir.Value) -> ir.Value:
    """``vector[..., k] = value`` for ``value`` of shape ``[..., 1, 1]``."""
    batch = list(sh.shape_of(vector)[:-1])
    zero = sh.index_scalar(0)
    return sh.dynamic_update_slice(
        vector, sh.reshape(value, [*batch, 1]), [zero] * len(batch) + [k]
    )


def _vector_entry(vector: ir.Value, k: ir.Value) -> ir.Value:
    """``vector[..., k]`` as shape ``[..., 1, 1]``."""
    batch = list(sh.shape_of(vector)[:-1])
    zero = sh.index_scalar(0)
    entry = sh.dynamic_slice(vector, [zero] * len(batch) + [k], [*batch, 1])
    return sh.reshape(entry, [*batch, 1, 1])


def _increment(i: ir.Value) -> ir.Value:
    return sh.add(i, sh.index_scalar(1))


def _counted_loop(
    count: int, init: Sequence[ir.Value], body: Callable[..., Sequence[ir.Value]]
) -> list[ir.Value]:
    """``for k in range(count)``: ``body(k, *state) -> state``."""
    results = sh.while_loop(
        [sh.index_scalar(0), *init],
        lambda k, *state: sh.compare("LT", k, sh.index_scalar(count)),
        lambda k, *state: [_increment(k), *body(k, *state)],
    )
    return results[1:]


def _diagonal(x: ir.Value) -> ir.Value:
    """The diagonal of ``[..., n, n]`` as ``[..., n]``."""
    shape = sh.shape_of(x)
    rank = len(shape)
    on_diagonal = sh.compare("EQ", _iota(shape, rank - 2), _iota(shape, rank - 1))
    return sh.reduce_sum(sh.select(on_diagonal, x, sh.constant(0, x.type)), [rank - 1])


def _finite_info(values: ir.Value, info_type: ir.Type) -> ir.Value:
    """0 where every value of a ``[..., k]`` stack is finite, else 1 (shape ``[...]``)."""
    rank = _rank(values)
    finite = sh.create(
        "stablehlo.is_finite", [values], [sh.tensor_type(sh.shape_of(values), sh.i1())]
    ).result
    flags = sh.select(
        finite,
        sh.constant(0, sh.tensor_type(sh.shape_of(values), sh.i32())),
        sh.constant(1, sh.tensor_type(sh.shape_of(values), sh.i32())),
    )
    return sh.convert(_keep_max(flags, rank - 1), ir.RankedTensorType(info_type).element_type)


def _keep_max(x: ir.Value, dimension: int) -> ir.Value:
    start = sh.constant(0, sh.element_type(x))
    return sh.reduce([x], [start], [dimension], lambda a, b: [sh.maximum(a, b)])[0]


# -- sorting with a permutation -----------------------------------------------------------


def _sort_permutation(keys: ir.Value, direction: str) -> tuple[ir.Value, ir.Value]:
    """(sorted keys, permutation) along the last dim of a real ``[..., n]`` stack; stable."""
    shape = sh.shape_of(keys)
    rank = len(shape)
    indices = _iota(shape, rank - 1)
    op = sh.create(
        "stablehlo.sort",
        [keys, indices],
        [keys.type, indices.type],
        {
            "dimension": ir.IntegerAttr.get(sh.i64(), rank - 1),
            "is_stable": ir.BoolAttr.get(True),
        },
        regions=1,
    )
    scalar = [sh.tensor_type([], sh.element_type(keys)), sh.tensor_type([], sh.i32())]
    sh.build_region(
        op.regions[0],
        [scalar[0], scalar[0], scalar[1], scalar[1]],
        lambda a, b, ia, ib: [sh.compare(direction, a, b, "TOTALORDER")],
    )
    return op.results[0], op.results[1]


def _permute_columns(x: ir.Value, permutation: ir.Value) -> ir.Value:
    """``x[..., :, permutation]`` as a product with a one-hot matrix (exact for finite x)."""
    *batch, _, n = sh.shape_of(x)
    rank = len(batch) + 2
    onehot_shape = [*batch, n, n]
    chosen = sh.broadcast_in_dim(permutation, onehot_shape, [*range(len(batch)), rank - 1])
    onehot = sh.compare("EQ", chosen, _iota(onehot_shape, rank - 2))
    elem_type = sh.tensor_type(onehot_shape, sh.element_type(x))
    matrix = sh.select(onehot, sh.constant(1, elem_type), sh.constant(0, elem_type))
    return _matmul(x, matrix)


# -- Jacobi rotations ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Rotation:
    """The unitary ``J = [[c, s], [-s conj(e), c conj(e)]]`` on the (p, q) plane.

    ``J^H [[a, g e], [g conj(e), b]] J`` is diagonal (``g = |a_pq| >= 0``);
    ``c, s`` are real, ``e`` is the unit phase of ``a_pq`` (its sign if real).
    ``t = s / c`` gives the new diagonal: ``a - t g`` and ``b + t g``.
    """

    c: ir.Value
    s: ir.Value
    e: ir.Value  # element type
    t: ir.Value
    g: ir.Value


def _rotation(a_pp: ir.Value, a_qq: ir.Value, a_pq: ir.Value, skip: ir.Value) -> Rotation:
    """The rotation annihilating ``a_pq``; the identity where ``skip`` (or ``a_pq == 0``)."""
    elem = sh.element_type(a_pq)
    g = _abs(a_pq)
    real_type = g.type
    zero, one = sh.constant(0, real_type), sh.constant(1, real_type)
    skip = sh.or_(skip, sh.compare("EQ", g, zero))
    safe_g = sh.select(skip, one, g)
    e = _divide(a_pq, _like(safe_g, elem))
    theta = _divide(
        sh.subtract(sh.real(a_qq), sh.real(a_pp)), sh.multiply(sh.constant(2, real_type), safe_g)
    )
    sign = sh.select(sh.compare("GE", theta, zero), one, sh.unary("negate", one))
    root = _sqrt(sh.add(one, sh.multiply(theta, theta)))
    t = _divide(sign, sh.add(_abs(theta), root))
    t = sh.select(skip, zero, t)
    c = _divide(one, _sqrt(sh.add(one, sh.multiply(t, t))))
    s = sh.multiply(t, c)
    e = sh.select(skip, sh.constant(1, e.type), e)
    return Rotation(c, s, e, t, sh.select(skip, zero, g))


def _rotate_columns(x: ir.Value, rot: Rotation, p: ir.Value, q: ir.Value) -> ir.Value:
    """``x @ J`` on columns p and q."""
    elem = sh.element_type(x)
    col_p, col_q = _column(x, p), _column(x, q)
    shape = sh.shape_of(col_p)
    c = _expand(_like(rot.c, elem), shape)
    s = _expand(_like(rot.s, elem), shape)
    e_bar = _expand(sh.conj(rot.e), shape)
    q_term = sh.multiply(e_bar, col_q)
    new_p = sh.subtract(sh.multiply(c, col_p), sh.multiply(s, q_term))
    new_q = sh.add(sh.multiply(s, col_p), sh.multiply(c, q_term))
    return _set_column(_set_column(x, new_p, p), new_q, q)


def _rotate_rows(x: ir.Value, rot: Rotation, p: ir.Value, q: ir.Value) -> ir.Value:
    """``J^H @ x`` on rows p and q."""
    elem = sh.element_type(x)
    row_p, row_q = _row(x, p), _row(x, q)
    shape = sh.shape_of(row_p)
    c = _expand(_like(rot.c, elem), shape)
    s = _expand(_like(rot.s, elem), shape)
    e = _expand(rot.e, shape)
    q_term = sh.multiply(e, row_q)
    new_p = sh.subtract(sh.multiply(c, row_p), sh.multiply(s, q_term))
    new_q = sh.add(sh.multiply(s, row_p), sh.multiply(c, q_term))
    return _set_row(_set_row(x, new_p, p), new_q, q)


def _pair_sweep(
    n: int, init: Sequence[ir.Value], rotate: Callable[..., Sequence[ir.Value]]
) -> list[ir.Value]:
    """``for p < q < n: state = rotate(p, q, *state)`` (row-cyclic order)."""

    def has_pairs(p, q, *state):
        return sh.compare("LT", p, sh.index_scalar(n - 1))

    def step(p, q, *state):
        state = rotate(p, q, *state)
        next_q = _increment(q)
        wrap = sh.compare("EQ", next_q, sh.index_scalar(n))
        next_p = sh.select(wrap, _increment(p), p)
        next_q = sh.select(wrap, sh.add(p, sh.index_scalar(2)), next_q)
        return [next_p, next_q, *state]

    results = sh.while_loop([sh.index_scalar(0), sh.index_scalar(1), *init], has_pairs, step)
    return results[2:]


def _sweeps(
    init: Sequence[ir.Value],
    unconverged: Callable[..., ir.Value],
    sweep: Callable[..., Sequence[ir.Value]],
) -> list[ir.Value]:
    """Repeat ``sweep`` while any matrix is ``unconverged``, at most MAX_JACOBI_SWEEPS times."""

    def keep_going(count, *state):
        more = sh.compare("LT", count, sh.index_scalar(MAX_JACOBI_SWEEPS))
        return sh.and_(more, unconverged(*state))

    results = sh.while_loop(
        [sh.index_scalar(0), *init],
        keep_going,
        lambda count, *state: [_increment(count), *sweep(*state)],
    )
    return results[1:]


def _any(flags: ir.Value) -> ir.Value:
    """A 0-d i1: whether any element of ``flags`` is true."""
    dims = list(range(_rank(flags)))
    if not dims:
        return flags
    false = sh.constant(False, sh.i1())
    return sh.reduce([flags], [false], dims, lambda a, b: [sh.or_(a, b)])[0]


# -- potrf, trsm ---------------------------------------------------------------------------


def potrf(a: ir.Value, lower: bool, info_type: ir.Type) -> list[ir.Value]:
    """(factor, info): the selected triangle holds the factor, the other keeps ``a``."""
    shape = sh.shape_of(a)
    rank = len(shape)
    factor = sh.create(
        "stablehlo.cholesky", [a], [a.type], {"lower": ir.BoolAttr.get(lower)}
    ).result
    rows, cols = _iota(shape, rank - 2), _iota(shape, rank - 1)
    in_triangle = sh.compare("GE" if lower else "LE", rows, cols)
    factor = sh.select(in_triangle, factor, a)
    # info = j (1-based) for the first non-positive or NaN pivot, 0 if all are positive
    diagonal = sh.real(_diagonal(factor))
    good = sh.compare("GT", diagonal, sh.constant(0, diagonal.type))
    n = shape[-1]
    positions = _iota(sh.shape_of(diagonal), rank - 2)
    bad_positions = sh.select(good, sh.constant(n, positions.type), positions)
    first_bad = sh.reduce(
        [bad_positions], [sh.index_scalar(n)], [rank - 2], lambda x, y: [sh.minimum(x, y)]
    )[0]
    info = sh.select(
        sh.compare("EQ", first_bad, sh.constant(n, first_bad.type)),
        sh.constant(0, first_bad.type),
        sh.add(first_bad, sh.constant(1, first_bad.type)),
    )
    return [factor, _convert_to(info, info_type)]


def trsm(a: ir.Value, b: ir.Value, config: dict[str, int]) -> ir.Value:
    mode = {NO_TRANS: "NO_TRANSPOSE", TRANS: "TRANSPOSE", CONJ_TRANS: "ADJOINT"}[
        config.get("trans_x", NO_TRANS)
    ]
    attributes = {
        "left_side": ir.BoolAttr.get(config.get("side", LEFT) == LEFT),
        "lower": ir.BoolAttr.get(config.get("uplo", LOWER) == LOWER),
        "unit_diagonal": ir.BoolAttr.get(config.get("diag", NO_TRANS) == UNIT),
        "transpose_a": ir.Attribute.parse(f"#stablehlo<transpose {mode}>"),
    }
    return sh.create("stablehlo.triangular_solve", [a, b], [b.type], attributes).result


# -- getrf ---------------------------------------------------------------------------------


def _pivot_magnitude(x: ir.Value) -> ir.Value:
    """``|x|`` for real, ``|re| + |im|`` for complex (LAPACK's i?amax measure)."""
    if not _is_complex(sh.element_type(x)):
        return _abs(x)
    return sh.add(_abs(sh.real(x)), _abs(sh.imag(x)))


def getrf(a: ir.Value, ipiv_type: ir.Type, info_type: ir.Type) -> list[ir.Value]:
    """(LU, 1-based ipiv, info) with partial pivoting, as ``?getrf``."""
    shape = sh.shape_of(a)
    *batch, m, n = shape
    rank = len(shape)
    steps = min(m, n)
    column_shape, scalar_shape = [*batch, m, 1], [*batch, 1, 1]
    rows_full, cols_full = _iota(shape, rank - 2), _iota(shape, rank - 1)
    rows = _iota(column_shape, rank - 2)
    zeros = sh.constant(0, a.type)

    def eliminate(k, lu, ipiv, info):
        k_rows = _scalar_like(k, column_shape)
        # pivot row p: the first row >= k of largest magnitude in column k
        magnitude = _pivot_magnitude(_column(lu, k))
        candidates = sh.select(
            sh.compare("GE", rows, k_rows), magnitude, sh.constant(-1, magnitude.type)
        )
        largest = _expand(_keep_dims_reduce(candidates, rank - 2, "maximum", -1), column_shape)
        is_largest = sh.and_(sh.compare("EQ", candidates, largest), sh.compare("GE", rows, k_rows))
        positions = sh.select(is_largest, rows, sh.constant(m, rows.type))
        p = sh.reduce(
            [positions], [sh.index_scalar(m)], [rank - 2], lambda x, y: [sh.minimum(x, y)]
        )[0]
        p = sh.reshape(p, scalar_shape)
        p = sh.select(
            sh.compare("EQ", p, sh.constant(m, p.type)), _scalar_like(k, scalar_shape), p
        )  # NaN column
        # swap rows k and p (selects: exact)
        is_p = sh.compare("EQ", rows_full, _expand(p, shape))
        is_k = sh.compare("EQ", rows_full, _scalar_like(k, shape))
        row_p = _keep_dims_sum(sh.select(is_p, lu, zeros), rank - 2)
        row_k = _row(lu, k)
        lu = sh.select(is_k, _expand(row_p, shape), sh.select(is_p, _expand(row_k, shape), lu))
        # scale the column below the pivot, update the trailing submatrix
        pivot = _entry(lu, k, k)
        nonzero = sh.compare("NE", pivot, sh.constant(0, pivot.type))
        column = _column(lu, k)
        below = sh.and_(sh.compare("GT", rows, k_rows), _expand(nonzero, column_shape))
        multipliers = sh.select(
            below, _divide(column, _expand(pivot, column_shape)), sh.constant(0, column.type)
        )
        trailing_row = sh.select(
            sh.compare("GT", _iota([*batch, 1, n], rank - 1), _scalar_like(k, [*batch, 1, n])),
            row_p,
            sh.constant(0, row_p.type),
        )
        trailing = sh.and_(
            sh.compare("GT", rows_full, _scalar_like(k, shape)),
            sh.compare("GT", cols_full, _scalar_like(k, shape)),
        )
        lu = sh.select(trailing, sh.subtract(lu, _outer(multipliers, trailing_row)), lu)
        lu = _set_column(lu, sh.select(below, multipliers, column), k)
        ipiv = _set_vector_entry(ipiv, sh.add(p, sh.constant(1, p.type)), k)
        first_zero = sh.and_(
            sh.compare("EQ", info, sh.constant(0, info.type)),
            sh.reshape(sh.unary("not", nonzero), batch),
        )
        info = sh.select(first_zero, _scalar_like(_increment(k), batch), info)
        return [lu, ipiv, info]

    ipiv = sh.constant(0, sh.tensor_type([*batch, steps], sh.i32()))
    info = sh.constant(0, sh.tensor_type(batch, sh.i32()))
    lu, ipiv, info = _counted_loop(steps, [a, ipiv, info], eliminate)
    return [lu, _convert_to(ipiv, ipiv_type), _convert_to(info, info_type)]


def _convert_to(x: ir.Value, t: ir.Type) -> ir.Value:
    elem = ir.RankedTensorType(t).element_type
    return x if sh.element_type(x) == elem else sh.convert(x, elem)


# -- geqrf, orgqr --------------------------------------------------------------------------


def _householder(
    column: ir.Value, alpha: ir.Value, below: ir.Value
) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(v tail, beta, tau) of ``?larfg`` for ``[alpha; x]``, ``x`` = column where ``below``.

    ``H^H [alpha; x] = [beta; 0]`` with ``H = I - tau v v^H``, ``v = [1; tail]``,
    ``beta`` real; ``tau = 0`` (``H = I``) when ``x = 0`` and ``alpha`` is real.
    """
    elem = sh.element_type(column)
    column_shape = sh.shape_of(column)
    rank = len(column_shape)
    x = sh.select(below, column, sh.constant(0, column.type))
    x_norm2 = _keep_dims_sum(_abs_squared(x), rank - 2)
    alpha_re = sh.real(alpha)
    alpha_im = sh.imag(alpha) if _is_complex(elem) else sh.constant(0, alpha_re.type)
    real_type = alpha_re.type
    zero = sh.constant(0, real_type)
    norm = _sqrt(
        sh.add(sh.add(sh.multiply(alpha_re, alpha_re), sh.multiply(alpha_im, alpha_im)), x_norm2)
    )
    beta = sh.select(sh.compare("GE", alpha_re, zero), sh.unary("negate", norm), norm)
    trivial = sh.and_(sh.compare("EQ", x_norm2, zero), sh.compare("EQ", alpha_im, zero))
    safe_beta = sh.select(trivial, sh.constant(1, real_type), beta)
    tau_re = _divide(sh.subtract(safe_beta, alpha_re), safe_beta)
    if _is_complex(elem):
        tau = sh.complex_from_parts(tau_re, _divide(sh.unary("negate", alpha_im), safe_beta))
    else:
        tau = tau_re
    tau = sh.select(trivial, sh.constant(0, tau.type), tau)
    denominator = sh.subtract(alpha, _like(safe_beta, elem))
    denominator = sh.select(trivial, sh.constant(1, denominator.type), denominator)
    tail = _divide(x, _expand(denominator, column_shape))
    beta = sh.select(trivial, alpha_re, beta)
    return tail, beta, tau


def _reflector(a: ir.Value, k: ir.Value, tail_column: ir.Value) -> ir.Value:
    """``v = [0 (rows < k); 1; tail (rows > k)]`` from column ``tail_column`` of ``a``."""
    column_shape = sh.shape_of(tail_column)
    rank = len(column_shape)
    rows = _iota(column_shape, rank - 2)
    k_rows = _scalar_like(k, column_shape)
    zeros, ones = sh.constant(0, tail_column.type), sh.constant(1, tail_column.type)
    return sh.select(
        sh.compare("GT", rows, k_rows),
        tail_column,
        sh.select(sh.compare("EQ", rows, k_rows), ones, zeros),
    )


def geqrf(a: ir.Value) -> list[ir.Value]:
    """(R with reflector tails below the diagonal, tau), as ``?geqrf``."""
    shape = sh.shape_of(a)
    *batch, m, n = shape
    rank = len(shape)
    elem = sh.element_type(a)
    column_shape = [*batch, m, 1]
    rows = _iota(column_shape, rank - 2)
    cols_full = _iota(shape, rank - 1)

    def reflect(k, qr, taus):
        k_rows = _scalar_like(k, column_shape)
        column = _column(qr, k)
        below = sh.compare("GT", rows, k_rows)
        tail, beta, tau = _householder(column, _entry(qr, k, k), below)
        v = _reflector(qr, k, tail)
        # H^H applied to the columns right of k: A -= conj(tau) v (v^H A)
        update = sh.multiply(_expand(sh.conj(tau), shape), _outer(v, _adjoint_times(v, qr)))
        right = sh.compare("GT", cols_full, _scalar_like(k, shape))
        qr = sh.select(right, sh.subtract(qr, update), qr)
        new_column = sh.select(
            below,
            tail,
            sh.select(
                sh.compare("EQ", rows, k_rows), _expand(_like(beta, elem), column_shape), column
            ),
        )
        qr = _set_column(qr, new_column, k)
        return [qr, _set_vector_entry(taus, tau, k)]

    steps = min(m, n)
    taus = sh.constant(0, sh.tensor_type([*batch, steps], elem))
    return _counted_loop(steps, [a, taus], reflect)


def orgqr(a: ir.Value, taus: ir.Value) -> ir.Value:
    """``Q = H_0 ... H_{k-1}`` (first n columns) from ``?geqrf``'s reflectors, as ``?orgqr``."""
    shape = sh.shape_of(a)
    k = sh.shape_of(taus)[-1]

    def apply(step, q):
        i = sh.subtract(sh.index_scalar(k - 1), step)
        v = _reflector(a, i, _column(a, i))
        tau = _vector_entry(taus, i)
        return [sh.subtract(q, sh.multiply(_expand(tau, shape), _outer(v, _adjoint_times(v, q))))]

    return _counted_loop(k, [_identity(shape, sh.element_type(a))], apply)[0]


# -- syevd / heevd ------------------------------------------------------------------------


def _hermitian_from_triangle(a: ir.Value, lower: bool) -> ir.Value:
    """The Hermitian matrix whose ``lower``/upper triangle is ``a``'s (diagonal made real)."""
    shape = sh.shape_of(a)
    rank = len(shape)
    rows, cols = _iota(shape, rank - 2), _iota(shape, rank - 1)
    mirrored = _adjoint(a)
    strictly = sh.compare("GT" if lower else "LT", rows, cols)
    diagonal = sh.compare("EQ", rows, cols)
    real_diagonal = _like(sh.real(a), sh.element_type(a))
    return sh.select(strictly, a, sh.select(diagonal, real_diagonal, mirrored))


def _off_diagonal_large(a: ir.Value) -> ir.Value:
    """Whether any matrix has ``||offdiag(A)||_F > eps ||A||_F``."""
    shape = sh.shape_of(a)
    rank = len(shape)
    squares = _abs_squared(a)
    off = sh.select(
        sh.compare("NE", _iota(shape, rank - 2), _iota(shape, rank - 1)),
        squares,
        sh.constant(0, squares.type),
    )
    dims = [rank - 2, rank - 1]
    off_total, total = sh.reduce_sum(off, dims), sh.reduce_sum(squares, dims)
    eps = _eps(sh.element_type(a))
    threshold = sh.multiply(total, sh.constant(eps * eps, total.type))
    return _any(sh.compare("GT", off_total, threshold))


def jacobi_eigh(a: ir.Value, want_vectors: bool) -> tuple[ir.Value, ir.Value]:
    """(eigenvalues ascending ``[..., n]`` real, eigenvectors) of a Hermitian stack."""
    shape = sh.shape_of(a)
    n = shape[-1]
    elem = sh.element_type(a)

    def rotate(p, q, matrix, vectors):
        a_pp, a_qq, a_pq = _entry(matrix, p, p), _entry(matrix, q, q), _entry(matrix, p, q)
        rot = _rotation(
            a_pp, a_qq, a_pq, sh.constant(False, sh.tensor_type(sh.shape_of(a_pp), sh.i1()))
        )
        matrix = _rotate_rows(_rotate_columns(matrix, rot, p, q), rot, p, q)
        # the rotated 2x2 block, exactly diagonal
        shift = sh.multiply(rot.t, rot.g)
        matrix = _set_entry(matrix, _like(sh.subtract(sh.real(a_pp), shift), elem), p, p)
        matrix = _set_entry(matrix, _like(sh.add(sh.real(a_qq), shift), elem), q, q)
        zero = sh.constant(0, a_pq.type)
        matrix = _set_entry(_set_entry(matrix, zero, p, q), zero, q, p)
        if want_vectors:
            vectors = _rotate_columns(vectors, rot, p, q)
        return [matrix, vectors]

    def sweep(matrix, vectors):
        return _pair_sweep(n, [matrix, vectors], rotate)

    identity = _identity(shape, elem)
    if n > 1:
        matrix, vectors = _sweeps([a, identity], lambda m, v: _off_diagonal_large(m), sweep)
    else:
        matrix, vectors = a, identity
    values, permutation = _sort_permutation(sh.real(_diagonal(matrix)), "LT")
    return values, _permute_columns(vectors, permutation)


def syevd(a: ir.Value, config: dict[str, int], info_type: ir.Type) -> list[ir.Value]:
    """(eigenvectors, eigenvalues, info), as ``?syevd``/``?heevd``."""
    hermitian = _hermitian_from_triangle(a, config.get("uplo", LOWER) == LOWER)
    want_vectors = config.get("mode", VECTORS) == VECTORS
    values, vectors = jacobi_eigh(hermitian, want_vectors)
    return [vectors, values, _finite_info(values, info_type)]


# -- gesdd ---------------------------------------------------------------------------------


def _columns_not_orthogonal(w: ir.Value) -> ir.Value:
    """Whether any pair of columns has ``|w_p^H w_q| > eps sqrt(n) ||w_p|| ||w_q||``."""
    shape = sh.shape_of(w)
    rank = len(shape)
    n = shape[-1]
    gram = _matmul(_adjoint(w), w)
    squares = _abs_squared(gram)
    norms = sh.real(_diagonal(gram))
    gram_shape = sh.shape_of(squares)
    batch_dims = list(range(rank - 2))
    left = sh.broadcast_in_dim(norms, gram_shape, [*batch_dims, rank - 2])
    right = sh.broadcast_in_dim(norms, gram_shape, [*batch_dims, rank - 1])
    tol = _eps(sh.element_type(w)) * math.sqrt(n)
    bound = sh.multiply(sh.multiply(left, right), sh.constant(tol * tol, squares.type))
    off = sh.compare("NE", _iota(gram_shape, rank - 2), _iota(gram_shape, rank - 1))
    return _any(sh.and_(off, sh.compare("GT", squares, bound)))


def one_sided_jacobi(w: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(W V, V): V unitary with the columns of ``W V`` mutually orthogonal."""
    shape = sh.shape_of(w)
    *batch, _, n = shape
    rank = len(shape)
    tol = _eps(sh.element_type(w)) * math.sqrt(n)

    def rotate(p, q, work, vectors):
        col_p, col_q = _column(work, p), _column(work, q)
        alpha = _keep_dims_sum(_abs_squared(col_p), rank - 2)
        beta = _keep_dims_sum(_abs_squared(col_q), rank - 2)
        gamma = _keep_dims_sum(sh.multiply(sh.conj(col_p), col_q), rank - 2)
        bound = sh.multiply(sh.constant(tol, alpha.type), _sqrt(sh.multiply(alpha, beta)))
        skip = sh.compare("LE", _abs(gamma), bound)
        rot = _rotation(
            _like(alpha, sh.element_type(w)), _like(beta, sh.element_type(w)), gamma, skip
        )
        return [_rotate_columns(work, rot, p, q), _rotate_columns(vectors, rot, p, q)]

    def sweep(work, vectors):
        return _pair_sweep(n, [work, vectors], rotate)

    identity = _identity([*batch, n, n], sh.element_type(w))
    if n == 1:
        return w, identity
    return tuple(_sweeps([w, identity], lambda work, v: _columns_not_orthogonal(work), sweep))


def _svd_tall(a: ir.Value, full: bool) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(U, s descending, V) of ``[..., m, n]`` with m >= n; U is m x m if ``full``."""
    *batch, m, n = sh.shape_of(a)
    rank = len(batch) + 2
    elem = sh.element_type(a)
    qr, taus = geqrf(a)
    rows, cols = _iota([*batch, n, n], rank - 2), _iota([*batch, n, n], rank - 1)
    r = sh.slice(qr, [0] * rank, [*batch, n, n])
    r = sh.select(sh.compare("LE", rows, cols), r, sh.constant(0, r.type))
    work, vectors = one_sided_jacobi(r)
    norms = _sqrt(sh.reduce_sum(_abs_squared(work), [rank - 2]))  # [..., n]
    values, permutation = _sort_permutation(norms, "GT")
    work, vectors = _permute_columns(work, permutation), _permute_columns(vectors, permutation)
    safe = sh.select(
        sh.compare("EQ", values, sh.constant(0, values.type)), sh.constant(1, values.type), values
    )
    scale = sh.broadcast_in_dim(_like(safe, elem), [*batch, n, n], [*range(rank - 2), rank - 1])
    left_r = _complete_columns(_divide(work, scale), values)  # n x n unitary
    width = m if full else n
    q = orgqr(_pad_columns(qr, width), taus)
    embedded = _embed(left_r, width)
    return _matmul(q, embedded), values, vectors


def _complete_columns(u: ir.Value, values: ir.Value) -> ir.Value:
    """``u`` with the columns of negligible singular values replaced by an orthonormal
    completion (a rank-deficient ``R`` leaves them zero or noise).

    Householder QR of ``u`` with those columns zeroed keeps the others (up to the
    sign in ``R``'s diagonal, undone here) and completes the basis; it only runs
    (``stablehlo.if``) when some singular value is negligible.
    """
    *batch, n, _ = sh.shape_of(u)
    rank = len(batch) + 2
    largest = sh.slice(values, [0] * (rank - 1), [*batch, 1])
    threshold = sh.multiply(largest, sh.constant(_eps(sh.element_type(u)) * n, largest.type))
    negligible = sh.compare(
        "LE", values, sh.broadcast_in_dim(threshold, sh.shape_of(values), list(range(rank - 1)))
    )
    if_op = sh.create("stablehlo.if", [_any(negligible)], [u.type], regions=2)

    def complete():
        columns = sh.broadcast_in_dim(negligible, sh.shape_of(u), [*range(rank - 2), rank - 1])
        kept = sh.select(columns, sh.constant(0, u.type), u)
        qr, taus = geqrf(kept)
        signs = _diagonal(qr)
        signs = sh.select(
            sh.compare("EQ", signs, sh.constant(0, signs.type)), sh.constant(1, signs.type), signs
        )
        scale = sh.broadcast_in_dim(signs, sh.shape_of(u), [*range(rank - 2), rank - 1])
        return [sh.multiply(orgqr(qr, taus), scale)]

    sh.build_region(if_op.regions[0], [], complete)
    sh.build_region(if_op.regions[1], [], lambda: [u])
    return if_op.result


def _pad_columns(x: ir.Value, width: int) -> ir.Value:
    """``x[..., :, :width]``, zero-padded on the right when ``width`` exceeds its columns."""
    *batch, m, n = sh.shape_of(x)
    rank = len(batch) + 2
    if width <= n:
        return sh.slice(x, [0] * rank, [*batch, m, width])
    fill = sh.constant(0, sh.element_type(x))
    return sh.pad(x, fill, [0] * rank, [0] * (rank - 1) + [width - n], [0] * rank)


def _embed(x: ir.Value, size: int) -> ir.Value:
    """``[[x, 0], [0, I]]`` of ``size x size`` for square ``x``."""
    *batch, n, _ = sh.shape_of(x)
    if size == n:
        return x
    rank = len(batch) + 2
    fill = sh.constant(0, sh.element_type(x))
    grown = sh.pad(x, fill, [0] * rank, [0] * (rank - 2) + [size - n, size - n], [0] * rank)
    shape = [*batch, size, size]
    rows, cols = _iota(shape, rank - 2), _iota(shape, rank - 1)
    corner = sh.and_(
        sh.compare("EQ", rows, cols), sh.compare("GE", rows, sh.constant(n, rows.type))
    )
    return sh.select(corner, sh.constant(1, grown.type), grown)


def gesdd(a: ir.Value, config: dict[str, int], result_types: list[ir.Type]) -> list[ir.Value]:
    """(a, s, u, vt, info), as ``?gesdd`` (``a`` is returned unchanged: LAPACK destroys it)."""
    *_, m, n = sh.shape_of(a)
    mode = config.get("mode", SVD_ALL)
    full = mode == SVD_ALL
    if m >= n:
        u, values, v = _svd_tall(a, full)
        vt = _adjoint(v)
    else:
        v, values, u = _svd_tall(_adjoint(a), full)  # A^H = V S U^H
        vt = _adjoint(v)
    if mode == SVD_NONE:
        u, vt = sh.constant(0, result_types[2]), sh.constant(0, result_types[3])
    return [a, values, u, vt, _finite_info(values, result_types[4])]


# -- geev ----------------------------------------------------------------------------------


def _per_matrix_entry(x: ir.Value, row: ir.Value, col: ir.Value) -> ir.Value:
    """``x[..., row, col]`` with per-matrix indices (``[..., 1, 1]`` i32) as ``[..., 1, 1]``."""
    shape = sh.shape_of(x)
    rank = len(shape)
    hit = sh.and_(
        sh.compare("EQ", _iota(shape, rank - 2), _expand(row, shape)),
        sh.compare("EQ", _iota(shape, rank - 1), _expand(col, shape)),
    )
    picked = sh.select(hit, x, sh.constant(0, x.type))
    return _keep_dims_sum(_keep_dims_sum(picked, rank - 1), rank - 2)


def _wilkinson_shift(t: ir.Value, m: ir.Value) -> ir.Value:
    """The eigenvalue of the trailing 2x2 of the active block closer to its last entry."""
    one = sh.constant(1, m.type)
    last, before = sh.subtract(m, one), sh.subtract(m, sh.add(one, one))
    a, b = _per_matrix_entry(t, before, before), _per_matrix_entry(t, before, last)
    c, d = _per_matrix_entry(t, last, before), _per_matrix_entry(t, last, last)
    half = sh.constant(0.5, a.type)
    mean = sh.multiply(sh.add(a, d), half)
    gap = sh.multiply(sh.subtract(a, d), half)
    root = _sqrt(sh.add(sh.multiply(gap, gap), sh.multiply(b, c)))  # complex sqrt
    plus, minus = sh.add(mean, root), sh.subtract(mean, root)
    closer = sh.compare("LE", _abs(sh.subtract(plus, d)), _abs(sh.subtract(minus, d)))
    return sh.select(closer, plus, minus)


def _last_row_negligible(t: ir.Value, m: ir.Value) -> ir.Value:
    """Per matrix (``[..., 1, 1]`` i1): ``||T[m-1, :m-1]|| <= eps (|T[m-2,m-2]| + |T[m-1,m-1]|)``."""
    shape = sh.shape_of(t)
    rank = len(shape)
    one = sh.constant(1, m.type)
    last = sh.subtract(m, one)
    in_row = sh.and_(
        sh.compare("EQ", _iota(shape, rank - 2), _expand(last, shape)),
        sh.compare("LT", _iota(shape, rank - 1), _expand(last, shape)),
    )
    squares = _abs_squared(t)
    row = _keep_dims_sum(
        _keep_dims_sum(sh.select(in_row, squares, sh.constant(0, squares.type)), rank - 1), rank - 2
    )
    before = sh.subtract(last, one)
    scale = sh.add(
        _abs(_per_matrix_entry(t, last, last)), _abs(_per_matrix_entry(t, before, before))
    )
    total = _keep_dims_sum(_keep_dims_sum(squares, rank - 1), rank - 2)
    eps = _eps(sh.element_type(t))
    scale = sh.select(sh.compare("EQ", scale, sh.constant(0, scale.type)), _sqrt(total), scale)
    bound = sh.multiply(sh.constant(eps, scale.type), scale)
    return sh.compare("LE", row, sh.multiply(bound, bound))


def complex_schur(a: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(T upper triangular, Z unitary, converged) with ``A = Z T Z^H``: shifted QR steps.

    Each matrix keeps its own active size m: a step factors ``diag(T_m - mu I, I)``
    (Householder QR), applies ``T <- Q^H T Q``, ``Z <- Z Q``, and deflates the last
    active row once it is negligible. Every 11th step without deflation takes an
    exceptional shift to break cycles.
    """
    shape = sh.shape_of(a)
    *batch, n, _ = shape
    rank = len(shape)
    scalar_shape = [*batch, 1, 1]
    rows, cols = _iota(shape, rank - 2), _iota(shape, rank - 1)
    identity = _identity(shape, sh.element_type(a))
    max_steps = 30 * n

    def unfinished(steps, t, z, m, stalled):
        active = _any(sh.compare("GT", m, sh.constant(1, m.type)))
        return sh.and_(active, sh.compare("LT", steps, sh.index_scalar(max_steps)))

    def step(steps, t, z, m, stalled):
        working = sh.compare("GT", m, sh.constant(1, m.type))
        shift = _wilkinson_shift(t, sh.select(working, m, sh.constant(2, m.type)))
        exceptional = sh.compare("EQ", stalled, sh.constant(10, stalled.type))
        last = sh.subtract(sh.select(working, m, sh.constant(2, m.type)), sh.constant(1, m.type))
        nudge = sh.multiply(
            _like(
                _abs(_per_matrix_entry(t, last, sh.subtract(last, sh.constant(1, m.type)))),
                sh.element_type(t),
            ),
            sh.constant(1.5, shift.type),
        )
        shift = sh.select(exceptional, sh.add(_per_matrix_entry(t, last, last), nudge), shift)
        in_block = sh.and_(
            sh.and_(
                sh.compare("LT", rows, _expand(m, shape)), sh.compare("LT", cols, _expand(m, shape))
            ),
            _expand(working, shape),
        )
        shifted = sh.subtract(t, sh.multiply(identity, _expand(shift, shape)))
        block = sh.select(in_block, shifted, identity)
        qr, taus = geqrf(block)
        q = orgqr(qr, taus)
        t = _matmul(_adjoint(q), _matmul(t, q))
        z = _matmul(z, q)
        deflate = sh.and_(
            working, _last_row_negligible(t, sh.select(working, m, sh.constant(2, m.type)))
        )
        # the deflated row becomes exactly zero left of the diagonal
        row_mask = sh.and_(
            sh.and_(
                sh.compare("EQ", rows, _expand(sh.subtract(m, sh.constant(1, m.type)), shape)),
                sh.compare("LT", cols, _expand(sh.subtract(m, sh.constant(1, m.type)), shape)),
            ),
            _expand(deflate, shape),
        )
        t = sh.select(row_mask, sh.constant(0, t.type), t)
        m = sh.select(deflate, sh.subtract(m, sh.constant(1, m.type)), m)
        stalled = sh.select(
            deflate,
            sh.constant(0, stalled.type),
            sh.select(
                exceptional,
                sh.constant(0, stalled.type),
                sh.add(stalled, sh.constant(1, stalled.type)),
            ),
        )
        return [_increment(steps), t, z, m, stalled]

    m = sh.constant(n, sh.tensor_type(scalar_shape, sh.i32()))
    stalled = sh.constant(0, sh.tensor_type(scalar_shape, sh.i32()))
    _, t, z, m, _ = sh.while_loop([sh.index_scalar(0), a, identity, m, stalled], unfinished, step)
    # below the diagonal only rounding is left once every row deflated
    t = sh.select(sh.compare("GT", rows, cols), sh.constant(0, t.type), t)
    converged = sh.compare("LE", m, sh.constant(1, m.type))
    return t, z, converged


def _triangular_eigenvectors(t: ir.Value, values: ir.Value, right: bool) -> ir.Value:
    """Column k: the eigenvector of upper triangular T for ``values[k]`` (right), or the
    conjugate of the left one (``y^H T = lambda y^H``), with 1 at position k.

    One substitution loop solves all columns at once; a zero ``T[i,i] - lambda_k``
    (repeated eigenvalue) is replaced by ``eps ||T||`` as LAPACK's ``?trevc`` does.
    """
    shape = sh.shape_of(t)
    *batch, n, _ = shape
    rank = len(shape)
    rows, cols = _iota(shape, rank - 2), _iota(shape, rank - 1)
    row_shape = [*batch, 1, n]
    lambdas = sh.reshape(values, row_shape)
    magnitude = _sqrt(_keep_dims_sum(_keep_dims_sum(_abs_squared(t), rank - 1), rank - 2))
    tiny = float(
        np.finfo(
            np.float64 if isinstance(_real_elem(sh.element_type(t)), ir.F64Type) else np.float32
        ).tiny
    )
    smallest = sh.maximum(
        sh.multiply(magnitude, sh.constant(_eps(sh.element_type(t)), magnitude.type)),
        sh.constant(tiny, magnitude.type),
    )
    smallest = _expand(smallest, row_shape)
    start = sh.select(sh.compare("EQ", rows, cols), sh.constant(1, t.type), sh.constant(0, t.type))
    row_positions = _iota(row_shape, rank - 1)

    def solve_row(step, x):
        i = sh.subtract(sh.index_scalar(n - 2), step) if right else _increment(step)
        i_row = _scalar_like(i, row_shape)
        if right:  # x[i, k] = -(T[i, i+1:] . x[i+1:, k]) / (T[i, i] - lambda_k), k > i
            coefficients = _row(t, i)
            known = sh.compare("GT", row_positions, i_row)
            coefficients = sh.select(known, coefficients, sh.constant(0, coefficients.type))
            accumulated = _matmul(coefficients, x)
            solving = sh.compare("GT", row_positions, i_row)
        else:  # conj(y)[i, k] = -(conj(y)[:i, k] . T[:i, i]) / (T[i, i] - lambda_k), k < i
            coefficients = sh.transpose(_column(t, i), [*range(rank - 2), rank - 1, rank - 2])
            known = sh.compare("LT", row_positions, i_row)
            coefficients = sh.select(known, coefficients, sh.constant(0, coefficients.type))
            accumulated = _matmul(coefficients, x)
            solving = sh.compare("LT", row_positions, i_row)
        difference = sh.subtract(_expand(_entry(t, i, i), row_shape), lambdas)
        too_small = sh.compare("LT", _abs(difference), smallest)
        difference = sh.select(too_small, _like(smallest, sh.element_type(t)), difference)
        solved = _divide(sh.unary("negate", accumulated), difference)
        new_row = sh.select(solving, solved, _row(x, i))
        return [_set_row(x, new_row, i)]

    if n == 1:
        return start
    return _counted_loop(n - 1, [start], solve_row)[0]


def _normalize_columns(v: ir.Value) -> ir.Value:
    """Unit 2-norm columns whose largest-magnitude component is real (LAPACK's ?geev)."""
    shape = sh.shape_of(v)
    rank = len(shape)
    squares = _abs_squared(v)
    norms = _sqrt(_keep_dims_sum(squares, rank - 2))
    largest = _expand(_keep_dims_reduce(squares, rank - 2, "maximum", 0), shape)
    rows = _iota(shape, rank - 2)
    first_largest = sh.reduce(
        [sh.select(sh.compare("EQ", squares, largest), rows, sh.constant(shape[-2], rows.type))],
        [sh.index_scalar(shape[-2])],
        [rank - 2],
        lambda x, y: [sh.minimum(x, y)],
    )[0]
    pick = sh.compare(
        "EQ", rows, sh.broadcast_in_dim(first_largest, shape, [*range(rank - 2), rank - 1])
    )
    pivot = _keep_dims_sum(sh.select(pick, v, sh.constant(0, v.type)), rank - 2)
    pivot_size = _abs(pivot)
    safe = sh.compare("GT", pivot_size, sh.constant(0, pivot_size.type))
    phase = _divide(
        sh.conj(pivot),
        _like(sh.select(safe, pivot_size, sh.constant(1, pivot_size.type)), sh.element_type(v)),
    )
    phase = sh.select(safe, phase, sh.constant(1, phase.type))
    safe_norms = sh.select(
        sh.compare("GT", norms, sh.constant(0, norms.type)), norms, sh.constant(1, norms.type)
    )
    scale = _divide(phase, _like(safe_norms, sh.element_type(v)))
    return sh.multiply(v, _expand(scale, shape))


def geev(a: ir.Value, config: dict[str, int], result_types: list[ir.Type]) -> list[ir.Value]:
    """``?geev``: (wr, wi, vl, vr, info) for real input, (w, vl, vr, info) for complex.

    Complex Schur form by shifted QR, eigenvectors by substitution on T.
    Eigenvalues come in deflation order (LAPACK's order is unspecified too); for
    real input conjugate pairs are not forced to be exact conjugates.
    """
    elem = sh.element_type(a)
    real_input = not _is_complex(elem)
    complex_elem = ir.ComplexType.get(elem) if real_input else elem
    matrix = _like(a, complex_elem) if real_input else a
    t, z, converged = complex_schur(matrix)
    values = _diagonal(t)
    vectors = []
    for key, right in (("compute_left", False), ("compute_right", True)):
        if config.get(key, NO_TRANS) == VECTORS:
            triangular = _triangular_eigenvectors(t, values, right)
            vectors.append(
                _normalize_columns(_matmul(z, triangular if right else sh.conj(triangular)))
            )
        else:
            vectors.append(sh.constant(0, matrix.type))
    batch_shape = _batch(a)
    info = sh.select(
        sh.reshape(converged, batch_shape),
        sh.constant(0, sh.tensor_type(batch_shape, sh.i32())),
        sh.constant(1, sh.tensor_type(batch_shape, sh.i32())),
    )
    info = _convert_to(info, result_types[-1])
    if real_input:
        return [sh.real(values), sh.imag(values), *vectors, info]
    return [values, *vectors, info]


def gees(op: ir.Operation, config: dict[str, int], result_types: list[ir.Type]) -> list[ir.Value]:
    """Complex ``?gees``: (T, Z, w, sdim, info) with ``A = Z T Z^H``, no eigenvalue sorting.

    The real variant returns the real (quasi-triangular) Schur form, which the
    complex QR iteration does not produce: it is an error.
    """
    a = op.operands[0]
    if not _is_complex(sh.element_type(a)):
        raise PassError(op, "the real Schur form (real ?gees) is not supported; complex input is")
    if config.get("sort", NO_TRANS) != NO_TRANS:
        raise PassError(op, "?gees with eigenvalue sorting is not supported")
    t, z, converged = complex_schur(a)
    if config.get("mode", VECTORS) != VECTORS:
        z = sh.constant(0, a.type)
    batch_shape = _batch(a)
    info = sh.select(
        sh.reshape(converged, batch_shape),
        sh.constant(0, sh.tensor_type(batch_shape, sh.i32())),
        sh.constant(1, sh.tensor_type(batch_shape, sh.i32())),
    )
    sdim = sh.constant(0, result_types[3])
    return [t, z, _diagonal(t), sdim, _convert_to(info, result_types[4])]


# -- gtsv ----------------------------------------------------------------------------------


def _scale_rows(entry: ir.Value, rows: ir.Value) -> ir.Value:
    """``entry * rows``: a ``[..., 1, 1]`` entry times ``[..., 1, nrhs]`` rows."""
    return sh.multiply(_expand(entry, sh.shape_of(rows)), rows)


def gtsv(dl: ir.Value, d: ir.Value, du: ir.Value, b: ir.Value, info_type: ir.Type) -> list[ir.Value]:
    """(dl, d, du, x, info) of ``?gtsv``: LAPACK's elimination of a tridiagonal system with
    rows ``k, k + 1`` swapped where the subdiagonal entry is larger (``|re| + |im|`` for
    complex), then back substitution through the second superdiagonal the swaps fill.
    JAX's ``dl[..., 0]`` and ``du[..., n - 1]`` lie outside the matrix; ``info = k`` for
    the first zero pivot ``U[k-1, k-1]`` (``x`` is then undefined, as LAPACK's)."""
    *batch, n = sh.shape_of(d)
    zero_entry = sh.constant(0, sh.tensor_type([*batch, 1, 1], sh.element_type(d)))
    zero_tail = sh.constant(0, sh.tensor_type([*batch, 1], sh.element_type(d)))
    sub = sh.concatenate([sh.slice(dl, [0] * len(batch) + [1], [*batch, n]), zero_tail], len(batch))
    sup = sh.concatenate([sh.slice(du, [0] * len(batch) + [0], [*batch, n - 1]), zero_tail], len(batch))
    fill = sh.constant(0, d.type)  # row k, column k + 2
    info = sh.constant(0, sh.tensor_type([*batch, 1, 1], sh.i32()))

    def eliminate(k, sub, diag, sup, fill, b, info):
        k1 = _increment(k)
        s, dk, dk1 = _vector_entry(sub, k), _vector_entry(diag, k), _vector_entry(diag, k1)
        uk, uk1 = _vector_entry(sup, k), _vector_entry(sup, k1)
        swap = sh.compare("GT", _pivot_magnitude(s), _pivot_magnitude(dk))
        keep_factor, swap_factor = _divide(s, dk), _divide(dk, s)
        diag = _set_vector_entry(diag, sh.select(swap, s, dk), k)
        diag = _set_vector_entry(diag, sh.select(swap, sh.subtract(uk, sh.multiply(swap_factor, dk1)),
                                                 sh.subtract(dk1, sh.multiply(keep_factor, uk))), k1)
        fill = _set_vector_entry(fill, sh.select(swap, uk1, zero_entry), k)
        sup = _set_vector_entry(sup, sh.select(swap, dk1, uk), k)
        moved_up = sh.unary("negate", sh.multiply(swap_factor, uk1))
        sup = _set_vector_entry(sup, sh.select(swap, moved_up, uk1), k1)
        bk, bk1 = _row(b, k), _row(b, k1)
        swap_rows = _expand(swap, sh.shape_of(bk))
        b = _set_row(b, sh.select(swap_rows, bk1, bk), k)
        b = _set_row(b, sh.select(swap_rows, sh.subtract(bk, _scale_rows(swap_factor, bk1)),
                                  sh.subtract(bk1, _scale_rows(keep_factor, bk))), k1)
        singular = sh.and_(sh.unary("not", swap), sh.compare("EQ", dk, zero_entry))
        info = _first_failure(info, singular, k1)
        return [sub, diag, sup, fill, b, info]

    _, diag, sup, fill, b, info = _counted_loop(n - 1, [sub, d, sup, fill, b, info], eliminate)
    last = sh.index_scalar(n - 1)
    last_pivot = _vector_entry(diag, last)
    info = _first_failure(info, sh.compare("EQ", last_pivot, zero_entry), sh.index_scalar(n))
    nrhs = sh.shape_of(b)[-1]
    x = sh.concatenate([b, sh.constant(0, sh.tensor_type([*batch, 2, nrhs], sh.element_type(b)))], len(batch))

    def substitute(j, x):
        k = sh.subtract(last, j)
        k1 = _increment(k)
        row = sh.subtract(_row(x, k), _scale_rows(_vector_entry(sup, k), _row(x, k1)))
        row = sh.subtract(row, _scale_rows(_vector_entry(fill, k), _row(x, _increment(k1))))  # zero rows past n
        return [_set_row(x, _divide(row, _expand(_vector_entry(diag, k), sh.shape_of(row))), k)]

    (x,) = _counted_loop(n, [x], substitute)
    x = sh.slice(x, [0] * (len(batch) + 2), [*batch, n, nrhs])
    # what LAPACK leaves in DL (JAX's dl[1:]): the fill of rows 0 .. n-3, then dl[n-1]
    if n >= 2:
        edges = [sh.slice(dl, [0] * len(batch) + [0], [*batch, 1]),
                 sh.slice(fill, [0] * len(batch) + [0], [*batch, n - 2]),
                 sh.slice(dl, [0] * len(batch) + [n - 1], [*batch, n])]
        dl = sh.concatenate(edges, len(batch))
        du = sh.concatenate([sh.slice(sup, [0] * len(batch) + [0], [*batch, n - 1]),
                             sh.slice(du, [0] * len(batch) + [n - 1], [*batch, n])], len(batch))
    return [dl, diag, du, x, _convert_to(sh.reshape(info, batch), info_type)]


def _first_failure(info: ir.Value, failed: ir.Value, code: ir.Value) -> ir.Value:
    """``info`` where it is already set or nothing failed, else ``code`` (``[..., 1, 1]`` i32)."""
    unset = sh.compare("EQ", info, sh.constant(0, info.type))
    code = _scalar_like(sh.convert(code, sh.i32()), sh.shape_of(info))
    return sh.select(sh.and_(unset, failed), code, info)


# -- the pass ------------------------------------------------------------------------------


def backend_config(op: ir.Operation) -> dict[str, int]:
    """``mhlo.backend_config = {uplo = 76 : ui8, ...}`` as a dict of ints."""
    if "mhlo.backend_config" not in op.attributes:
        return {}
    attr = op.attributes["mhlo.backend_config"]
    if not isinstance(attr, ir.DictAttr):
        return {}
    return {
        named.name: ir.IntegerAttr(named.attr).value
        for named in attr
        if isinstance(named.attr, ir.IntegerAttr)
    }


def _check_matrix_operands(op: ir.Operation, target: str, routine: str) -> None:
    for value in op.operands:
        t = value.type
        if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
            raise PassError(op, f"'{target}' needs statically shaped operands, got {t}")
    if routine == "gtsv" and len(op.operands) != 4:
        raise PassError(op, f"'{target}' needs 4 operands (dl, d, du, b), got {len(op.operands)}")
    matrix = op.operands[3 if routine == "gtsv" else 0]  # gtsv: the three diagonals, then b
    if len(sh.shape_of(matrix)) < 2:
        raise PassError(op, f"'{target}' needs a matrix operand, got {matrix.type}")


def legalize(op: ir.Operation, routine: str) -> list[ir.Value]:
    """The values replacing the results of LAPACK call ``op``."""
    config = backend_config(op)
    operands = list(op.operands)
    result_types = [r.type for r in op.results]
    if routine == "potrf":
        return potrf(operands[0], config.get("uplo", LOWER) == LOWER, result_types[1])
    if routine == "trsm":
        return [trsm(operands[0], operands[1], config)]
    if routine == "getrf":
        return getrf(operands[0], result_types[1], result_types[2])
    if routine == "geqrf":
        return geqrf(operands[0])
    if routine in ("orgqr", "ungqr"):
        return [orgqr(operands[0], operands[1])]
    if routine in ("syevd", "heevd"):
        return syevd(operands[0], config, result_types[2])
    if routine == "geev":
        return geev(operands[0], config, result_types)
    if routine == "gees":
        return gees(op, config, result_types)
    if routine == "gtsv":
        return gtsv(*operands, result_types[4])
    return gesdd(operands[0], config, result_types)


@dataclasses.dataclass(frozen=True)
class LegalizeLapackCustomCalls(ModulePass):
    """Replace JAX's lapack_*_ffi custom calls by StableHLO decompositions."""

    NAME = "xhlo-legalize-lapack-custom-calls"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.custom_call"):
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            match = TARGET.match(target)
            if match is None:
                continue
            _check_matrix_operands(op, target, match.group(2))
            with ir.InsertionPoint(op), op.location:
                if any(0 in sh.shape_of(v) for v in op.operands):  # LAPACK returns at once, info = 0
                    values = [sh.constant(0, result.type) for result in op.results]
                else:
                    values = legalize(op, match.group(2))
            if len(values) != len(op.results):
                raise PassError(
                    op, f"'{target}': expected {len(values)} results, got {len(op.results)}"
                )
            for result, value in zip(op.results, values):
                if result.type != value.type:
                    raise PassError(
                        op, f"'{target}': result type {result.type}, computed {value.type}"
                    )
                result.replace_all_uses_with(value)
            op.erase()

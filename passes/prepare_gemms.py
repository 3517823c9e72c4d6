"""xhlo-prepare-gemms: large float contractions become tagged named matmuls, bound for BLAS.

A well-tuned BLAS runs a large matmul at most of the machine's peak; compiled
loops, even vectorized, reach a few percent of it. This pass finds the
contractions worth a BLAS call (float32/float64, static shapes, at least
``min-volume`` multiply-adds per matrix product) and rewrites each into the
one form ``xhlo-gemm-to-blas`` turns into ``sgemm``/``dgemm`` calls after
bufferization: a ``linalg.matmul`` (or ``linalg.batch_matmul``) tagged
``xhlo.blas``, whose operands are row-major matrices, possibly transposed.

* Contractions come as ``linalg.matmul``/``batch_matmul`` or as a
  ``linalg.generic`` multiply-accumulate (``dot_general`` with batch or
  transposed dimensions). Their loops are classified as batch (in all three
  operands), rows (left operand and result), columns (right operand and
  result) and reduction; each class must be a contiguous, equally ordered run
  of dimensions in the operands it appears in, so ``tensor.collapse_shape``
  makes it one dimension for free.
* 2-D convolutions (NHWC/HWCF and NCHW/FCHW) are first rewritten into an
  im2col matrix times the filter by the upstream transform.

The named op protects the matmul from ``linalg-fuse-elementwise-ops``, which
would otherwise pull an elementwise producer (a bias add and relu) into the
multiply-accumulate loop and recompute it for every output column.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir, linalg, tensor

from .base import ModulePass, walk_ops

BLAS_TAG = "xhlo.blas"
CONVOLUTIONS = ("linalg.conv_2d_nhwc_hwcf", "linalg.conv_2d_nchw_fchw", "linalg.conv_2d_nhwc_fhwc")
_IM2COL = """
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %convs = transform.structured.match attributes{xhlo.im2col} in %root : (!transform.any_op) -> !transform.any_op
    %im2col, %gemm = transform.structured.convert_conv2d_to_img2col %convs : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
"""
_GENERALIZE = """
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match attributes{xhlo.generalize} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.generalize %ops : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
"""


@dataclasses.dataclass(frozen=True)
class GemmShape:
    """A contraction as (batched) row-major matrices: lhs rows x inner times rhs inner x cols."""

    batch: tuple[int, ...]  # loop dims, in operand order
    rows: tuple[int, ...]
    cols: tuple[int, ...]
    inner: tuple[int, ...]
    lhs: int  # operand index (0 or 1) holding the rows
    lhs_transposed: bool  # lhs stored inner-major
    rhs_transposed: bool  # rhs stored cols-major


def _float_element(t: ir.Type) -> str | None:
    if isinstance(t, ir.RankedTensorType) and t.has_static_shape:
        name = str(t.element_type)
        return name if name in ("f32", "f64") else None
    return None


def _dims(amap: ir.AffineMap) -> list[int] | None:
    dims = []
    for expr in amap.results:
        if not isinstance(expr, ir.AffineDimExpr):
            return None
        dims.append(ir.AffineDimExpr(expr).position)
    return dims


def _is_multiply_accumulate(op: ir.Operation) -> bool:
    """Body is ``out + a * b`` (in any operand order) and nothing else."""
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    if len(ops) != 3 or [o.name for o in ops] != ["arith.mulf", "arith.addf", "linalg.yield"]:
        return False
    mul, add, done = ops
    a, b, out = block.arguments
    if set(mul.operands) != {a, b} or a == b:
        return False
    if set(add.operands) != {mul.results[0], out}:
        return False
    return list(done.operands) == [add.results[0]]


def _split(dims: list[int], batch: list[int], first: set[int], second: set[int]):
    """dims == batch + run(first) + run(second) (either order)? -> (first run, second run, swapped)."""
    if dims[: len(batch)] != batch:
        return None
    rest = dims[len(batch):]
    head = [d for d in rest[: len(first)]]
    tail = rest[len(first):]
    if set(head) == first and set(tail) == second:
        return head, tail, False
    head, tail = rest[: len(second)], rest[len(second):]
    if set(head) == second and set(tail) == first:
        return tail, head, True
    return None


def gemm_shape(op: ir.Operation) -> GemmShape | None:
    """The matrix view of a linalg.generic contraction, None if it has none."""
    if op.name != "linalg.generic" or len(op.operands) != 3 or not _is_multiply_accumulate(op):
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    operand_dims = [_dims(m) for m in maps]
    if any(d is None for d in operand_dims):
        return None
    a_dims, b_dims, c_dims = operand_dims
    parallel = ["parallel" in str(it) for it in op.attributes["iterator_types"]]
    in_a, in_b, in_c = set(a_dims), set(b_dims), set(c_dims)
    if any(len(set(d)) != len(d) for d in operand_dims):
        return None
    batch = [d for d in c_dims if d in in_a and d in in_b]
    if any(not parallel[d] for d in batch) or c_dims[: len(batch)] != batch:
        return None
    inner = {d for d in in_a & in_b if d not in in_c}
    if any(parallel[d] for d in inner) or len(parallel) != len(in_a | in_b | in_c):
        return None
    rows_and_cols = c_dims[len(batch):]
    a_only = {d for d in rows_and_cols if d in in_a and d not in in_b}
    b_only = {d for d in rows_and_cols if d in in_b and d not in in_a}
    if not inner or not a_only or not b_only or a_only | b_only != set(rows_and_cols):
        return None
    if set(batch) | inner | a_only | b_only != set(range(len(parallel))):
        return None  # a loop reduced over one operand only
    # The result's leading run is the rows; the input holding it is the BLAS lhs.
    lhs = 0 if rows_and_cols[0] in a_only else 1
    rows_set, cols_set = (a_only, b_only) if lhs == 0 else (b_only, a_only)
    result_split = _split(c_dims, batch, rows_set, cols_set)
    if result_split is None or result_split[2]:
        return None
    rows, cols = result_split[0], result_split[1]
    lhs_dims, rhs_dims = (a_dims, b_dims) if lhs == 0 else (b_dims, a_dims)
    lhs_split = _split(lhs_dims, batch, set(rows), inner)
    rhs_split = _split(rhs_dims, batch, inner, set(cols))
    if lhs_split is None or rhs_split is None:
        return None
    if lhs_split[0] != rows or rhs_split[1] != cols or lhs_split[1] != rhs_split[0]:
        return None  # a run in a different order in two operands
    return GemmShape(tuple(batch), tuple(rows), tuple(cols), tuple(lhs_split[1]), lhs,
                     lhs_split[2], rhs_split[2])


# -- rewriting ---------------------------------------------------------------------------------


def _ranges(op: ir.Operation) -> dict[int, int]:
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    ranges = {}
    for amap, value in zip(maps, op.operands):
        for d, size in zip(_dims(amap), ir.RankedTensorType(value.type).shape):
            ranges[d] = size
    return ranges


def _collapse(value: ir.Value, groups: list[list[int]]) -> ir.Value:
    """Collapse consecutive dimension groups (lists of positions) of ``value``."""
    t = ir.RankedTensorType(value.type)
    if all(len(g) == 1 for g in groups):
        return value
    shape = [math.prod(t.shape[i] for i in g) for g in groups]
    reassociation = ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i) for i in g]) for g in groups])
    return tensor.collapse_shape(ir.RankedTensorType.get(shape, t.element_type), value, reassociation)


def _expand(value: ir.Value, like: ir.RankedTensorType, groups: list[list[int]]) -> ir.Value:
    if all(len(g) == 1 for g in groups):
        return value
    reassociation = ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i) for i in g]) for g in groups])
    return tensor.expand_shape(like, value, reassociation, [], list(like.shape))


def _position_groups(dims: list[int], runs: list[tuple[int, ...]]) -> list[list[int]]:
    groups = []
    for run in runs:
        if run:
            groups.append([dims.index(d) for d in run])
    return groups


def _rewrite(op: ir.Operation, shape: GemmShape) -> None:
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    a_dims, b_dims, c_dims = (_dims(m) for m in maps)
    lhs, rhs = (op.operands[0], op.operands[1]) if shape.lhs == 0 else (op.operands[1], op.operands[0])
    lhs_dims, rhs_dims = (a_dims, b_dims) if shape.lhs == 0 else (b_dims, a_dims)
    batch = (shape.batch,) if shape.batch else ()
    lhs_runs = [*batch, *((shape.inner, shape.rows) if shape.lhs_transposed else (shape.rows, shape.inner))]
    rhs_runs = [*batch, *((shape.cols, shape.inner) if shape.rhs_transposed else (shape.inner, shape.cols))]
    out_runs = [*batch, shape.rows, shape.cols]
    out_groups = _position_groups(c_dims, out_runs)
    with ir.InsertionPoint(op), op.location:
        lhs2 = _collapse(lhs, _position_groups(lhs_dims, lhs_runs))
        rhs2 = _collapse(rhs, _position_groups(rhs_dims, rhs_runs))
        out2 = _collapse(op.operands[2], out_groups)
        nb = 1 if shape.batch else 0
        d = [ir.AffineDimExpr.get(i) for i in range(nb + 3)]
        b, m, n, k = ([d[0]] if nb else []), d[nb], d[nb + 1], d[nb + 2]
        new_maps = [
            ir.AffineMap.get(nb + 3, 0, b + ([k, m] if shape.lhs_transposed else [m, k])),
            ir.AffineMap.get(nb + 3, 0, b + ([n, k] if shape.rhs_transposed else [k, n])),
            ir.AffineMap.get(nb + 3, 0, b + [m, n]),
        ]
        builder = linalg.batch_matmul if nb else linalg.matmul
        product = builder(lhs2, rhs2, outs=[out2], indexing_maps=new_maps)
        product.owner.attributes[BLAS_TAG] = ir.UnitAttr.get()
        result = _expand(product, ir.RankedTensorType(op.results[0].type), out_groups)
    op.results[0].replace_all_uses_with(result)
    op.erase()


def _volume(op: ir.Operation, shape: GemmShape) -> int:
    ranges = _ranges(op)
    return math.prod(ranges[d] for d in (*shape.rows, *shape.cols, *shape.inner))


def _apply(module: ir.Operation, script: str) -> None:
    from torch_mlir.dialects.transform import interpreter

    transform = ir.Module.parse(script)
    interpreter.apply_named_sequence(module, transform.body.operations[0], transform)


def _tag_and_apply(module: ir.Operation, ops: list[ir.Operation], tag: str, script: str) -> None:
    """Apply ``script`` to each op in turn; an op the transform rejects stays as it is."""
    handler = module.context.attach_diagnostic_handler(lambda diagnostic: True)
    try:
        for op in ops:
            op.attributes[tag] = ir.UnitAttr.get()
            try:
                _apply(module, script)
            except ir.MLIRError:
                pass
            _untag(module, tag)
    finally:
        handler.detach()


def _untag(module: ir.Operation, tag: str) -> None:
    def visit(op):
        if tag in op.attributes:
            del op.attributes[tag]
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)


@dataclasses.dataclass(frozen=True)
class PrepareGemms(ModulePass):
    """Turn large float contractions (and 2-D convolutions) into tagged named matmuls."""

    NAME = "xhlo-prepare-gemms"
    min_volume: int = 32768  # multiply-adds of one matrix product (32^3) worth a BLAS call

    def run(self, module: ir.Operation) -> None:
        from xhlo import blas

        if not blas.available():
            return
        convs = [op for op in walk_ops(module, CONVOLUTIONS) if self._conv_worth_it(op)]
        _tag_and_apply(module, convs, "xhlo.im2col", _IM2COL)
        named = [op for op in walk_ops(module, ("linalg.matmul", "linalg.batch_matmul"))
                 if BLAS_TAG not in op.attributes and all(_float_element(v.type) for v in op.operands)]
        _tag_and_apply(module, named, "xhlo.generalize", _GENERALIZE)
        for op in walk_ops(module, "linalg.generic"):
            if not all(_float_element(v.type) for v in op.operands):
                continue
            if len({_float_element(v.type) for v in op.operands}) != 1:
                continue
            shape = gemm_shape(op)
            if shape is not None and _volume(op, shape) >= self.min_volume:
                _rewrite(op, shape)

    def _conv_worth_it(self, op: ir.Operation) -> bool:
        """Float convolution whose im2col product has at least ``min_volume`` multiply-adds."""
        types = [v.type for v in op.operands]
        if not all(_float_element(t) for t in types) or len({str(t.element_type) for t in types}) != 1:
            return False
        out = ir.RankedTensorType(types[2]).shape
        features = out[1] if op.name == "linalg.conv_2d_nchw_fchw" else out[-1]
        filter_size = math.prod(ir.RankedTensorType(types[1]).shape)
        return math.prod(out) * filter_size // features >= self.min_volume

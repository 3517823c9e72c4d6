"""xhlo-prepare-gemms: large float contractions become tagged ``linalg.contract`` ops, bound for BLAS.

A well-tuned BLAS runs a large matmul at most of the machine's peak; compiled
loops, even vectorized, reach a few percent of it. This pass finds the
contractions worth a BLAS call (float32/float64, static shapes, at least
``min-volume`` multiply-adds per matrix product) and rewrites each into a
``linalg.contract`` tagged ``xhlo.blas``, operand holding the result's rows
first, which ``xhlo-gemm-to-blas`` turns into ``sgemm``/``dgemm`` calls after
bufferization.

* Contractions come as ``linalg.matmul``/``batch_matmul`` or as a
  ``linalg.generic`` multiply-accumulate (``dot_general`` with batch or
  transposed dimensions). Their loops are classified as batch (in all three
  operands, leading), rows (lhs and result), columns (rhs and result) and
  reduction; rows, columns and reduction must each be a contiguous, equally
  ordered run of dimensions in the operands they appear in, so that a row-major
  matrix (possibly transposed) can describe each operand. An input that is a
  transposed copy is read in place when BLAS can take its source with a
  transposed-operand flag (``g @ W.T``), and a zero-initialized product whose
  only use transposes it computes the transposed result (a dense layer's
  weight gradient). An input no matrix describes (fusion
  folded a transpose into the contraction) gets a transposed copy that one
  does, when the product is at least ``copy-worth`` multiply-adds per element
  copied; the result's order must fit as it is.
* 2-D convolutions first become an im2col matrix times the filter (``im2col``
  option). NHWC/HWCF ones (JAX's layout) get xhlo's own im2col, a copy
  ``patches[n, oh, ow, kh, kw, c] = image[n, oh*s + kh*d, ow*s + kw*d, c]`` whose
  inner loop is contiguous channels, so it vectorizes; NHWC/FHWC and NCHW/FCHW
  use the upstream transform (its mod/floordiv indexing stays scalar). An
  NHWC/HWCF f32 one of at most ``DIRECT_CONV_MAX_CHANNELS`` input channels and
  whole vectors of at most as many features, or of one channel and one feature
  (``jnp.convolve``), is tagged ``xhlo.direct_conv`` instead, for
  ``xhlo-lower-direct-convolutions`` (its im2col matrix would be many times the image).

A +0.0 ``linalg.fill`` that only initializes a tagged contraction (through
reshapes) is tagged too: ``xhlo-vectorize`` leaves it alone and
``xhlo-gemm-to-blas`` replaces it by ``beta = 0`` when the two stay adjacent.
Such a zero-initialized product whose only use scales it by a constant
(``x * c``, or ``x / c`` with ``1/c`` exact: attention's ``/ sqrt(d)``) takes
the scale as the call's ``alpha`` (``xhlo.blas_alpha``) and the elementwise
pass over the product goes.

The named op keeps ``linalg-fuse-elementwise-ops`` from pulling an elementwise
producer (a bias add and relu) into the multiply-accumulate loop, where it
would be recomputed for every output column. The fusion pass still folds
reshapes next to a contraction into it, turning it back into a generic, so the
pipeline runs this pass again after fusion (with im2col then). By then fusion
may have pulled the factors' producers into that generic (``out + f(x, ..) *
g(w, ..)``: a layer norm, a bf16 -> f32 conversion, when the product's result
is split into heads); such a generic computes ``f`` and ``g`` in elementwise
generics of their own again, over the loops each reads, when the product of
their results is a GEMM worth BLAS (it had been a vector loop per output row,
13-31 ms against 0.3-2 ms).
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import arith, ir, linalg, tensor

from .base import (
    ModulePass,
    defining_op,
    indexing_maps,
    iterator_types,
    linalg_generic,
    loop_ranges,
    walk_ops,
)

BLAS_TAG = "xhlo.blas"
DIRECT_CONV_TAG = "xhlo.direct_conv"  # on convolutions xhlo-lower-direct-convolutions computes
DIRECT_CONV_MAX_CHANNELS = 128  # and features: beyond, im2col and BLAS win (3x3, 256 x 256: 6.5 against 5.3 ms)
BLAS_ALPHA = "xhlo.blas_alpha"  # the call's alpha, when a scale of the product was folded in
RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape", "memref.collapse_shape", "memref.expand_shape")
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


BLAS_FLOATS = ("f32", "f64")  # the element types sgemm and dgemm multiply


def blas_alpha(op: ir.Operation) -> float:
    """The scale folded into a tagged contraction (``xhlo.blas_alpha``; 1.0 without one)."""
    return ir.FloatAttr(op.attributes[BLAS_ALPHA]).value if BLAS_ALPHA in op.attributes else 1.0


def _float_element(t: ir.Type) -> str | None:
    if isinstance(t, ir.RankedTensorType) and t.has_static_shape:
        name = str(t.element_type)
        return name if name in BLAS_FLOATS else None
    return None


def map_dims(amap: ir.AffineMap) -> list[int] | None:
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


def contraction_dims(op: ir.Operation) -> tuple[list[int], list[int], list[int], int] | None:
    """``(A's, B's, C's loop dims, number of loops)`` of a linalg.generic computing
    ``C += A * B``, with C's loops exactly the parallel ones; None for anything else."""
    if op.name != "linalg.generic" or len(op.operands) != 3 or not _is_multiply_accumulate(op):
        return None
    operand_dims = [map_dims(ir.AffineMapAttr(a).value) for a in op.attributes["indexing_maps"]]
    if any(d is None for d in operand_dims):
        return None
    parallel = ["parallel" in str(it) for it in op.attributes["iterator_types"]]
    if any(parallel[d] != (d in operand_dims[2]) for d in range(len(parallel))):
        return None
    return (*operand_dims, len(parallel))


def gemm_shape(op: ir.Operation) -> GemmShape | None:
    """The matrix view of a linalg.generic multiply-accumulate, None if it has none."""
    dims = contraction_dims(op)
    return None if dims is None else classify(*dims)


def _runs(a_dims: list[int], b_dims: list[int], c_dims: list[int], n_loops: int):
    """The loops of C[c_dims] += A[a_dims] * B[b_dims] as batch, rows and cols runs (in C's
    order), the inner loops, and which input holds the rows; None unless C is batch, rows,
    cols and every loop is a batch, row, column or inner loop."""
    operand_dims = (a_dims, b_dims, c_dims)
    in_a, in_b, in_c = set(a_dims), set(b_dims), set(c_dims)
    if any(len(set(d)) != len(d) for d in operand_dims):
        return None
    batch = [d for d in c_dims if d in in_a and d in in_b]
    if c_dims[: len(batch)] != batch:
        return None
    inner = {d for d in in_a & in_b if d not in in_c}
    rows_and_cols = c_dims[len(batch):]
    a_only = {d for d in rows_and_cols if d in in_a and d not in in_b}
    b_only = {d for d in rows_and_cols if d in in_b and d not in in_a}
    if not inner or not a_only or not b_only or a_only | b_only != set(rows_and_cols):
        return None
    if set(batch) | inner | a_only | b_only != set(range(n_loops)) or len(in_a | in_b | in_c) != n_loops:
        return None  # a loop reduced over one operand only
    # The result's leading run is the rows; the input holding it is the BLAS lhs.
    lhs = 0 if rows_and_cols[0] in a_only else 1
    rows_set, cols_set = (a_only, b_only) if lhs == 0 else (b_only, a_only)
    result_split = _split(c_dims, batch, rows_set, cols_set)
    if result_split is None or result_split[2]:
        return None
    return batch, result_split[0], result_split[1], inner, lhs


def _input_splits(a_dims: list[int], b_dims: list[int], runs):
    """The lhs's and rhs's dims, and their splits into (rows, inner) and (inner, cols)."""
    batch, rows, cols, inner, lhs = runs
    lhs_dims, rhs_dims = (a_dims, b_dims) if lhs == 0 else (b_dims, a_dims)
    return lhs_dims, rhs_dims, _split(lhs_dims, batch, set(rows), inner), _split(rhs_dims, batch, inner, set(cols))


def classify(a_dims: list[int], b_dims: list[int], c_dims: list[int], n_loops: int) -> GemmShape | None:
    """Batch/rows/cols/inner runs of a contraction C[c_dims] += A[a_dims] * B[b_dims]."""
    runs = _runs(a_dims, b_dims, c_dims, n_loops)
    if runs is None:
        return None
    batch, rows, cols, _, lhs = runs
    _, _, lhs_split, rhs_split = _input_splits(a_dims, b_dims, runs)
    if lhs_split is None or rhs_split is None:
        return None
    if lhs_split[0] != rows or rhs_split[1] != cols or lhs_split[1] != rhs_split[0]:
        return None  # a run in a different order in two operands
    return GemmShape(tuple(batch), tuple(rows), tuple(cols), tuple(lhs_split[1]), lhs,
                     lhs_split[2], rhs_split[2])


def matrix_orders(a_dims: list[int], b_dims: list[int], c_dims: list[int], n_loops: int):
    """Dimension orders of A and B that make the contraction a (batched) GEMM, each input
    keeping its own order when it already fits; None when the result's order does not
    (batch, rows, cols)."""
    runs = _runs(a_dims, b_dims, c_dims, n_loops)
    if runs is None:
        return None
    batch, rows, cols, inner, lhs = runs
    lhs_dims, rhs_dims, lhs_split, rhs_split = _input_splits(a_dims, b_dims, runs)
    lhs_fits = lhs_split is not None and lhs_split[0] == rows
    rhs_fits = rhs_split is not None and rhs_split[1] == cols
    if lhs_fits:
        inner_order = lhs_split[1]
    elif rhs_fits:
        inner_order = rhs_split[0]
    else:
        inner_order = [d for d in lhs_dims if d in inner]
    if not (lhs_fits and lhs_split[1] == inner_order):
        lhs_dims = [*batch, *rows, *inner_order]
    if not (rhs_fits and rhs_split[0] == inner_order):
        rhs_dims = [*batch, *inner_order, *cols]
    return (lhs_dims, rhs_dims) if lhs == 0 else (rhs_dims, lhs_dims)


# -- rewriting ---------------------------------------------------------------------------------


def _operand_slice(value: ir.Value, block: ir.Block) -> tuple[list[ir.Operation], list[ir.BlockArgument]] | None:
    """The body ops ``value`` is computed by (in body order) and the input arguments they
    read; None if it reads the accumulator or anything but elementwise arith/math."""
    accumulator = len(block.arguments) - 1
    ops: list[ir.Operation] = []
    args: dict[int, ir.BlockArgument] = {}
    pending = [value]
    while pending:
        v = pending.pop()
        if isinstance(v.owner, ir.Block):
            if v.owner != block:
                continue  # an argument of an enclosing block: the clone reads it too
            arg = ir.BlockArgument(v)
            if arg.arg_number == accumulator:
                return None
            args[arg.arg_number] = arg
            continue
        producer = v.owner.operation
        if producer.block != block:
            continue  # defined above the generic: the clone reads it too
        if not producer.name.startswith(("arith.", "math.")) or len(producer.regions):
            return None
        if producer not in ops:
            ops.append(producer)
            pending += list(producer.operands)
    body = [o.operation for o in block.operations]
    return sorted(ops, key=body.index), [args[i] for i in sorted(args)]


def _loop_dims(amap: ir.AffineMap) -> list[int] | None:
    """The loops a map reads (constant results, a broadcast dimension, read none)."""
    dims = []
    for expr in amap.results:
        if isinstance(expr, ir.AffineDimExpr):
            dims.append(ir.AffineDimExpr(expr).position)
        elif not isinstance(expr, ir.AffineConstantExpr):
            return None
    return dims


def _factor_dims(args: list[ir.BlockArgument], maps: list[ir.AffineMap]) -> list[int]:
    """The loops a factor's arguments read, in the order its largest argument stores them
    (a layer norm's rows and features, not a transposed copy)."""
    dims: list[int] = []
    for arg in sorted(args, key=lambda a: -len(maps[a.arg_number].results)):
        dims += [d for d in _loop_dims(maps[arg.arg_number]) if d not in dims]
    return dims


def _materialized(op: ir.Operation, ops: list[ir.Operation], args: list[ir.BlockArgument], value: ir.Value,
                  dims: list[int], ranges: dict[int, int]) -> tuple[ir.Value, ir.AffineMap]:
    """``value`` of the body over the loops ``dims`` (those its arguments read), as a tensor
    of its own (an elementwise generic computing ``ops``), and the map through which the
    loops read it."""
    maps = indexing_maps(op)
    position = {d: i for i, d in enumerate(dims)}

    def renumbered(amap: ir.AffineMap) -> ir.AffineMap:
        return ir.AffineMap.get(len(dims), 0, [
            ir.AffineDimExpr.get(position[ir.AffineDimExpr(e).position]) if isinstance(e, ir.AffineDimExpr) else e
            for e in amap.results])

    def body(*arguments: ir.Value) -> ir.Value:
        cloned = dict(zip(args, arguments))
        for body_op in ops:
            clone = ir.Operation.create(
                body_op.name, results=[r.type for r in body_op.results],
                operands=[cloned.get(v, v) for v in body_op.operands],
                attributes={name: body_op.attributes[name] for name in body_op.attributes})
            cloned.update(zip(body_op.results, clone.results))
        return cloned[value]

    shape = [ranges[d] for d in dims]
    factor = linalg_generic(
        [op.operands[a.arg_number] for a in args], tensor.EmptyOp(shape, value.type).result,
        [renumbered(maps[a.arg_number]) for a in args] + [ir.AffineMap.get_identity(len(dims))],
        iterator_types(["parallel"] * len(dims)), body)
    return factor, ir.AffineMap.get(maps[0].n_dims, 0, [ir.AffineDimExpr.get(d) for d in dims])


def _unfused_operands(op: ir.Operation, min_volume: int) -> ir.Operation:
    """A product into which fusion pulled its operands' producers (``out + f(x..) * g(w..)``:
    a layer norm, a bf16 -> f32 conversion, after a reshape of its result folded the named
    contraction back into a generic) computes ``f`` and ``g`` in elementwise generics of
    their own again and multiplies their results, when that makes it a GEMM worth BLAS;
    other ops are returned as they are."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return op
    block = op.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    if len(body) < 4 or [o.name for o in body[-3:]] != ["arith.mulf", "arith.addf", "linalg.yield"]:
        return op
    mul, add, done = body[-3:]
    out = block.arguments[len(block.arguments) - 1]
    if set(add.operands) != {mul.results[0], out} or list(done.operands) != [add.results[0]]:
        return op
    slices = [_operand_slice(v, block) for v in mul.operands]
    if any(s is None or not s[1] for s in slices) or not any(ops for ops, _ in slices):
        return op
    if [o for o in body[:-3] if not any(o in ops for ops, _ in slices)]:
        return op  # body ops neither factor needs
    maps = indexing_maps(op)
    if any(_loop_dims(m) is None for m in maps) \
            or not all(isinstance(v.type, ir.RankedTensorType) and v.type.has_static_shape for v in op.operands):
        return op
    dims = [_factor_dims(args, maps) for _, args in slices]
    dims.append(map_dims(maps[-1]))
    ranges = loop_ranges(op)
    if dims[2] is None or math.prod(ranges.values()) < min_volume:
        return op
    if classify(*dims, n_loops=maps[0].n_dims) is None and matrix_orders(*dims, n_loops=maps[0].n_dims) is None:
        return op  # no transposed copy makes it a GEMM either
    with ir.InsertionPoint(op), op.location:
        factors = [_materialized(op, ops, args, v, factor_dims, ranges) if ops
                   else (op.operands[args[0].arg_number], maps[args[0].arg_number])
                   for (ops, args), v, factor_dims in zip(slices, mul.operands, dims)]
        product = linalg_generic([v for v, _ in factors], op.operands[-1], [m for _, m in factors] + [maps[-1]],
                                 op.attributes["iterator_types"],
                                 lambda a, b, acc: arith.addf(acc, arith.mulf(a, b))).owner.operation
    op.results[0].replace_all_uses_with(product.results[0])
    op.erase()
    return product


def _rewrite(op: ir.Operation, shape: GemmShape, transposed=None) -> list[ir.Operation]:
    """Replace the generic by a tagged linalg.contract (lhs operand first) with the same maps;
    ``transposed`` (from ``_result_transposed``): the contract computes what the generic's
    transposing user did, into a new accumulator, and replaces that user too. Returns the
    ops left dead, users first, for the caller to erase once its walk is done."""
    maps = indexing_maps(op)
    order = (0, 1) if shape.lhs == 0 else (1, 0)
    init, replaced = op.operands[2], op
    if transposed is not None:
        init, out_map, replaced = transposed
        maps[2] = out_map
    with ir.InsertionPoint(op), op.location:
        product = linalg.contract(
            op.operands[order[0]], op.operands[order[1]], outs=[init],
            indexing_maps=[maps[order[0]], maps[order[1]], maps[2]],
        )
        product.owner.attributes[BLAS_TAG] = ir.UnitAttr.get()
    replaced.results[0].replace_all_uses_with(product)
    return [replaced, op] if replaced != op else [op]


def _result_transposed(op: ir.Operation, dims, min_volume: int):
    """When the contraction's only user transposes its result and its accumulator is a
    +0.0 fill, the matrix view of computing the transposed result directly (BLAS:
    ``C^T = B^T A^T``) and what ``_rewrite`` needs for it; None otherwise. A dense
    layer's weight gradient comes out of JAX as such a product and transpose."""
    uses = list(op.results[0].uses)
    fill = zero_fill_of(op.operands[2])
    if len(uses) != 1 or fill is None:
        return None
    user = uses[0].owner.operation
    transposed = _transposed_from(user.results[0]) if len(user.results) == 1 else None
    if transposed is None or transposed[0] != op.results[0]:
        return None
    a_dims, b_dims, c_dims, n_loops = dims
    d_dims = [0] * len(c_dims)
    for k, d in enumerate(transposed[1]):  # the user's dim d is the product's dim k
        d_dims[d] = c_dims[k]
    shape = classify(a_dims, b_dims, d_dims, n_loops)
    if shape is None or _volume(op, shape) < min_volume:
        return None
    result_type = ir.RankedTensorType(user.results[0].type)
    with ir.InsertionPoint(op), op.location:
        empty = tensor.EmptyOp(result_type.shape, result_type.element_type)
        zero = linalg.fill(fill.operands[0], outs=[empty.result])
    out_map = ir.AffineMap.get(n_loops, 0, [ir.AffineDimExpr.get(d) for d in d_dims])
    return shape, (zero if isinstance(zero, ir.Value) else zero.results[0], out_map, user)


def _reassociation(groups: list[list[int]]) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, i) for i in g]) for g in groups])


def _pair(op: ir.Operation, name: str) -> list[int]:
    if name not in op.attributes:
        return [1, 1]
    return [int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])]


def _im2col_nhwc(op: ir.Operation) -> None:
    """NHWC x HWCF convolution -> patches[n, oh, ow, kh, kw, c] (a copy whose inner loop
    reads C contiguous channels, which xhlo-vectorize vectorizes) times the filter
    as a [N*OH*OW, KH*KW*C] x [KH*KW*C, F] contraction tagged for BLAS."""
    image, filt, out = op.operands
    n, oh, ow, f = ir.RankedTensorType(out.type).shape
    kh, kw, c, _ = ir.RankedTensorType(filt.type).shape
    elem = ir.RankedTensorType(out.type).element_type
    (sh, sw), (dh, dw) = _pair(op, "strides"), _pair(op, "dilations")
    d = [ir.AffineDimExpr.get(i) for i in range(6)]
    read = ir.AffineMap.get(6, 0, [d[0], d[1] * sh + d[3] * dh, d[2] * sw + d[4] * dw, d[5]])
    with ir.InsertionPoint(op), op.location:
        empty = tensor.EmptyOp([n, oh, ow, kh, kw, c], elem).result
        patches = linalg_generic([image], empty, [read, ir.AffineMap.get_identity(6)],
                                 iterator_types(["parallel"] * 6), lambda pixel, _: pixel)
        rows, inner = n * oh * ow, kh * kw * c
        columns = tensor.collapse_shape(ir.RankedTensorType.get([rows, inner], elem), patches,
                                        _reassociation([[0, 1, 2], [3, 4, 5]]))
        matrix = tensor.collapse_shape(ir.RankedTensorType.get([inner, f], elem), filt, _reassociation([[0, 1, 2], [3]]))
        acc = tensor.collapse_shape(ir.RankedTensorType.get([rows, f], elem), out, _reassociation([[0, 1, 2], [3]]))
        m, nn, k = (ir.AffineDimExpr.get(i) for i in range(3))
        product = linalg.contract(columns, matrix, outs=[acc], indexing_maps=[
            ir.AffineMap.get(3, 0, [m, k]), ir.AffineMap.get(3, 0, [k, nn]), ir.AffineMap.get(3, 0, [m, nn])])
        product.owner.attributes[BLAS_TAG] = ir.UnitAttr.get()
        result = tensor.expand_shape(ir.RankedTensorType(out.type), product, _reassociation([[0, 1, 2], [3]]),
                                     [], [n, oh, ow, f])
    op.results[0].replace_all_uses_with(result)
    op.erase()


def _direct_conv(op: ir.Operation) -> bool:
    """An NHWC x HWCF f32 convolution of at most ``DIRECT_CONV_MAX_CHANNELS`` input
    channels and whole vectors of as many features, or of one channel and one feature
    at unit width stride: its im2col matrix (kh*kw*c columns) is kh*kw times the image
    (the 7x7 stem convolution of RGB images: 59 MB of patches from 5 MB), written and
    read again, and BLAS runs a product of few columns or 64-128 features below speed.
    ``xhlo-lower-direct-convolutions`` reads the image in place instead (3x3 over
    8x112x112x32: 16.3 -> 6.2 ms; 8x56x56x64: 10.3 -> 8.2)."""
    image, filt, out = (ir.RankedTensorType(v.type) for v in op.operands)
    if not all(isinstance(t.element_type, ir.F32Type) for t in (image, filt, out)):
        return False
    kh, kw, c, f = filt.shape
    if c == f == 1:  # one channel, one feature (jnp.convolve): vectors of neighbouring pixels
        return _pair(op, "strides")[1] == 1 and out.shape[2] >= 16 and kh * kw > 1
    return c <= DIRECT_CONV_MAX_CHANNELS and f <= DIRECT_CONV_MAX_CHANNELS and f % 16 == 0 and kh * kw > 1


def is_positive_zero(value: ir.Value) -> bool:
    """A constant +0.0 (not -0.0: a fill of it is no zero start) or integer 0."""
    constant = defining_op(value)
    if constant is None or constant.name != "arith.constant":
        return False
    attr = constant.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value == 0
    if not isinstance(attr, ir.FloatAttr):
        return False
    number = ir.FloatAttr(attr).value
    return number == 0.0 and math.copysign(1.0, number) > 0


def zero_fill_of(value: ir.Value) -> ir.Operation | None:
    """The ``linalg.fill`` of +0.0 (or integer 0) that defines ``value``, or None."""
    fill = defining_op(value)
    return fill if fill is not None and fill.name == "linalg.fill" and is_positive_zero(fill.operands[0]) else None


def _tag_zero_init(contraction: ir.Operation) -> bool:
    """Tag the +0.0 fill a BLAS-bound contraction accumulates into (through reshapes), so
    xhlo-vectorize leaves it to xhlo-gemm-to-blas, which drops it for a call with beta = 0.

    A fill behind reshapes (im2col's view of the convolution's output) is replaced by a
    fill of the contraction's own shape: canonicalization would move the reshapes
    before the fill, making a new, untagged fill that a vectorized loop then writes
    (conv2d's output written twice)."""
    init = contraction.operands[2]
    while (op := defining_op(init)) is not None and op.name in RESHAPES:
        init = op.operands[0]
    fill = zero_fill_of(init)
    if fill is None or len(list(init.uses)) != 1:
        return False
    if init != contraction.operands[2]:
        with ir.InsertionPoint(contraction), contraction.location:
            shaped = ir.RankedTensorType(contraction.operands[2].type)
            empty = tensor.EmptyOp(shaped.shape, shaped.element_type).result
            contraction.operands[2] = linalg.fill(fill.operands[0], outs=[empty])
        fill = defining_op(contraction.operands[2])
    fill.attributes[BLAS_TAG] = ir.UnitAttr.get()
    return True


def _exact_reciprocal(value: float) -> float | None:
    """1 / value when it is exact in every float type (value a power of two near 1)."""
    mantissa, exponent = math.frexp(value)
    return 1.0 / value if abs(mantissa) == 0.5 and -100 < exponent < 100 else None


def _scale_of(op: ir.Operation) -> float | None:
    """``c`` when ``op`` is an elementwise ``x * c`` or ``x / c`` (c a constant, 1/c exact)
    over one identity-mapped input, else None."""
    if op.name != "linalg.generic" or len(op.operands) != 2 or len(op.results) != 1:
        return None
    maps = indexing_maps(op)
    if not maps[0].is_permutation or any(str(m) != str(maps[0]) for m in maps) \
            or not all("parallel" in str(it) for it in op.attributes["iterator_types"]):
        return None
    body = list(op.regions[0].blocks[0].operations)
    if len(body) != 2 or body[0].name not in ("arith.mulf", "arith.divf") or body[1].name != "linalg.yield" \
            or body[1].operands[0] != body[0].result:
        return None
    x, y = body[0].operands
    block_input = op.regions[0].blocks[0].arguments[0]
    if body[0].name == "arith.mulf" and y == block_input:
        x, y = y, x
    constant = defining_op(y)
    if x != block_input or constant is None or constant.name != "arith.constant" \
            or not isinstance(constant.attributes["value"], ir.FloatAttr):
        return None
    value = ir.FloatAttr(constant.attributes["value"]).value
    return value if body[0].name == "arith.mulf" else _exact_reciprocal(value)


def _fold_scale(contraction: ir.Operation) -> None:
    """``(A B) * c`` (or ``/ c``) as the contraction's only use becomes ``alpha = c`` on the
    BLAS call (``xhlo.blas_alpha``): one pass over the product fewer. Only for a zero
    initial value (alpha does not scale what the product accumulates into)."""
    result = contraction.results[0]
    uses = list(result.uses)
    if len(uses) != 1:
        return
    scale_op = uses[0].owner.operation
    scale = _scale_of(scale_op)
    if scale is None or scale_op.operands[0] != result or scale_op.results[0].type != result.type:
        return
    contraction.attributes[BLAS_ALPHA] = ir.FloatAttr.get(ir.F64Type.get(), scale)
    scale_op.results[0].replace_all_uses_with(result)
    scale_op.erase()


def _set_input(op: ir.Operation, k: int, value: ir.Value, dims: list[int], n_loops: int) -> None:
    """Make input ``k`` of ``op`` read ``value`` with loop dims ``dims``."""
    maps = list(op.attributes["indexing_maps"])
    maps[k] = ir.AffineMapAttr.get(ir.AffineMap.get(n_loops, 0, [ir.AffineDimExpr.get(d) for d in dims]))
    op.operands[k] = value
    op.attributes["indexing_maps"] = ir.ArrayAttr.get(maps)


def _transposed_from(value: ir.Value):
    """``(x, dims)`` when ``value`` is a transposed copy of ``x`` (``linalg.transpose`` or
    the ``linalg.generic`` the StableHLO lowering makes of one): ``x``'s dim k is
    ``value``'s dim ``dims[k]``. None otherwise."""
    producer = defining_op(value)
    if producer is None:
        return None
    if producer.name == "linalg.transpose":
        permutation = list(ir.DenseI64ArrayAttr(producer.attributes["permutation"]))
        return producer.operands[0], [permutation.index(k) for k in range(len(permutation))]
    if producer.name != "linalg.generic" or len(producer.operands) != 2:
        return None
    source_dims, result_dims = (map_dims(ir.AffineMapAttr(a).value) for a in producer.attributes["indexing_maps"])
    body = [o.operation for o in producer.regions[0].blocks[0].operations]
    if source_dims is None or result_dims != list(range(len(result_dims))) or sorted(source_dims) != result_dims:
        return None
    if len(body) != 1 or list(body[0].operands) != [producer.regions[0].blocks[0].arguments[0]]:
        return None  # not just ``linalg.yield %in``
    return producer.operands[0], source_dims


def _fold_transposes(op: ir.Operation, dims):
    """Read through transposed copies of the inputs when BLAS takes the source as it is
    (a transposed-operand flag): ``g @ W.T`` then costs no copy of ``W``, as with XLA's
    TransposeFolding. Returns the contraction's dims afterwards."""
    a_dims, b_dims, c_dims, n_loops = dims
    inputs = [a_dims, b_dims]
    for k in (0, 1):
        transposed = _transposed_from(op.operands[k])
        if transposed is None:
            continue
        source, source_dims = transposed
        folded = [inputs[k][d] for d in source_dims]
        trial = [folded if j == k else inputs[j] for j in (0, 1)]
        if classify(*trial, c_dims, n_loops) is not None:
            _set_input(op, k, source, folded, n_loops)
            inputs = trial
    return (*inputs, c_dims, n_loops)


def _transpose_into_matrices(op: ir.Operation, dims, copy_worth: int) -> bool:
    """Give the inputs no matrix view fits a transposed copy that one does, when the
    product takes at least ``copy_worth`` multiply-adds per element copied; True if done.

    Fusion folds transposes and reshapes next to a contraction into its indexing
    maps: attention merging its heads (``[b, h, q, d] -> [b, q, h*d]``) before the
    output projection leaves a contraction over ``(h, d)`` whose lhs interleaves
    rows and inner loops. A copy is what XLA's layout assignment inserts too.
    """
    a_dims, b_dims, c_dims, n_loops = dims
    orders = matrix_orders(a_dims, b_dims, c_dims, n_loops)
    if orders is None:
        return False
    ranges = loop_ranges(op)
    moved = [k for k, (old, new) in enumerate(zip((a_dims, b_dims), orders)) if old != new]
    copied = sum(math.prod(ranges[d] for d in orders[k]) for k in moved)
    if not moved or copied * copy_worth > math.prod(ranges.values()):
        return False
    for k in moved:
        old, new = (a_dims, b_dims)[k], orders[k]
        value = op.operands[k]
        with ir.InsertionPoint(op), op.location:
            init = tensor.EmptyOp([ranges[d] for d in new], ir.RankedTensorType(value.type).element_type)
            copy = linalg.transpose(value, outs=[init.result], permutation=[old.index(d) for d in new])
        _set_input(op, k, copy if isinstance(copy, ir.Value) else copy.results[0], new, n_loops)
    return True


def _full_slice_attributes(shape: list[int], segments: list[int]) -> dict:
    return {
        "static_offsets": ir.DenseI64ArrayAttr.get([0] * len(shape)),
        "static_sizes": ir.DenseI64ArrayAttr.get(shape),
        "static_strides": ir.DenseI64ArrayAttr.get([1] * len(shape)),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get(segments),
    }


def _drop_unit_loops(op: ir.Operation, dims) -> tuple | None:
    """Rewrite the contraction in place without its one-long loops and return its new dims
    (None if it has none). Operands with unit dims are read through rank-reducing full
    slices and the result is inserted into a tensor of its old shape: slices, unlike
    reshapes, are not folded back into the op by the fusion that follows. JAX's attention
    (``dot_product_attention``) puts a unit dim between the batch dims of the
    probabilities: no matrix view fitted, and the product stayed loops over strided
    values (7.5x XLA's time)."""
    ranges = loop_ranges(op)
    unit = {d for d, size in ranges.items() if size == 1}
    if not unit or len(unit) == len(ranges):
        return None
    renumber = {d: i for i, d in enumerate(d for d in range(dims[3]) if d not in unit)}
    new_dims = [[renumber[d] for d in operand if d not in unit] for operand in dims[:3]]
    result = op.results[0]
    with ir.InsertionPoint(op), op.location:
        for k, (value, operand_dims) in enumerate(zip(list(op.operands), dims[:3])):
            if not unit & set(operand_dims):
                continue
            value_type = ir.RankedTensorType(value.type)
            kept = [value_type.shape[i] for i, d in enumerate(operand_dims) if d not in unit]
            op.operands[k] = ir.Operation.create(
                "tensor.extract_slice", results=[ir.RankedTensorType.get(kept, value_type.element_type)],
                operands=[value], attributes=_full_slice_attributes(list(value_type.shape), [1, 0, 0, 0]),
            ).results[0]
    op.attributes["indexing_maps"] = ir.ArrayAttr.get([
        ir.AffineMapAttr.get(ir.AffineMap.get(len(renumber), 0, [ir.AffineDimExpr.get(d) for d in operand]))
        for operand in new_dims])
    iterators = list(op.attributes["iterator_types"])
    op.attributes["iterator_types"] = ir.ArrayAttr.get([it for d, it in enumerate(iterators) if d not in unit])
    full_type = ir.RankedTensorType(result.type)
    result.set_type(op.operands[2].type)
    with ir.InsertionPoint.after(op), op.location:
        empty = tensor.EmptyOp(list(full_type.shape), full_type.element_type).result
        inserted = ir.Operation.create(
            "tensor.insert_slice", results=[full_type], operands=[result, empty],
            attributes=_full_slice_attributes(list(full_type.shape), [1, 1, 0, 0, 0]),
        ).results[0]
    result.replace_all_uses_except(inserted, inserted.owner.operation)
    return (*new_dims, len(renumber))


def _volume(op: ir.Operation, shape: GemmShape) -> int:
    ranges = loop_ranges(op)
    return math.prod(ranges[d] for d in (*shape.rows, *shape.cols, *shape.inner))


def _apply(module: ir.Operation, script: str) -> None:
    from torch_mlir.dialects.transform import interpreter

    transform = ir.Module.parse(script)
    interpreter.apply_named_sequence(module, transform.body.operations[0], transform)


def _tag_and_apply(module: ir.Operation, ops: list[ir.Operation], tag: str, script: str) -> None:
    """Apply ``script`` to each op in turn, the op its payload root (its match walks the op,
    not the module: once per op, that was quadratic in the program's size); an op the
    transform rejects stays as it is. One walk at the end removes the tags."""
    if not ops:
        return
    handler = module.context.attach_diagnostic_handler(lambda diagnostic: True)
    try:
        for op in ops:
            op.attributes[tag] = ir.UnitAttr.get()
            try:
                _apply(op, script)
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
    im2col: bool = True  # also rewrite 2-D convolutions into im2col matmuls
    # multiply-adds an input's transposed copy must buy per element copied: copying one
    # (8 bytes read and written at ~33 GB/s) takes as long as ~30 multiply-adds at BLAS's peak
    copy_worth: int = 32

    def run(self, module: ir.Operation) -> None:
        from xhlo import blas

        if not blas.available():
            return
        if self.im2col:
            convs = [op for op in walk_ops(module, CONVOLUTIONS)
                     if DIRECT_CONV_TAG not in op.attributes and self._conv_worth_it(op)]
            others = [op for op in convs if op.name != "linalg.conv_2d_nhwc_hwcf"]
            for op in convs:
                if op.name != "linalg.conv_2d_nhwc_hwcf":
                    continue
                if _direct_conv(op):  # xhlo-lower-direct-convolutions computes it
                    op.attributes[DIRECT_CONV_TAG] = ir.UnitAttr.get()
                    op.attributes[BLAS_TAG] = ir.UnitAttr.get()  # xhlo-vectorize leaves it
                    _tag_zero_init(op)
                else:
                    _im2col_nhwc(op)
            _tag_and_apply(module, others, "xhlo.im2col", _IM2COL)
        named = [op for op in walk_ops(module, ("linalg.matmul", "linalg.batch_matmul"))
                 if BLAS_TAG not in op.attributes and all(_float_element(v.type) for v in op.operands)]
        _tag_and_apply(module, named, "xhlo.generalize", _GENERALIZE)
        dead: list[ir.Operation] = []  # erased after the walk: it may still hold them
        for op in walk_ops(module, "linalg.generic"):
            op = _unfused_operands(op, self.min_volume)
            if not all(_float_element(v.type) for v in op.operands):
                continue
            if len({_float_element(v.type) for v in op.operands}) != 1:
                continue
            dims = contraction_dims(op)
            if dims is None or math.prod(loop_ranges(op).values()) < self.min_volume:
                continue
            if classify(*dims) is None:
                dims = _drop_unit_loops(op, dims) or dims
            dims = _fold_transposes(op, dims)
            folded = _result_transposed(op, dims, self.min_volume)
            if folded is not None:
                dead += _rewrite(op, *folded)
                continue
            shape = classify(*dims)
            if shape is None and _transpose_into_matrices(op, dims, self.copy_worth):
                shape = gemm_shape(op)
            if shape is not None and _volume(op, shape) >= self.min_volume:
                dead += _rewrite(op, shape)
        for op in dead:
            op.erase()
        for op in walk_ops(module, "linalg.contract"):
            if BLAS_TAG in op.attributes and _tag_zero_init(op) and BLAS_ALPHA not in op.attributes:
                _fold_scale(op)

    def _conv_worth_it(self, op: ir.Operation) -> bool:
        """Float convolution whose im2col product has at least ``min_volume`` multiply-adds."""
        types = [v.type for v in op.operands]
        if not all(_float_element(t) for t in types) or len({str(t.element_type) for t in types}) != 1:
            return False
        out = ir.RankedTensorType(types[2]).shape
        features = out[1] if op.name == "linalg.conv_2d_nchw_fchw" else out[-1]
        filter_size = math.prod(ir.RankedTensorType(types[1]).shape)
        return math.prod(out) * filter_size // features >= self.min_volume

"""xhlo-gemm-to-blas: contractions tagged ``xhlo.blas`` on buffers become sgemm/dgemm calls.

``xhlo-prepare-gemms`` leaves every contraction worth a BLAS call as a
``linalg.contract`` tagged ``xhlo.blas``, the operand holding the result's rows
first. After bufferization this pass views each operand as a (batch of)
row-major matrices: a run of loop dimensions (rows, columns, reduction) is one
matrix dimension when the buffer's strides let it collapse, and the matrix is
transposed for BLAS when its reduction run is not the contiguous one. The op
becomes ``cblas_?gemm`` calls, one per batch element in nested ``scf.for``
loops, on the buffers' addresses and row strides, with ``beta = 1`` so the
call accumulates into the output exactly as the linalg op does. Batch
dimensions whose strides nest become one ``cblas_?gemm_batch_strided`` call
when the matrices are small (OpenBLAS runs a call per thread instead of
splitting each small product). When the +0.0 fill ``xhlo-prepare-gemms``
tagged, of the same buffer, precedes the contraction in its block and nothing
between them reads or writes that buffer (or a view of it), the fill is
dropped and the call gets ``beta = 0``; a scale
``xhlo-prepare-gemms`` folded into the contraction (``xhlo.blas_alpha``) is
the call's ``alpha``, or an ``out *= alpha`` loop after a contraction that
keeps its loops. The library
is OpenBLAS from the ``scipy-openblas32`` wheel (``xhlo.blas``), which runs
its own threads; the ExecutionEngine loads it (``xhlo.blas.shared_libs_for``).

A contraction whose buffers have dynamic strides or do not collapse into
matrices (a strided view), or a program compiled without the BLAS wheel, keeps
its loop lowering. Most products of few rows never get here: ``xhlo-lower-small-gemms``,
which runs first, turns them into register-blocked loops on the same matrix views.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

from xhlo import blas
from xhlo._mlir import arith, ir, memref, scf
from xhlo.executable import SCRATCH_ATTR

from .base import MEMREF_VIEWS, ModulePass, defining_op, walk_ops
from .prepare_gemms import (
    BLAS_ALPHA,
    BLAS_TAG,
    RESHAPES,
    GemmShape,
    blas_alpha,
    classify,
    is_positive_zero,
)

_ELEMENT_BYTES = {"f32": 4, "f64": 8}
_DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset()
_INT32_MAX = 2**31 - 1
# Multiply-adds per matrix up to which one strided batch call (OpenBLAS spreads the matrices
# over its threads) beats a threaded call per matrix: 32 x 256x256x64 2.1 -> 1.2 ms, but
# 3 x 512^3 is 8% slower batched.
BATCH_MAX_VOLUME = 1 << 25


def _ptr_type() -> ir.Type:
    return ir.Type.parse("!llvm.ptr")


def _gemm_inputs(float_type: ir.Type, batched: bool) -> list[ir.Type]:
    """cblas_?gemm's parameters; the strided batch call adds a stride after each matrix and a count."""
    i32, ptr = ir.IntegerType.get_signless(32), _ptr_type()
    matrix = [ptr, i32, i32] if batched else [ptr, i32]
    return [i32] * 6 + [float_type, *matrix, *matrix, float_type, *matrix] + ([i32] if batched else [])


def declare_external(module: ir.Operation, symbol: str, inputs: list[ir.Type], results: list[ir.Type] = ()) -> None:
    """``func.func private @symbol(inputs) -> results`` at the top of the module, once."""
    body = module.regions[0].blocks[0]
    for op in body.operations:
        attrs = op.operation.attributes
        if "sym_name" in attrs and ir.StringAttr(attrs["sym_name"]).value == symbol:
            return
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        ir.Operation.create(
            "func.func",
            attributes={
                "sym_name": ir.StringAttr.get(symbol),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get(inputs, list(results))),
                "sym_visibility": ir.StringAttr.get("private"),
            },
            regions=1,
        )


@dataclasses.dataclass(frozen=True)
class _Run:
    """A run of loop dimensions of one operand as one matrix dimension."""

    size: int
    stride: int  # elements between consecutive indices (1 for size 1)


def _collapse(sizes: list[int], strides: list[int]) -> _Run | None:
    """Dimensions (outermost first) as one dimension, None if their strides do not nest."""
    kept = [(size, stride) for size, stride in zip(sizes, strides) if size != 1]
    if not kept:
        return _Run(1, 1)
    for (_, outer), (size, inner) in itertools.pairwise(kept):
        if outer != inner * size:
            return None
    return _Run(math.prod(size for size, _ in kept), kept[-1][1])


def _run(dims: list[int], run: tuple[int, ...], shape: list[int], strides: list[int]) -> _Run | None:
    """The run's dimensions of the buffer as one dimension, None if they do not collapse."""
    positions = [dims.index(d) for d in run]
    return _collapse([shape[p] for p in positions], [strides[p] for p in positions])


@dataclasses.dataclass(frozen=True)
class Matrix:
    """One operand as BLAS sees it: ``major`` x ``minor`` with unit minor stride."""

    value: ir.Value
    major: _Run
    minor: _Run
    transposed: bool
    batch_strides: tuple[int, ...]

    @property
    def leading_dimension(self) -> int:
        return self.major.stride if self.major.size > 1 else max(1, self.minor.size)


def _matrix(value: ir.Value, dims: list[int], first: tuple[int, ...], second: tuple[int, ...],
            batch: tuple[int, ...]) -> Matrix | None:
    """View ``value`` as rows ``first`` x columns ``second`` (or transposed), unit stride inside a row."""
    t = ir.MemRefType(value.type)
    strides, _ = t.get_strides_and_offset()
    shape = list(t.shape)
    if _DYNAMIC in strides:
        return None
    a, b = _run(dims, first, shape, strides), _run(dims, second, shape, strides)
    if a is None or b is None:
        return None
    batch_strides = tuple(strides[dims.index(d)] for d in batch)
    for major, minor, transposed in ((a, b, False), (b, a, True)):
        if minor.size == 1 or minor.stride == 1:
            matrix = Matrix(value, major, minor, transposed, batch_strides)
            if matrix.leading_dimension >= max(1, minor.size):
                return matrix
    return None


def _i32(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), value)


def index_constant(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _base_address(value: ir.Value, element_bytes: int) -> ir.Value:
    """Address (index) of the buffer's first element: aligned pointer + offset."""
    metadata = memref.ExtractStridedMetadataOp(value)
    address = memref.extract_aligned_pointer_as_index(value)
    return arith.addi(address, arith.muli(metadata.results[1], index_constant(element_bytes)))


def pointer(base: ir.Value, element_bytes: int, batch_offset: ir.Value | None) -> ir.Value:
    """``base`` + ``batch_offset`` elements, as an !llvm.ptr."""
    address = base if batch_offset is None else arith.addi(base, arith.muli(batch_offset, index_constant(element_bytes)))
    as_i64 = arith.index_cast(ir.IntegerType.get_signless(64), address)
    return ir.Operation.create("llvm.inttoptr", results=[_ptr_type()], operands=[as_i64]).result


def _operand_dims(op: ir.Operation) -> list[list[int]]:
    return [[ir.AffineDimExpr(e).position for e in ir.AffineMapAttr(a).value.results]
            for a in op.attributes["indexing_maps"]]


def batch_offset(mat: Matrix, batch_index: list[ir.Value]) -> ir.Value | None:
    """Elements from ``mat``'s first matrix to the one at ``batch_index`` (None: no batch)."""
    offset = None
    for iv, stride in zip(batch_index, mat.batch_strides):
        step = arith.muli(iv, index_constant(stride))
        offset = step if offset is None else arith.addi(offset, step)
    return offset


def matrix_plan(op: ir.Operation) -> tuple[GemmShape, list[Matrix], list[int]] | None:
    """The contraction's loops, its lhs, rhs and result as (batches of) matrices, and the
    batch sizes; None when a buffer is no such matrix (dynamic strides, a strided view)."""
    dims = _operand_dims(op)
    n_loops = ir.AffineMapAttr(op.attributes["indexing_maps"][0]).value.n_dims
    shape = classify(*dims, n_loops=n_loops)
    if shape is None:
        return None
    lhs, rhs = (0, 1) if shape.lhs == 0 else (1, 0)
    matrices = [
        _matrix(op.operands[lhs], dims[lhs], shape.rows, shape.inner, shape.batch),
        _matrix(op.operands[rhs], dims[rhs], shape.inner, shape.cols, shape.batch),
        _matrix(op.operands[2], dims[2], shape.rows, shape.cols, shape.batch),
    ]
    if any(m is None for m in matrices) or matrices[2].transposed:
        return None
    out_shape = ir.MemRefType(op.operands[2].type).shape
    batch_sizes = [out_shape[dims[2].index(d)] for d in shape.batch]
    return shape, matrices, batch_sizes


def _is_arena(value: ir.Value) -> bool:
    """``value`` is the scratch arena argument ``xhlo-scratch-arena`` gave a function."""
    if not isinstance(value, ir.BlockArgument):
        return False
    func = value.owner.owner
    return SCRATCH_ATTR in func.attributes and value.arg_number == len(value.owner.arguments) - 1


def _root(buffer: ir.Value) -> ir.Value:
    """The function argument, allocation or scratch arena slot a memref views. A slot is a
    buffer of its own: the arena gives its bytes to no other buffer live at the same time."""
    while (view := defining_op(buffer)) is not None and view.name in MEMREF_VIEWS \
            and not (view.name == "memref.view" and _is_arena(view.operands[0])):
        buffer = view.operands[0]
    return buffer


def _touching_ops(root: ir.Value) -> list[ir.Operation]:
    """The ops that use ``root`` or a view of it, other than the views themselves."""
    values, touching = [root], []
    while values:
        for use in values.pop().uses:
            user = use.owner.operation
            if use.operand_number or user.name not in MEMREF_VIEWS:
                touching.append(user)
            else:
                values.append(user.results[0])
    return touching


def _ancestor_in(block: ir.Block, op: ir.Operation) -> ir.Operation | None:
    """``op`` or the op enclosing it that sits in ``block`` (None if neither does)."""
    while op is not None and op.name != "builtin.module":
        if op.block == block:
            return op
        op = op.parent.operation if op.parent is not None else None
    return None


def zero_fill_before(op: ir.Operation) -> ir.Operation | None:
    """The tagged +0.0 fill of the contraction's whole output buffer before it in its block,
    when nothing between them reads or writes that buffer (views, reshapes, constants and
    ops on other buffers may sit between: the padded copy of a convolution's input), or None."""
    buffer = op.operands[2]
    while (reshape := defining_op(buffer)) is not None and reshape.name in RESHAPES:
        buffer = reshape.operands[0]
    op, block = op.operation, op.operation.block
    fill = None
    for use in buffer.uses:
        user = use.owner.operation
        if user.name == "linalg.fill" and user.block == block and user.is_before_in_block(op) \
                and (fill is None or fill.is_before_in_block(user)):
            fill = user
    if fill is None or BLAS_TAG not in fill.attributes or fill.operands[1] != buffer or not is_positive_zero(fill.operands[0]):
        return None
    for user in _touching_ops(_root(buffer)):
        between = _ancestor_in(block, user)
        if between is not None and fill.is_before_in_block(between) and between.is_before_in_block(op):
            return None
    return fill


def _batch_split(batch_sizes: list[int], matrices: tuple[Matrix, ...], volume: int) -> tuple[int, list[_Run]] | None:
    """``(k, runs)`` when batch dimensions ``k..`` of every operand collapse into one strided
    batch (``runs[i]``: operand i's matrices, count and stride) worth one batch call."""
    if volume > BATCH_MAX_VOLUME:
        return None
    for k in range(len(batch_sizes)):
        runs = [_collapse(batch_sizes[k:], list(mat.batch_strides[k:])) for mat in matrices]
        if all(runs) and runs[0].size > 1 and all(run.stride <= _INT32_MAX for run in runs):
            return k, runs
    return None


def _rewrite(module: ir.Operation, op: ir.Operation) -> bool:
    float_type = ir.MemRefType(op.operands[2].type).element_type
    if str(float_type) not in blas.GEMM_SYMBOLS \
            or any(ir.MemRefType(v.type).element_type != float_type for v in op.operands):
        return False
    planned = matrix_plan(op)
    if planned is None:
        return False
    _, (lhs, rhs, out), batch_sizes = planned
    m, n = out.major.size, out.minor.size
    k = lhs.minor.size if not lhs.transposed else lhs.major.size
    element_bytes = _ELEMENT_BYTES[str(float_type)]
    zero_fill = zero_fill_before(op)
    scale = blas_alpha(op)
    if zero_fill is None and scale != 1.0:  # alpha must not scale what C held: keep the loops
        return False
    split = _batch_split(batch_sizes, (lhs, rhs, out), m * n * k)
    symbols = blas.GEMM_SYMBOLS if split is None else blas.BATCHED_GEMM_SYMBOLS
    symbol = symbols[str(float_type)]
    declare_external(module, symbol, _gemm_inputs(float_type, split is not None))
    with ir.InsertionPoint(op), op.location:
        fixed = [
            _i32(blas.ROW_MAJOR), _i32(blas.TRANS if lhs.transposed else blas.NO_TRANS),
            _i32(blas.TRANS if rhs.transposed else blas.NO_TRANS), _i32(m), _i32(n), _i32(k),
        ]
        alpha = arith.constant(float_type, scale)
        beta = arith.constant(float_type, 0.0) if zero_fill is not None else alpha  # alpha is 1 then
        leading = [_i32(mat.leading_dimension) for mat in (lhs, rhs, out)]
        batch_strides = [[_i32(run.stride)] for run in split[1]] if split else [[], [], []]
        bases = [_base_address(mat.value, element_bytes) for mat in (lhs, rhs, out)]

        def emit(batch_index: list[ir.Value]) -> None:
            pointers = []
            for mat, base in zip((lhs, rhs, out), bases):
                pointers.append(pointer(base, element_bytes, batch_offset(mat, batch_index)))
            matrices = [[p, ld, *s] for p, ld, s in zip(pointers, leading, batch_strides)]
            count = [_i32(split[1][0].size)] if split else []
            ir.Operation.create(
                "func.call",
                operands=[*fixed, alpha, *matrices[0], *matrices[1], beta, *matrices[2], *count],
                attributes={"callee": ir.FlatSymbolRefAttr.get(symbol)},
            )

        nest(batch_sizes[: split[0]] if split else batch_sizes, [], emit)
    op.erase()
    if zero_fill is not None:
        zero_fill.erase()
    return True


def _scale_after(op: ir.Operation) -> None:
    """A contraction that stays loops keeps the scale folded into it: ``out *= alpha`` after it."""
    out = op.operands[2]
    t = ir.MemRefType(out.type)
    scale = blas_alpha(op)
    del op.attributes[BLAS_ALPHA]
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank))
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    with ir.InsertionPoint.after(op), op.location:
        scaled = ir.Operation.create(
            "linalg.generic", operands=[out],
            attributes={
                "indexing_maps": ir.ArrayAttr.get([identity]),
                "iterator_types": ir.ArrayAttr.get([parallel] * t.rank),
                "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 1]),
            },
            regions=1,
        )
        body = scaled.regions[0].blocks.append(t.element_type)
        with ir.InsertionPoint(body):
            product = arith.mulf(body.arguments[0], arith.constant(t.element_type, scale))
            ir.Operation.create("linalg.yield", operands=[product])


def nest(sizes: list[int], ivs: list[ir.Value], body) -> scf.ForOp | None:
    """``body(ivs)`` inside one scf.for per batch dimension; the outermost loop, if any."""
    if not sizes:
        body(ivs)
        return None
    loop = scf.ForOp(index_constant(0), index_constant(sizes[0]), index_constant(1))
    with ir.InsertionPoint(loop.body):
        nest(sizes[1:], ivs + [loop.induction_variable], body)
        scf.yield_([])
    return loop


@dataclasses.dataclass(frozen=True)
class GemmToBlas(ModulePass):
    """Replace contractions tagged xhlo.blas (on buffers) by cblas sgemm/dgemm calls."""

    NAME = "xhlo-gemm-to-blas"

    def run(self, module: ir.Operation) -> None:
        if not blas.available():
            return
        for op in walk_ops(module, "linalg.contract"):
            if BLAS_TAG in op.attributes and all(isinstance(v.type, ir.MemRefType) for v in op.operands) \
                    and not _rewrite(module, op) and BLAS_ALPHA in op.attributes:
                _scale_after(op)
        for fill in walk_ops(module, "linalg.fill"):  # fills no call took over stay fills
            if BLAS_TAG in fill.attributes:
                del fill.attributes[BLAS_TAG]

"""xhlo-gemm-to-blas: matmuls tagged ``xhlo.blas`` on buffers become sgemm/dgemm calls.

``xhlo-prepare-gemms`` leaves every contraction worth a BLAS call as a tagged
``linalg.matmul``/``linalg.batch_matmul`` whose operands are row-major
matrices, the inputs possibly transposed. After bufferization each becomes a
``cblas_?gemm`` call (one per batch element, in an ``scf.for``) on the
buffers' addresses and row strides, with ``beta = 1`` so the call accumulates
into the output exactly as the linalg op does. The library is OpenBLAS from
the ``scipy-openblas32`` wheel (``xhlo.blas``), multithreaded on its own; the
ExecutionEngine loads it (``xhlo.blas.shared_libs_for``).

A matmul whose buffers are not unit-stride along a row (a strided view), or a
program compiled without the BLAS wheel, keeps its loop lowering.
"""

from __future__ import annotations

import dataclasses

from xhlo import blas
from xhlo._mlir import arith, ir, memref, scf

from .base import ModulePass, walk_ops

BLAS_TAG = "xhlo.blas"
_ELEMENT_BYTES = {"f32": 4, "f64": 8}


def _ptr_type() -> ir.Type:
    return ir.Type.parse("!llvm.ptr")


def _declare(module: ir.Operation, symbol: str, float_type: ir.Type) -> None:
    body = module.regions[0].blocks[0]
    for op in body.operations:
        if "sym_name" in op.operation.attributes and ir.StringAttr(op.operation.attributes["sym_name"]).value == symbol:
            return
    i32, ptr = ir.IntegerType.get_signless(32), _ptr_type()
    inputs = [i32] * 6 + [float_type, ptr, i32, ptr, i32, float_type, ptr, i32]
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        ir.Operation.create(
            "func.func",
            attributes={
                "sym_name": ir.StringAttr.get(symbol),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get(inputs, [])),
                "sym_visibility": ir.StringAttr.get("private"),
            },
            regions=1,
        )


@dataclasses.dataclass(frozen=True)
class _Matrix:
    """A buffer seen as (batch of) row-major matrices."""

    value: ir.Value
    rows: int
    cols: int
    row_stride: int  # static stride of the row dimension, or the dynamic marker
    batch_stride: int | None

    @staticmethod
    def of(value: ir.Value, batched: bool) -> "_Matrix | None":
        t = ir.MemRefType(value.type)
        strides, _ = t.get_strides_and_offset()
        shape = t.shape
        rows, cols = shape[-2], shape[-1]
        if cols > 1 and strides[-1] != 1:
            return None  # not unit-stride along a row
        dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
        if rows > 1 and strides[-2] != dynamic and strides[-2] < cols:
            return None  # overlapping rows (a broadcast view)
        return _Matrix(value, rows, cols, strides[-2], strides[0] if batched else None)


def _i32(value: int | ir.Value) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    if isinstance(value, int):
        return arith.constant(i32, value)
    return arith.index_cast(i32, value)


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _leading_dimension(matrix: _Matrix, metadata: "_Metadata") -> ir.Value:
    """The BLAS ``ld`` argument: the row stride (any value >= the row length for one row)."""
    if matrix.rows == 1:
        return _i32(max(1, matrix.cols))
    if matrix.row_stride == ir.ShapedType.get_dynamic_stride_or_offset():
        return _i32(metadata.strides[-2])
    return _i32(matrix.row_stride)


class _Metadata:
    def __init__(self, value: ir.Value):
        rank = ir.MemRefType(value.type).rank
        op = memref.ExtractStridedMetadataOp(value)
        self.offset = op.results[1]
        self.strides = list(op.results[2 + rank: 2 + 2 * rank])
        self.address = memref.extract_aligned_pointer_as_index(value)


def _pointer(metadata: _Metadata, element_bytes: int, batch: ir.Value | None, batch_stride: ir.Value | None) -> ir.Value:
    elements = metadata.offset
    if batch is not None:
        elements = arith.addi(elements, arith.muli(batch, batch_stride))
    address = arith.addi(metadata.address, arith.muli(elements, _index(element_bytes)))
    as_i64 = arith.index_cast(ir.IntegerType.get_signless(64), address)
    return ir.Operation.create("llvm.inttoptr", results=[_ptr_type()], operands=[as_i64]).result


def _transposed(op: ir.Operation, operand: int) -> bool:
    """Is the lhs stored inner x rows, or the rhs cols x inner? Loops are (batch?, rows, cols, inner)."""
    amap = ir.AffineMapAttr(op.attributes["indexing_maps"][operand]).value
    last = ir.AffineDimExpr(amap.results[len(amap.results) - 1]).position
    rows, inner = amap.n_dims - 3, amap.n_dims - 1
    return last == rows if operand == 0 else last == inner


def _rewrite(module: ir.Operation, op: ir.Operation) -> bool:
    batched = op.name == "linalg.batch_matmul"
    lhs_value, rhs_value, out_value = op.operands
    float_type = ir.MemRefType(out_value.type).element_type
    symbol = blas.GEMM_SYMBOLS.get(str(float_type))
    if symbol is None:
        return False
    matrices = [_Matrix.of(v, batched) for v in (lhs_value, rhs_value, out_value)]
    if any(m is None for m in matrices):
        return False
    lhs, rhs, out = matrices
    lhs_t, rhs_t = _transposed(op, 0), _transposed(op, 1)
    m, n = out.rows, out.cols
    k = lhs.rows if lhs_t else lhs.cols
    element_bytes = _ELEMENT_BYTES[str(float_type)]
    _declare(module, symbol, float_type)
    with ir.InsertionPoint(op), op.location:
        metadata = [_Metadata(v) for v in (lhs_value, rhs_value, out_value)]
        ld = [_leading_dimension(mat, meta) for mat, meta in zip(matrices, metadata)]
        fixed = [_i32(blas.ROW_MAJOR), _i32(blas.TRANS if lhs_t else blas.NO_TRANS),
                 _i32(blas.TRANS if rhs_t else blas.NO_TRANS), _i32(m), _i32(n), _i32(k)]
        one = arith.constant(float_type, 1.0)

        def call(batch: ir.Value | None) -> None:
            pointers = [
                _pointer(meta, element_bytes, batch, meta.strides[0] if batch is not None else None)
                for meta in metadata
            ]
            ir.Operation.create(
                "func.call",
                operands=[*fixed, one, pointers[0], ld[0], pointers[1], ld[1], one, pointers[2], ld[2]],
                attributes={"callee": ir.FlatSymbolRefAttr.get(symbol)},
            )

        if batched:
            count = ir.MemRefType(out_value.type).shape[0]
            loop = scf.ForOp(_index(0), _index(count), _index(1))
            with ir.InsertionPoint(loop.body):
                call(loop.induction_variable)
                scf.yield_([])
        else:
            call(None)
    op.erase()
    return True


@dataclasses.dataclass(frozen=True)
class GemmToBlas(ModulePass):
    """Replace linalg matmuls tagged xhlo.blas (on buffers) by cblas sgemm/dgemm calls."""

    NAME = "xhlo-gemm-to-blas"

    def run(self, module: ir.Operation) -> None:
        if not blas.available():
            return
        for op in walk_ops(module, ("linalg.matmul", "linalg.batch_matmul")):
            if BLAS_TAG in op.attributes and all(isinstance(v.type, ir.MemRefType) for v in op.operands):
                _rewrite(module, op)

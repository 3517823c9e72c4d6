"""xhlo-bf16-gemm-operands: BLAS-bound products of bf16 data read the bf16 data, on CPUs with AVX512-BF16.

``xhlo-widen-low-precision-dot`` gives a bf16 x bf16 product XLA's semantics by
converting both operands to f32, and ``sgemm`` multiplies the copies. Where the
host has AVX512-BF16, ``xhlo-lower-bf16-gemms`` multiplies bf16 matrices
itself at twice sgemm's rate, with no f32 copies. For a ``linalg.contract``
tagged ``xhlo.blas`` with an f32 result whose inputs are both f32 forms of
bf16 data, this pass makes the contraction read the bf16 data; a conversion
nothing else reads is then dead. The f32 forms it sees through:

* an elementwise extension (a ``linalg.generic`` yielding ``arith.extf`` of its
  one input), which fusion may have given a transposing map (``x @ w.T``): the
  contraction reads the bf16 tensor through the composed map;
* a reshape of such an extension: the same reshape of the bf16 tensor;
* an elementwise op that computes in f32 and yields ``extf(truncf(v))`` (a bf16
  layer norm or activation before a bf16 matmul): a clone of it yields the
  bf16 ``truncf(v)``.

It does so only for the shapes the kernel takes (``kernel_takes``): whole
16-column vectors, an even number of inner elements, a transposed lhs in
blocks of 16 rows and a transposed rhs in blocks of 32 inner elements.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo import host
from xhlo._mlir import arith, ir, linalg, tensor

from .base import ModulePass, defining_op, indexing_maps, loop_ranges, walk_ops
from .lower_bf16_gemms import BF16, DotFormat, kernel_takes
from .prepare_gemms import BLAS_TAG, classify, map_dims

_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")


@dataclasses.dataclass(frozen=True)
class Widening:
    """How a narrow tensor becomes the float data of a product: its element type and the
    elementwise conversion (bf16 ``extf`` here, i8 ``sitofp`` for xhlo-int8-gemm-operands)."""

    element: str = "bf16"
    cast: str = "arith.extf"


BF16_TO_F32 = Widening()


def narrow_source(value: ir.Value, read: ir.AffineMap, widening: Widening = BF16_TO_F32
                  ) -> tuple[ir.Value, ir.AffineMap] | None:
    """The narrow tensor whose float form ``value`` (read through ``read``) is, and the map
    through which the contraction then reads it; None if ``value`` is no such form."""
    producer = defining_op(value)
    if producer is None:
        return None
    if producer.name in _RESHAPES:
        return _reshaped_source(producer, read, widening)
    if producer.name != "linalg.generic" or len(producer.results) != 1:
        return None
    rounded = _rounded_to_bf16(producer) if widening == BF16_TO_F32 else None
    if rounded is not None:
        return rounded, read
    return _extended_source(producer, read, widening)


def _reshaped_source(reshape: ir.Operation, read: ir.AffineMap, widening: Widening
                     ) -> tuple[ir.Value, ir.AffineMap] | None:
    """A reshape of an (untransposed) extension: the same reshape of its narrow tensor."""
    rank = len(ir.RankedTensorType(reshape.operands[0].type).shape)
    inner = narrow_source(reshape.operands[0], ir.AffineMap.get_identity(rank), widening)
    if inner is None or inner[1] != ir.AffineMap.get_identity(rank):
        return None
    narrow_type = ir.RankedTensorType.get(ir.RankedTensorType(reshape.results[0].type).shape,
                                          ir.Type.parse(widening.element))
    with ir.InsertionPoint(reshape), reshape.location:
        reshaped = ir.Operation.create(reshape.name, results=[narrow_type],
                                       operands=[inner[0], *list(reshape.operands)[1:]],
                                       attributes={n: reshape.attributes[n] for n in reshape.attributes})
    return reshaped.results[0], read


def _extended_source(producer: ir.Operation, read: ir.AffineMap, widening: Widening
                     ) -> tuple[ir.Value, ir.AffineMap] | None:
    """An elementwise conversion of one narrow tensor: that tensor, read through ``read``
    composed with the extension's permutation (a transposing extension: ``x @ w.T``)."""
    if len(producer.operands) != 2:
        return None
    source_map, result_map = (ir.AffineMapAttr(m).value for m in producer.attributes["indexing_maps"])
    if not source_map.is_permutation or map_dims(result_map) != list(range(result_map.n_dims)):
        return None
    block = producer.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    source = producer.operands[0]
    if [o.name for o in body] != [widening.cast, "linalg.yield"] or body[0].operands[0] != block.arguments[0] \
            or str(ir.RankedTensorType(source.type).element_type) != widening.element:
        return None
    return source, ir.AffineMap.get(read.n_dims, 0, [read.results[p] for p in map_dims(source_map)])


def _rounded_to_bf16(producer: ir.Operation) -> ir.Value | None:
    """For an elementwise generic yielding ``extf(truncf(v))`` (bf16 data computed in f32:
    a layer norm before a bf16 matmul), the same generic yielding the bf16 ``truncf(v)``
    (a clone before it), None for any other op."""
    block = producer.regions[0].blocks[0]
    ext = defining_op(list(block.operations)[-1].operation.operands[0])
    if ext is None or ext.name != "arith.extf" or ext.block != block:
        return None
    truncation = defining_op(ext.operands[0])
    if truncation is None or truncation.name != "arith.truncf" or str(ext.operands[0].type) != "bf16":
        return None
    out = producer.operands[len(producer.operands) - 1]
    init = defining_op(out)
    if any("reduction" in str(t) for t in producer.attributes["iterator_types"]) \
            or any(True for _ in list(block.arguments)[-1].uses) or init is None or init.name != "tensor.empty":
        return None  # a reduction, or it reads its init: not a plain elementwise op
    shape = ir.RankedTensorType(out.type).shape
    with ir.InsertionPoint(producer), producer.location:
        empty = tensor.EmptyOp(shape, ir.BF16Type.get()).result
        clone = producer.clone()
    clone.operands[len(clone.operands) - 1] = empty
    clone.results[0].set_type(ir.RankedTensorType.get(shape, ir.BF16Type.get()))
    clone_block = clone.regions[0].blocks[0]
    list(clone_block.arguments)[-1].set_type(ir.BF16Type.get())
    clone_done = list(clone_block.operations)[-1].operation
    clone_ext = defining_op(clone_done.operands[0])
    clone_done.operands[0] = clone_ext.operands[0]
    clone_ext.erase()
    return clone.results[0]


@dataclasses.dataclass(frozen=True)
class Bf16GemmOperands(ModulePass):
    """Tagged f32 products of extended bf16 tensors read the bf16 tensors (AVX512-BF16 hosts)."""

    NAME = "xhlo-bf16-gemm-operands"
    avx512_bf16: bool = "avx512_bf16" in host.cpu_flags()  # the host has vdpbf16ps

    def run(self, module: ir.Operation) -> None:
        if self.avx512_bf16:
            for op in tagged_tensor_products(module):
                self._rewrite(op)

    @staticmethod
    def _rewrite(op: ir.Operation) -> None:
        out_type = ir.RankedTensorType(op.operands[2].type)
        if str(out_type.element_type) != "f32" or not out_type.has_static_shape:
            return
        found = narrow_operands(op, BF16_TO_F32, BF16)
        if found is not None:
            _contract_of(op, *found)


def tagged_tensor_products(module: ir.Operation) -> list[ir.Operation]:
    """The BLAS-bound (tagged) contractions of tensors."""
    return [op for op in walk_ops(module, "linalg.contract")
            if BLAS_TAG in op.attributes and all(isinstance(v.type, ir.RankedTensorType) for v in op.operands)]


def narrow_operands(op: ir.Operation, widening: Widening, fmt: DotFormat,
                    max_inner: int | None = None) -> tuple[list[ir.Value], list[ir.AffineMap]] | None:
    """The narrow tensors a tagged contraction's two float operands are forms of, and the maps
    through which it would read them, when the dot kernel of ``fmt`` takes its shape
    (and its inner size is at most ``max_inner``); None otherwise."""
    maps = indexing_maps(op)
    sources = [narrow_source(v, m, widening) for v, m in zip(op.operands[:2], maps)]
    if any(s is None for s in sources):
        return None  # a clone or reshape made for the other operand is dead: canonicalize drops it
    maps[:2] = [read for _, read in sources]
    dims = [map_dims(m) for m in maps]
    if any(d is None for d in dims):
        return None
    shape = classify(*dims, n_loops=maps[0].n_dims)
    if shape is None:
        return None
    ranges = loop_ranges(op)
    rows, cols, inner = (math.prod(ranges[d] for d in run) for run in (shape.rows, shape.cols, shape.inner))
    if max_inner is not None and inner > max_inner:
        return None
    if not kernel_takes(rows, cols, inner, shape.lhs_transposed, shape.rhs_transposed, fmt):
        return None
    return [source for source, _ in sources], maps


def contract_of(op: ir.Operation, sources: list[ir.Value], maps: list[ir.AffineMap], init: ir.Value,
                multiply_add) -> ir.Operation:
    """A contraction with ``op``'s attributes of ``sources`` through ``maps`` into ``init``,
    before ``op``; ``multiply_add(a, b, acc)`` builds its body from the block's arguments."""
    attributes = {name: op.attributes[name] for name in op.attributes}
    attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create("linalg.contract", results=[init.type], operands=[*sources, init],
                                  attributes=attributes, regions=1)
        types = [ir.RankedTensorType(v.type).element_type for v in (*sources, init)]
        block = new.regions[0].blocks.append(*types)
        with ir.InsertionPoint(block):
            linalg.YieldOp([multiply_add(*block.arguments)])
    return new


def _extended_product(a: ir.Value, b: ir.Value, acc: ir.Value) -> ir.Value:
    f32 = ir.F32Type.get()
    return arith.addf(acc, arith.mulf(arith.extf(f32, a), arith.extf(f32, b)))


def _contract_of(op: ir.Operation, sources: list[ir.Value], maps: list[ir.AffineMap]) -> None:
    """Replace ``op`` by the contraction of ``sources`` through ``maps`` (its body extends them to f32)."""
    new = contract_of(op, sources, maps, op.operands[2], _extended_product)
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()

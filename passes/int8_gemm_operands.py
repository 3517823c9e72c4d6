"""xhlo-int8-gemm-operands: BLAS-bound products of int8 data read the int8 data, on CPUs with AVX512-VNNI.

``xhlo-integer-dots-in-float`` computes an ``i8 x i8 -> i32`` product in f32
(f64 past 1024 inner elements), where its sums are exact, so that BLAS runs
it: two converted copies, sgemm, a conversion back. Where the host has
AVX512-VNNI, ``xhlo-lower-int8-gemms`` multiplies the int8 matrices itself at
four times sgemm's rate. For a ``linalg.contract`` tagged ``xhlo.blas`` that
starts from a tagged zero fill, whose inputs are both float forms of i8 data
(an elementwise ``sitofp``, also a transposing one, or a reshape of one; see
``narrow_source``) and whose sums that float type holds exactly, this pass
makes an ``i8 x i8 -> i32`` contraction of the int8 data. Its readers get the
same numbers: an elementwise op that only converts the float sums back to i32
(the product's own result, or a dequantization ``i32 -> f32 * scale`` fused
after it) reads the i32 sums directly; any other reader reads their float
form (an elementwise ``sitofp``).

It does so only for the shapes the kernel takes (``kernel_takes`` with groups
of four): whole 16-column vectors, inner sizes of whole groups, a transposed
lhs in blocks of 16 rows and a transposed rhs in blocks of 64 inner elements.
"""

from __future__ import annotations

import dataclasses

from xhlo import host
from xhlo._mlir import arith, ir, linalg, tensor

from .base import ModulePass, defining_op, iterator_types, linalg_generic
from .bf16_gemm_operands import Widening, contract_of, narrow_operands, tagged_tensor_products
from .lower_int8_gemms import INT8
from .prepare_gemms import BLAS_TAG, zero_fill_of

I8_TO_FLOAT = Widening(element="i8", cast="arith.sitofp")
LARGEST_PRODUCT = 128 * 128  # |a * b| of two i8 values
EXACT_BITS = {"f32": 24, "f64": 53}  # integers a float type holds exactly: up to 2^bits


def _zero_filled(init: ir.Value) -> bool:
    fill = zero_fill_of(init)
    return fill is not None and BLAS_TAG in fill.attributes


def _integer_product(a: ir.Value, b: ir.Value, acc: ir.Value) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    return arith.addi(acc, arith.muli(arith.extsi(i32, a), arith.extsi(i32, b)))


def _sums_of(op: ir.Operation, sources: list[ir.Value], maps: list[ir.AffineMap]) -> ir.Value:
    """The i32 contraction of ``sources`` from a tagged zero fill, before ``op``."""
    i32 = ir.IntegerType.get_signless(32)
    shape = ir.RankedTensorType(op.results[0].type).shape
    with ir.InsertionPoint(op), op.location:
        zero = arith.constant(i32, 0)
        fill = linalg.fill(zero, outs=[tensor.EmptyOp(shape, i32).result])
        defining_op(fill).attributes[BLAS_TAG] = ir.UnitAttr.get()
    return contract_of(op, sources, maps, fill, _integer_product).results[0]


def _reads_back_as_integers(user: ir.Operation, index: int) -> list[ir.Operation] | None:
    """The ``fptosi`` to i32 ops through which the elementwise ``user`` alone reads its
    operand ``index`` (a float input), or None if it reads it otherwise."""
    if user.name != "linalg.generic" or index >= len(user.operands) - len(user.results):
        return None
    argument = user.regions[0].blocks[0].arguments[index]
    readers = [use.owner.operation for use in argument.uses]
    if not readers or any(r.name != "arith.fptosi" or str(r.results[0].type) != "i32" for r in readers):
        return None
    return readers


def _read_sums(op: ir.Operation, sums: ir.Value) -> None:
    """Readers of the float product ``op`` read the same numbers from the i32 ``sums``."""
    product, float_form = op.results[0], None
    for user, index in [(use.owner.operation, use.operand_number) for use in product.uses]:
        conversions = _reads_back_as_integers(user, index)
        if conversions is not None:
            user.operands[index] = sums
            argument = user.regions[0].blocks[0].arguments[index]
            argument.set_type(ir.RankedTensorType(sums.type).element_type)
            for conversion in conversions:
                conversion.results[0].replace_all_uses_with(argument)
                conversion.erase()
            continue
        if float_form is None:
            float_form = _float_form(sums, op)
        user.operands[index] = float_form


def _float_form(sums: ir.Value, op: ir.Operation) -> ir.Value:
    """An elementwise ``sitofp`` of ``sums`` to the type of ``op``'s result, before ``op``."""
    result_type = ir.RankedTensorType(op.results[0].type)
    rank = len(result_type.shape)
    identity = ir.AffineMap.get_identity(rank)
    with ir.InsertionPoint(op), op.location:
        empty = tensor.EmptyOp(result_type.shape, result_type.element_type).result
        return linalg_generic([sums], empty, [identity, identity], iterator_types(["parallel"] * rank),
                              lambda s, _: arith.sitofp(result_type.element_type, s))


@dataclasses.dataclass(frozen=True)
class Int8GemmOperands(ModulePass):
    """Tagged float products of converted int8 tensors -> i8 x i8 -> i32 products (AVX512-VNNI hosts)."""

    NAME = "xhlo-int8-gemm-operands"
    avx512_vnni: bool = "avx512_vnni" in host.cpu_flags()  # the host has vpdpbusd

    def run(self, module: ir.Operation) -> None:
        if self.avx512_vnni:
            for op in tagged_tensor_products(module):
                self._rewrite(op)

    @staticmethod
    def _rewrite(op: ir.Operation) -> None:
        out_type = ir.RankedTensorType(op.operands[2].type)
        bits = EXACT_BITS.get(str(out_type.element_type))
        if bits is None or not out_type.has_static_shape or not _zero_filled(op.operands[2]):
            return
        found = narrow_operands(op, I8_TO_FLOAT, INT8, max_inner=2**bits // LARGEST_PRODUCT)
        if found is None:
            return
        sums = _sums_of(op, *found)
        _read_sums(op, sums)
        op.erase()

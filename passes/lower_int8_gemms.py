"""xhlo-lower-int8-gemms: BLAS-bound products of int8 matrices run on AVX512-VNNI's dot instruction.

``vpdpbusd`` adds the products of 16 groups of four bytes to 16 i32 sums: 64
multiply-adds per instruction, four times an f32 FMA. Without this pass an
``i8 x i8 -> i32`` product runs as an f32 (or, past 1024 inner elements,
f64) BLAS product of converted copies (``xhlo-integer-dots-in-float``);
``xhlo-int8-gemm-operands`` decides, at the tensor level, which of those read
their int8 data instead. A tagged contraction of i8 buffers into an i32 one
runs on the kernel of ``xhlo-lower-bf16-gemms`` with groups of four rows:
packed rhs panels, blocks of sums held in registers, one (chunk of rows,
panel) per parallel iteration.

The instruction multiplies unsigned bytes by signed ones. Each lhs group is
read with its sign bit flipped (``a + 128`` as an unsigned byte), so every sum
gains ``128 * sum(b)`` over its column, and every column's sums start from
``-128`` times that column sum, which the packing computes per panel (a dot
with a vector of ones). With few rows, where the rhs is read in place, the
rhs's sign bits are flipped instead and each row's own sum (a dot of ones with
its broadcast groups, in the same loop) corrects its sums at the end. The i32
sums wrap as the product's i32 arithmetic does, so the result is exact
whatever the order.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import arith, ir

from .lower_bf16_gemms import DotFormat, LowerBf16Gemms
from .lower_small_gemms import vector_splat

VPDPBUSD = "llvm.x86.avx512.vpdpbusd.512"


@dataclasses.dataclass(frozen=True)
class Int8Format(DotFormat):
    """Groups of four i8 into i32 sums, on ``vpdpbusd`` (unsigned x signed bytes)."""

    element: str = "i8"
    group: int = 4
    sums: str = "i32"
    corrected: bool = True

    def dot(self, acc: ir.Value, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
        """``acc`` plus the products of ``lhs`` read as unsigned bytes and signed ``rhs``."""
        return ir.Operation.create(
            "llvm.call_intrinsic", results=[acc.type], operands=[acc, lhs, rhs],
            attributes={"intrin": ir.StringAttr.get(VPDPBUSD), "fastmathFlags": ir.Attribute.parse("#llvm.fastmath<none>"),
                        "op_bundle_sizes": ir.DenseI32ArrayAttr.get([]),
                        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([3, 0])}).result

    def unsigned(self, groups: ir.Value) -> ir.Value:
        """Signed bytes as the unsigned ``x + 128``: the sign bit flipped."""
        return arith.xori(groups, vector_splat(ir.VectorType(groups.type), -128))

    def correction(self, other_sums: ir.Value) -> ir.Value:
        return arith.muli(other_sums, vector_splat(ir.VectorType(other_sums.type), -128))


INT8 = Int8Format()


@dataclasses.dataclass(frozen=True)
class LowerInt8Gemms(LowerBf16Gemms):
    """Tagged i8 x i8 -> i32 contractions -> packed AVX512-VNNI dot loops."""

    NAME = "xhlo-lower-int8-gemms"
    FORMAT = INT8
    DIALECT = "llvm"

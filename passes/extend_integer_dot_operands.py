"""xhlo-extend-integer-dot-operands: convert integer dot/convolution operands to the result type.

``dot_general`` and ``convolution`` may multiply narrow integers into a wider
result (``ui8 x ui8 -> ui32``, ``i8 x i8 -> i32``, ``ui8 x ui8 -> f32``). The
upstream linalg lowering extends every integer operand as if it were signed,
so unsigned values of 128 and more come out negative. An explicit
``stablehlo.convert`` to the result element type extends each operand
according to its own signedness first; for signed operands it changes nothing.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops

EXTENDED_OPS = ("stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution")


@dataclasses.dataclass(frozen=True)
class ExtendIntegerDotOperands(ModulePass):
    """Convert integer operands of dots and convolutions to the result element type."""

    NAME = "xhlo-extend-integer-dot-operands"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, EXTENDED_OPS):
            result_elem = sh.element_type(op.results[0])
            for i, operand in enumerate(op.operands):
                elem = sh.element_type(operand)
                if isinstance(elem, ir.IntegerType) and elem != result_elem:
                    with ir.InsertionPoint(op), op.location:
                        op.operands[i] = sh.convert(operand, result_elem)

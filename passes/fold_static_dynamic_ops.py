"""xhlo-fold-static-dynamic-ops: dynamic shape ops with a static result become static ops.

``stablehlo-canonicalize-dynamism`` rewrites ``dynamic_reshape``,
``dynamic_broadcast_in_dim`` and ``dynamic_iota`` only when their shape
operand is a constant. Shapes computed at run time from static facts
(``get_dimension_size`` arithmetic, as exporters emit) are not folded by the
pinned wheel's canonicalizer, and the linalg lowering rejects the dynamic ops.
When the result type is static, the spec requires the shape operand to equal
it, so the shape operand carries no information and the static op is exact.
Likewise ``get_dimension_size`` of a static dimension is a constant (CHLO's
``scan`` decomposition bounds its loop with one, which nothing else folds).
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops


def _static_form(op: ir.Operation, result_type: ir.RankedTensorType) -> ir.Value:
    shape = list(result_type.shape)
    if op.name == "stablehlo.get_dimension_size":
        dimension = ir.IntegerAttr(op.attributes["dimension"]).value
        return sh.constant(ir.RankedTensorType(op.operands[0].type).shape[dimension], result_type)
    if op.name == "stablehlo.dynamic_reshape":
        return sh.reshape(op.operands[0], shape)
    if op.name == "stablehlo.dynamic_iota":
        dimension = ir.IntegerAttr(op.attributes["iota_dimension"]).value
        return sh.iota(shape, dimension, result_type.element_type)
    dims = ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"])
    return sh.broadcast_in_dim(op.operands[0], shape, list(dims))


def _static_operand(op: ir.Operation) -> bool:
    """A dimension size is known when its dimension is static (the other ops need nothing)."""
    if op.name != "stablehlo.get_dimension_size":
        return True
    operand = ir.RankedTensorType(op.operands[0].type)
    return not operand.is_dynamic_dim(ir.IntegerAttr(op.attributes["dimension"]).value)


@dataclasses.dataclass(frozen=True)
class FoldStaticDynamicOps(ModulePass):
    """Rewrite dynamic_reshape/dynamic_broadcast_in_dim/dynamic_iota with static results and
    get_dimension_size of static dimensions."""

    NAME = "xhlo-fold-static-dynamic-ops"

    def run(self, module: ir.Operation) -> None:
        names = ("stablehlo.dynamic_reshape", "stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_iota",
                 "stablehlo.get_dimension_size")
        for op in walk_ops(module, names):
            result_type = ir.RankedTensorType(op.results[0].type)
            if not result_type.has_static_shape or not _static_operand(op):
                continue
            with ir.InsertionPoint(op), op.location:
                static = _static_form(op, result_type)
            op.results[0].replace_all_uses_with(static)
            op.erase()

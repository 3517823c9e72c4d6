"""xhlo-legalize-dot-algorithms: ``dot_general`` with an ``algorithm`` runs at its operands' precision.

``jax.lax.dot(..., precision=DotAlgorithmPreset.X)`` exports a
``dot_general`` carrying ``algorithm = <lhs_precision_type = ..., ...>``;
JAX itself converts the operands where the preset asks for a different
storage type (F16_F16_F16, F64_F64_F64), so what reaches the op is a request
about how to multiply operands it already has. The upstream linalg lowering
rejects any such op. XLA:CPU, whose numbers JAX users get, computes the
presets it accepts (F32_F32_F32, BF16_BF16_F32 and its _X3/_X6 splits,
F16_F16_F16, F64_F64_F64) at the precision of the operands, at least as
precise as each preset promises, and the reference interpreter ignores the
attribute. So the attribute is dropped: f32 products stay f32, and f16/bf16
products are accumulated in f32 by ``xhlo-widen-low-precision-dot``.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, walk_ops


@dataclasses.dataclass(frozen=True)
class LegalizeDotAlgorithms(ModulePass):
    """Drop the algorithm attribute of stablehlo.dot_general (operand precision)."""

    NAME = "xhlo-legalize-dot-algorithms"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.dot_general"):
            if "algorithm" in op.attributes:
                del op.attributes["algorithm"]

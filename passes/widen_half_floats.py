"""xhlo-widen-half-floats: elementwise math on bf16/f16 computes in f32 and rounds back.

LLVM computes on bf16 and f16 by promoting each scalar op to f32, and
``xhlo-vectorize`` leaves half-float arithmetic scalar (LLVM legalizes such
vectors poorly): a ``tanh`` of 4M bf16 values called libm's ``tanhf`` once per
element on one core, 64 ms against XLA's 1.7. XLA:CPU upcasts these ops to f32
itself. This pass does the same at the StableHLO level: each elementwise op
in ``ELEMENTWISE`` with a bf16/f16 operand or result gets f32 operands and
results with ``stablehlo.convert`` around it, so the result is rounded back
after every op (the ops' own precision, as the StableHLO spec computes them;
XLA may keep excess precision across a fused chain). Fusion then makes a chain
one loop of f32 arithmetic between half-float loads and stores, which
vectorizes (conversions of half-float vectors are what LLVM lowers well).
Contractions, reductions and other region ops keep their own handling, and
the combiners in their bodies stay as they are.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, op_name, walk_ops
from .emulate_small_floats import widen_op

ELEMENTWISE = frozenset(
    f"stablehlo.{name}"
    for name in (
        "abs", "add", "atan2", "cbrt", "ceil", "clamp", "compare", "cosine", "divide", "exponential",
        "exponential_minus_one", "floor", "is_finite", "log", "log_plus_one", "logistic", "maximum",
        "minimum", "multiply", "negate", "power", "remainder", "round_nearest_afz", "round_nearest_even",
        "rsqrt", "sign", "sine", "sqrt", "subtract", "tan", "tanh",
    )
)  # fmt: skip


# Their bodies are combiners applied element by element: they keep their half
# floats (LLVM legalizes those scalar ops; a scan of widened bf16 ops failed there).
_COMBINER_OWNERS = frozenset(
    f"stablehlo.{name}"
    for name in ("reduce", "reduce_window", "sort", "scatter", "select_and_scatter", "map", "all_reduce",
                 "reduce_scatter")
)


def _in_combiner(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and op_name(parent) != "func.func":
        if op_name(parent) in _COMBINER_OWNERS:
            return True
        parent = parent.parent
    return False


def _is_half(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) and sh.is_half_float(t.element_type)


@dataclasses.dataclass(frozen=True)
class WidenHalfFloats(ModulePass):
    """Compute elementwise bf16/f16 ops in f32, rounding back after each op."""

    NAME = "xhlo-widen-half-floats"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, tuple(ELEMENTWISE)):
            if any(_is_half(v.type) for v in [*op.operands, *op.results]) and not _in_combiner(op):
                widen_op(op, _is_half)

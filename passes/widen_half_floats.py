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
Contractions and other region ops keep their own handling, and the combiners
in their bodies stay as they are; but a ``reduce`` or ``reduce_window`` whose
combiner is a single ``maximum`` or ``minimum`` (a softmax's row maxima, max
pooling) runs on f32 with an f32 combiner: each step selects one of its
operands, so the widened result rounds back to the very same value. Left on
bf16, its scalar loop was most of a bf16 softmax (4x8x256x256: 2.6 ms, XLA 0.3).
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, op_name, walk_ops
from .emulate_small_floats import _widened, widen_op

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


_SELECTING = frozenset({"stablehlo.maximum", "stablehlo.minimum"})  # exact in any wider type


def _widen_selecting_reduction(op: ir.Operation) -> None:
    """A half-float reduction by max or min, on f32: converted operands, an f32 combiner."""
    body = op.regions[0].blocks[0]
    combiner, done = (o.operation for o in body.operations) if len(body.operations) == 2 else (None, None)
    if combiner is None or combiner.name not in _SELECTING or done.name != "stablehlo.return" \
            or len(op.results) != 1 or not all(_is_half(v.type) for v in [*op.operands, *op.results]):
        return
    arguments = list(body.arguments)
    order = [arguments.index(v) for v in combiner.operands]
    attributes = {name: op.attributes[name] for name in op.attributes}
    scalar = ir.RankedTensorType.get([], ir.F32Type.get())
    with ir.InsertionPoint(op), op.location:
        operands = [sh.convert(v, ir.F32Type.get()) for v in op.operands]
        wide = sh.create(op.name, operands, [_widened(op.results[0].type, _is_half)], attributes, regions=1)
        block = wide.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            selected = sh.create(combiner.name, [block.arguments[i] for i in order], [scalar])
            sh.create("stablehlo.return", [selected.results[0]], [])
        result = sh.convert(wide.results[0], sh.element_type(op.results[0]))
    op.results[0].replace_all_uses_with(result)
    op.erase()


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
        for op in walk_ops(module, ("stablehlo.reduce", "stablehlo.reduce_window")):
            _widen_selecting_reduction(op)

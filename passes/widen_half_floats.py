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
body only compares and selects (``maximum``, ``minimum``, ``compare``,
``select``, logic: a softmax's row maxima, max pooling, argmax) runs on f32
with the same body on f32: each step picks one of its operands, so the widened
result rounds back to the very same value. Left on bf16, their scalar loops
made a bf16 softmax over 4x8x256x256 take 5.1 ms (0.57 now, XLA 0.6-0.8) and
a bf16 argmax over 1024x4096 21.8 ms (0.68 now, XLA 15.4).
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, op_name, walk_ops
from .emulate_small_floats import widen_op, widened_type

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


# Body ops that only compare and pick among their operands: on f32 they pick the same
# values (exactly representable in either type), so a reduction of them can be widened.
_SELECTING = frozenset(f"stablehlo.{name}" for name in (
    "compare", "select", "maximum", "minimum", "and", "or", "not", "return"))


def _widen_selecting_reduction(op: ir.Operation) -> None:
    """A reduction over half floats whose body only compares and selects (max, min, argmax)
    runs on f32: converted operands, the same body on f32, results rounded back (exactly)."""
    body = op.regions[0].blocks[0]
    if any(o.operation.name not in _SELECTING for o in body.operations) \
            or not any(_is_half(v.type) for v in op.operands):
        return
    f32 = ir.F32Type.get()
    attributes = {name: op.attributes[name] for name in op.attributes}
    with ir.InsertionPoint(op), op.location:
        operands = [sh.convert(v, f32) if _is_half(v.type) else v for v in op.operands]
        wide = sh.create(op.name, operands, [widened_type(r.type, _is_half) for r in op.results], attributes, regions=1)
        block = wide.regions[0].blocks.append(*(widened_type(a.type, _is_half) for a in body.arguments))
        widened = dict(zip(body.arguments, block.arguments))
        with ir.InsertionPoint(block):
            for body_op in (o.operation for o in body.operations):
                clone = sh.create(body_op.name, [widened[v] for v in body_op.operands],
                                  [widened_type(r.type, _is_half) for r in body_op.results],
                                  {name: body_op.attributes[name] for name in body_op.attributes})
                widened.update(zip(body_op.results, clone.results))
        results = [sh.convert(new, sh.element_type(old)) if _is_half(old.type) else new
                   for old, new in zip(op.results, wide.results)]
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
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

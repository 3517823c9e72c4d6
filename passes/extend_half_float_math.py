"""xhlo-extend-half-float-math: math ops on bf16/f16 compute in f32, rounded after each op.

LLVM has no bf16/f16 math functions, so a ``math`` op on half floats (left in
combiner bodies: ``xhlo-widen-half-floats`` widens everything else at the
StableHLO level) must run in f32. Upstream's ``math-extend-to-supported-types``
does that, but it marks its conversions ``contract``, and the arith folder
then drops an ``extf(truncf(x))`` pair between two math ops. The second op
read the first's f32 result unrounded: ``cumlogsumexp`` of f16 took
``log1p(exp(d))`` at f32 precision and missed the reference (and XLA, which
rounds after every op) by 8 ulp after the cancellation that follows. Here each
op converts its own operands and result, without fast-math flags, so every op
rounds as the StableHLO spec computes it.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import arith, ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops


def _is_half(t: ir.Type) -> bool:
    return sh.is_half_float(sh.scalar_type(t))


def _widen(t: ir.Type) -> ir.Type:
    return sh.with_element(t, ir.F32Type.get()) if _is_half(t) else t


def _extend(op: ir.Operation) -> None:
    with ir.InsertionPoint(op), op.location:
        operands = [arith.extf(_widen(v.type), v) if _is_half(v.type) else v for v in op.operands]
        wide = ir.Operation.create(
            op.name,
            results=[_widen(r.type) for r in op.results],
            operands=operands,
            attributes={name: op.attributes[name] for name in op.attributes},
        )
        for old, new in zip(op.results, wide.results):
            old.replace_all_uses_with(arith.truncf(old.type, new) if _is_half(old.type) else new)
    op.erase()


@dataclasses.dataclass(frozen=True)
class ExtendHalfFloatMath(ModulePass):
    """Compute math ops on bf16/f16 (scalars or vectors) in f32, rounding each result."""

    NAME = "xhlo-extend-half-float-math"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, None):
            if op.name.startswith("math.") and any(_is_half(v.type) for v in [*op.operands, *op.results]):
                _extend(op)

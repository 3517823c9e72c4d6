"""xhlo-expand-batch-norm: batch_norm_inference/training/grad as reduce + elementwise ops.

The upstream linalg lowering has no pattern for the three batch-norm ops (and the
wheel ships no unfusing pass), so they are expanded here into ops it does lower.
Statistics are reduced over every dimension but ``feature_index``; per-feature
vectors are broadcast back with ``broadcast_in_dim``. f16/bf16 are computed in
f32 and rounded once at the end, as XLA:CPU does.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops

BATCH_NORM_OPS = (
    "stablehlo.batch_norm_inference",
    "stablehlo.batch_norm_training",
    "stablehlo.batch_norm_grad",
)


@dataclasses.dataclass
class _Layout:
    """Where the feature dimension sits and how to move per-feature vectors around it."""

    shape: tuple[int, ...]
    feature_index: int
    compute_type: ir.Type

    @property
    def reduced_dims(self) -> list[int]:
        return [d for d in range(len(self.shape)) if d != self.feature_index]

    @property
    def count(self) -> int:
        """Elements per feature (the N in the mean)."""
        n = 1
        for d in self.reduced_dims:
            n *= self.shape[d]
        return n

    def widen(self, value: ir.Value) -> ir.Value:
        if sh.element_type(value) == self.compute_type:
            return value
        return sh.convert(value, self.compute_type)

    def spread(self, per_feature: ir.Value) -> ir.Value:
        """A [C] vector broadcast to the operand shape along ``feature_index``."""
        return sh.broadcast_in_dim(per_feature, self.shape, [self.feature_index])

    def mean(self, value: ir.Value) -> ir.Value:
        total = sh.reduce_sum(value, self.reduced_dims)
        return sh.binary("divide", total, self.scalar(self.count, total))

    def scalar(self, number: float, like: ir.Value) -> ir.Value:
        return sh.constant(number, like.type)


def _layout(op: ir.Operation) -> _Layout:
    operand_type = op.operands[0].type
    if not isinstance(operand_type, ir.RankedTensorType) or not operand_type.has_static_shape:
        raise PassError(op, f"'{op.name}' needs a statically shaped operand, got {operand_type}")
    elem = operand_type.element_type
    feature_index = ir.IntegerAttr(op.attributes["feature_index"]).value
    compute = ir.F32Type.get() if sh.is_half_float(elem) else elem
    return _Layout(tuple(operand_type.shape), feature_index, compute)


def _epsilon(op: ir.Operation, like: ir.Value) -> ir.Value:
    return sh.constant(ir.FloatAttr(op.attributes["epsilon"]).value, like.type)


def _inverse_std(op: ir.Operation, variance: ir.Value) -> ir.Value:
    """1 / sqrt(variance + epsilon), per feature (sqrt then divide: rsqrt is less exact)."""
    std = sh.unary("sqrt", sh.add(variance, _epsilon(op, variance)))
    return sh.binary("divide", sh.constant(1.0, variance.type), std)


def _normalize(layout: _Layout, op, centered, scale, offset, variance) -> ir.Value:
    """scale * centered / sqrt(variance + eps) + offset."""
    factor = sh.multiply(scale, _inverse_std(op, variance))
    return sh.add(sh.multiply(centered, layout.spread(factor)), layout.spread(offset))


def _expand_inference(op: ir.Operation, layout: _Layout) -> list[ir.Value]:
    x, scale, offset, mean, variance = (layout.widen(v) for v in op.operands)
    centered = sh.subtract(x, layout.spread(mean))
    return [_normalize(layout, op, centered, scale, offset, variance)]


def _expand_training(op: ir.Operation, layout: _Layout) -> list[ir.Value]:
    x, scale, offset = (layout.widen(v) for v in op.operands)
    mean = layout.mean(x)
    centered = sh.subtract(x, layout.spread(mean))
    variance = layout.mean(sh.multiply(centered, centered))  # two-pass: biased, no cancellation
    return [_normalize(layout, op, centered, scale, offset, variance), mean, variance]


def _expand_grad(op: ir.Operation, layout: _Layout) -> list[ir.Value]:
    x, scale, mean, variance, grad_y = (layout.widen(v) for v in op.operands)
    centered = sh.subtract(x, layout.spread(mean))
    inverse_std = _inverse_std(op, variance)
    grad_offset = sh.reduce_sum(grad_y, layout.reduced_dims)
    grad_y_dot_centered = sh.reduce_sum(sh.multiply(grad_y, centered), layout.reduced_dims)
    grad_scale = sh.multiply(grad_y_dot_centered, inverse_std)
    # grad_x = scale/std * (dy - mean(dy) - centered * mean(dy*centered) / (var + eps))
    count = layout.scalar(layout.count, grad_offset)
    mean_grad_y = sh.binary("divide", grad_offset, count)
    variance_eps = sh.add(variance, _epsilon(op, variance))
    c = sh.binary("divide", sh.binary("divide", grad_y_dot_centered, count), variance_eps)
    inner = sh.subtract(
        sh.subtract(grad_y, layout.spread(mean_grad_y)), sh.multiply(centered, layout.spread(c))
    )
    grad_x = sh.multiply(inner, layout.spread(sh.multiply(scale, inverse_std)))
    return [grad_x, grad_scale, grad_offset]


def _narrow(value: ir.Value, elem: ir.Type) -> ir.Value:
    return value if sh.element_type(value) == elem else sh.convert(value, elem)


EXPANSIONS = {
    "stablehlo.batch_norm_inference": _expand_inference,
    "stablehlo.batch_norm_training": _expand_training,
    "stablehlo.batch_norm_grad": _expand_grad,
}


@dataclasses.dataclass(frozen=True)
class ExpandBatchNorm(ModulePass):
    """Expand stablehlo.batch_norm_{inference,training,grad} into reduce and elementwise ops."""

    NAME = "xhlo-expand-batch-norm"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, BATCH_NORM_OPS):
            layout = _layout(op)
            with ir.InsertionPoint(op), op.location:
                values = EXPANSIONS[op.name](op, layout)
                results = [_narrow(v, sh.element_type(old)) for v, old in zip(values, op.results)]
            for old, new in zip(op.results, results):
                old.replace_all_uses_with(new)
            op.erase()

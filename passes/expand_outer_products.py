"""xhlo-expand-outer-products: a ``dot_general`` that contracts no dimension -> broadcasts and a multiply.

With no contracting dimensions every result element is one product (JAX's
``jnp.outer``, and the per-example weight gradients ``vmap(grad(...))``
makes: a batched outer product). The linalg lowering still writes it as a
contraction, ``out + a * b`` over a zero-filled output; fused with a
transpose after it, that output stays a second result of the fused loop,
written transposed, which nothing vectorizes (per-example gradients of a
64x64 layer for 256 examples: 10 ms, XLA 0.16 ms). As XLA's algebraic
simplifier does, the product becomes a ``multiply`` of the operands
broadcast to the result's shape (converted to its element type first),
which fuses with its neighbours like any elementwise op.

Left alone: products over ``i1`` (a logical ``and``) and dynamic shapes.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir, stablehlo_api
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops


def _broadcast_positions(numbers, lhs_rank: int, rhs_rank: int) -> tuple[list[int], list[int]]:
    """Where each lhs and rhs dimension lands in the result (batch, lhs free, rhs free)."""
    lhs_batch, rhs_batch = list(numbers.lhs_batching_dimensions), list(numbers.rhs_batching_dimensions)
    lhs_free = [d for d in range(lhs_rank) if d not in lhs_batch]
    rhs_free = [d for d in range(rhs_rank) if d not in rhs_batch]
    lhs_positions, rhs_positions = [0] * lhs_rank, [0] * rhs_rank
    for i, (l, r) in enumerate(zip(lhs_batch, rhs_batch)):
        lhs_positions[l], rhs_positions[r] = i, i
    for i, d in enumerate(lhs_free):
        lhs_positions[d] = len(lhs_batch) + i
    for i, d in enumerate(rhs_free):
        rhs_positions[d] = len(lhs_batch) + len(lhs_free) + i
    return lhs_positions, rhs_positions


def _expandable(op: ir.Operation) -> bool:
    numbers = stablehlo_api.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    result = op.results[0].type
    return (not len(numbers.lhs_contracting_dimensions) and isinstance(result, ir.RankedTensorType) and result.has_static_shape
            and sh.element_type(op.results[0]) != sh.i1())


def _expand(op: ir.Operation) -> None:
    numbers = stablehlo_api.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lhs, rhs = op.operands
    shape, elem = sh.shape_of(op.results[0]), sh.element_type(op.results[0])
    lhs_positions, rhs_positions = _broadcast_positions(numbers, len(sh.shape_of(lhs)), len(sh.shape_of(rhs)))
    with ir.InsertionPoint(op), op.location:
        wide = [v if sh.element_type(v) == elem else sh.convert(v, elem) for v in (lhs, rhs)]
        product = sh.multiply(sh.broadcast_in_dim(wide[0], shape, lhs_positions),
                              sh.broadcast_in_dim(wide[1], shape, rhs_positions))
    op.results[0].replace_all_uses_with(product)
    op.erase()


@dataclasses.dataclass(frozen=True)
class ExpandOuterProducts(ModulePass):
    """Rewrite stablehlo.dot_general ops without contracting dimensions into a multiply of broadcasts."""

    NAME = "xhlo-expand-outer-products"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.dot_general"):
            if _expandable(op):
                _expand(op)

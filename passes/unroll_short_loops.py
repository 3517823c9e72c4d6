"""xhlo-unroll-short-loops: a counted loop of a few steps over large tensors is unrolled.

JAX's threefry (behind every ``jax.random`` call) runs its rounds as a
``fori_loop`` of 5 steps whose state is the whole output (two 16 MiB arrays
for 4M numbers). As a loop, each step is its own kernels, which write the
state out and read it back: 5 round trips through memory and a pair of large
buffers per step. Unrolled, elementwise fusion makes the rounds one kernel,
and the step's small carried values (the counter, the rotation constants
threefry carries in a ``tensor<4xui32>``) become constants that canonicalize
folds into the ops.

A ``stablehlo.while`` is unrolled when it is counted (the form
``xhlo-legalize-control-flow`` turns into ``scf.for``: a counter from a
constant, ``counter < bound`` with a constant bound, ``+ 1`` per step), runs
at most ``max-trips`` steps, carries a tensor of at least ``min-elements``
elements (smaller state gains nothing from fusion), holds no call or
communication (an unrolled copy would be a call site of its own), and the
copies stay within ``max-ops`` ops.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir

from .base import ModulePass, walk_ops
from .legalize_control_flow import counted_trip_count

# Calls and communication stay in their loop: each unrolled copy would be a call
# site of its own (a collective's fast path is per site, set up on its first call).
_KEEP_LOOPED = ("func.call", "stablehlo.custom_call", "stablehlo.all_", "stablehlo.reduce_scatter",
                "stablehlo.collective_", "stablehlo.send", "stablehlo.recv", "stablehlo.infeed",
                "stablehlo.outfeed")


def _nested_ops(op: ir.Operation) -> int | None:
    """How many ops the loop holds, None if one of them must stay looped."""
    count = 0
    kept = False

    def visit(inner):
        nonlocal count, kept
        count += 1
        kept = kept or inner.operation.name.startswith(_KEEP_LOOPED)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return None if kept else count


def _large_state(op: ir.Operation, min_elements: int) -> bool:
    return any(
        isinstance(v.type, ir.RankedTensorType)
        and ir.RankedTensorType(v.type).has_static_shape
        and math.prod(ir.RankedTensorType(v.type).shape) >= min_elements
        for v in op.operands
    )


def _remap(op: ir.Operation, mapping: dict) -> None:
    """Point ``op``'s operands (and those of the ops nested in it) through ``mapping``."""

    def visit(inner):
        inner = inner.operation
        for k, operand in enumerate(inner.operands):
            if operand in mapping:
                inner.operands[k] = mapping[operand]
        return ir.WalkResult.ADVANCE

    op.walk(visit)


def _unroll(op: ir.Operation, trips: int) -> None:
    body = op.regions[1].blocks[0]
    ops = list(body.operations)
    terminator, steps = ops[-1], ops[:-1]
    values = list(op.operands)
    with ir.InsertionPoint(op):
        for _ in range(trips):
            mapping = dict(zip(body.arguments, values))
            for inner in steps:
                clone = inner.operation.clone()
                _remap(clone, mapping)
                mapping.update(zip(inner.results, clone.results))
            values = [mapping.get(v, v) for v in terminator.operands]
    for old, new in zip(op.results, values):
        old.replace_all_uses_with(new)
    op.erase()


@dataclasses.dataclass(frozen=True)
class UnrollShortLoops(ModulePass):
    """Unroll counted stablehlo.while loops of a few steps that carry large tensors."""

    NAME = "xhlo-unroll-short-loops"

    max_trips: int = 8
    min_elements: int = 1 << 16
    max_ops: int = 2000

    def run(self, module: ir.Operation) -> None:
        for op in reversed(walk_ops(module, "stablehlo.while")):  # inner loops first
            trips = counted_trip_count(op)
            if trips is None or not 1 <= trips <= self.max_trips or not _large_state(op, self.min_elements):
                continue
            size = _nested_ops(op)
            if size is None or trips * size > self.max_ops:
                continue
            _unroll(op, trips)

"""xhlo-split-reductions: a large reduction to few outputs becomes two, so all cores share it.

``xhlo-parallelize-loops`` runs the loops over a reduction's *outputs* on
threads. A sum of 16M floats has one output, so it ran on one core at half
of XLA's speed (XLA splits the reduction itself). This pass reshapes the
input of such a reduction from ``[K, M]`` (K outputs, M elements each) to
``[K * P, M / P]`` and reduces it twice:

    partial = reduce(reshape(x, [K * P, M / P]), identity) over dimension 1
    result  = reshape(reduce(reshape(partial, [K, P]), init) over dimension 1, result shape)

The first reduction has ``K * P`` (at least ``parts``) independent rows, which
later passes vectorize along the row and spread over the threads; the second
folds ``P`` partial results per output. The rows start from the combiner's
identity and the original init value enters once, in the second reduction,
so only the order of the combinations changes, which StableHLO leaves to the
implementation (and ``xhlo-vectorize`` already reassociates).

Matched: one operand; a body that is one ``add``, ``multiply``, ``maximum``,
``minimum``, ``and``, ``or`` or ``xor`` of its arguments; f32, f64 or integer
elements (f16/bf16/f8 are emulated by a later pass); reduced dimensions that
come after every kept one once unit dimensions are ignored (the reduced
elements of an output are contiguous); fewer than ``parts`` outputs and at
least ``min-elements`` input elements; and a ``P`` that divides M.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops

MIN_ROW = 1024  # elements per row of the first reduction: enough for whole vectors and loop overhead


@dataclasses.dataclass(frozen=True)
class Split:
    outputs: int  # K
    parts: int  # P
    reduced: int  # M


def _is_contiguous(shape: tuple[int, ...], reduced: set[int]) -> bool:
    """Do the reduced dimensions follow every kept one (unit dimensions aside)?"""
    kept = [d for d in range(len(shape)) if d not in reduced and shape[d] != 1]
    return not kept or all(d > kept[-1] for d in reduced if shape[d] != 1)


def _parts(outputs: int, reduced: int, parts: int) -> int | None:
    """The smallest P with ``outputs * P >= parts`` that divides ``reduced`` into rows of
    at least ``MIN_ROW``; None if there is none."""
    for p in range(math.ceil(parts / outputs), reduced // MIN_ROW + 1):
        if reduced % p == 0:
            return p
    return None


def match(op: ir.Operation, parts: int, min_elements: int) -> Split | None:
    """How to split ``op`` (a ``stablehlo.reduce``), None to leave it."""
    if len(op.operands) != 2:
        return None
    x = op.operands[0]
    elem = sh.element_type(x)
    if elem != sh.element_type(op.results[0]) or not (
        isinstance(elem, ir.IntegerType) or str(elem) in ("f32", "f64")
    ):
        return None
    combiner = sh.region_combiner(op.regions[0])
    if combiner is None or sh.identity(combiner, elem) is None:
        return None
    shape = sh.shape_of(x)
    reduced = {int(d) for d in ir.DenseI64ArrayAttr(op.attributes["dimensions"])}
    if not _is_contiguous(shape, reduced) or math.prod(shape) < min_elements:
        return None
    outputs = math.prod(shape[d] for d in range(len(shape)) if d not in reduced)
    size = math.prod(shape[d] for d in reduced)
    if outputs >= parts:
        return None  # the loop over the outputs already has enough iterations for the threads
    p = _parts(outputs, size, parts)
    return None if p is None else Split(outputs, p, size)


def _rewrite(op: ir.Operation, split: Split) -> None:
    x, init = op.operands
    elem = sh.element_type(x)
    combiner = sh.region_combiner(op.regions[0])

    def body(acc: ir.Value, element: ir.Value) -> list[ir.Value]:
        return [sh.binary(combiner, acc, element)]

    with ir.InsertionPoint(op), op.location:
        rows = sh.reshape(x, [split.outputs * split.parts, split.reduced // split.parts])
        start = sh.constant_bits(sh.identity(combiner, elem), elem)
        (partial,) = sh.reduce([rows], [start], [1], body)
        (total,) = sh.reduce([sh.reshape(partial, [split.outputs, split.parts])], [init], [1], body)
        result = sh.reshape(total, sh.shape_of(op.results[0]))
    op.results[0].replace_all_uses_with(result)
    op.erase()


@dataclasses.dataclass(frozen=True)
class SplitReductions(ModulePass):
    """Split large reductions to few outputs into a parallel and a small reduction."""

    NAME = "xhlo-split-reductions"

    # the first reduction has at least this many rows (the threads' work items)
    parts: int = 32
    # reductions of fewer input elements are left alone (one core is as fast)
    min_elements: int = 1 << 18

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.reduce"):
            split = match(op, self.parts, self.min_elements)
            if split is not None:
                _rewrite(op, split)

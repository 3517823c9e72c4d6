"""xhlo-clone-cheap-producers: cheap elementwise producers get a copy per linalg reader.

Upstream's elementwise fusion fuses a producer only into its one user, so a
broadcast read twice (the factor of a complex product, a bias added in two
places) or a centred input ``x - mean`` read by a variance and by the output
of a layer norm is written out at full size and read back by each reader.
XLA duplicates such producers into each of its fusions; this pass does the
same before ``linalg-fuse-elementwise-ops``: each linalg reader gets its own
copy, which fusion folds into it, so the full-size buffer and two passes over
memory per reader go.

Copied: a ``linalg.generic`` with parallel loops only, one result, and a body
of at most ``MAX_BODY_OPS`` ``arith`` ops (a broadcast has none) reading no
i1 tensor (which keeps its readers scalar), for each
reader that reads it as an input (directly, or through a reshape read by it
alone, which fusion folds into the copy) and iterates no more times than it
has elements (broadcasts: any reader; they compute nothing). Producers with more
than ``MAX_READERS`` readers stay shared, which bounds the growth of chains of
copies (readers are copied first, so a producer sees their copies). Runs just
before ``linalg-fuse-elementwise-ops``; no CSE may run in between (it would
merge the copies back).
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, defining_op, generic_iterations, op_name, walk_ops

MAX_BODY_OPS = 4  # arith ops a copied producer repeats per reader (a centred, scaled input)
MAX_READERS = 4
_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")


def _body_ops(op: ir.Operation) -> list[ir.Operation]:
    return [o.operation for o in op.regions[0].blocks[0].operations][:-1]


def _copyable(op: ir.Operation) -> bool:
    """One result, every loop parallel, a body of a few arith ops that ignores its output."""
    if len(op.results) != 1:
        return False
    if any("parallel" not in str(it) for it in op.attributes["iterator_types"]):
        return False
    body = _body_ops(op)
    if len(body) > MAX_BODY_OPS or any(not o.name.startswith("arith.") for o in body):
        return False
    if body and any(_is_bool_tensor(v.type) for v in op.operands):
        return False  # i1 tensors keep their readers scalar (xhlo-vectorize): keep that in one place
    return not list(op.regions[0].blocks[0].arguments[-1].uses)


def _is_bool_tensor(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).element_type == sh.i1()


def _is_broadcast(op: ir.Operation) -> bool:
    return not _body_ops(op) and any(
        ir.RankedTensorType(v.type).rank < ir.RankedTensorType(op.results[0].type).rank
        for v in op.operands[:-1] if isinstance(v.type, ir.RankedTensorType))


def _readers(op: ir.Operation) -> list[list] | None:
    """The uses of ``op``'s result grouped by reader (a reader may read it twice), to give
    each group a copy: every reader, when each is a linalg op and (unless ``op`` is a
    broadcast) one that fusion takes it into without repeating its work; None otherwise."""
    groups: dict = {}
    for use in op.results[0].uses:
        groups.setdefault(use.owner, []).append(use)
    if _is_broadcast(op):
        return list(groups.values()) if all(op_name(r).startswith("linalg.") for r in groups) else None
    if len(groups) > MAX_READERS:
        return None
    elements = math.prod(ir.RankedTensorType(op.results[0].type).shape)
    return list(groups.values()) if all(_fuses_whole(r, uses, elements) for r, uses in groups.items()) else None


def _fuses_whole(reader: ir.Operation, uses: list, elements: int) -> bool:
    """Does ``reader`` take ``uses`` as inputs of a linalg.generic (directly, or through a
    reshape that only it reads, which fusion folds into the copy) that iterates no more
    times than the producer has ``elements``?"""
    if reader.name in _RESHAPES:
        reshaped = list(reader.results[0].uses)
        if len(reshaped) != 1:
            return False
        reader, uses = reshaped[0].owner, reshaped
    if reader.name != "linalg.generic":
        return False
    n_inputs = len(reader.operands) - len(reader.results)
    if any(use.operand_number >= n_inputs for use in uses):
        return False
    iterations = generic_iterations(reader)
    return iterations is not None and iterations <= elements


def _clone_for(op: ir.Operation, uses: list) -> None:
    """A copy of ``op`` (and of its ``tensor.empty`` init) right before ``op``, for the
    uses of one reader."""
    init = defining_op(op.operands[-1], "tensor.empty")
    with ir.InsertionPoint(op):
        fresh_init = init.clone() if init is not None else None  # before the clone: it dominates
        clone = op.clone()
    if fresh_init is not None:
        clone.operands[len(clone.operands) - 1] = fresh_init.results[0]
    for use in uses:
        use.owner.operands[use.operand_number] = clone.results[0]


@dataclasses.dataclass(frozen=True)
class CloneCheapProducers(ModulePass):
    """Give every linalg reader of a broadcast or cheap elementwise op its own copy, so
    fusion takes it."""

    NAME = "xhlo-clone-cheap-producers"

    def run(self, module: ir.Operation) -> None:
        for op in reversed(walk_ops(module, "linalg.generic")):  # readers before producers
            if not _copyable(op):
                continue
            readers = _readers(op)
            if readers is None or len(readers) < 2:
                continue
            for uses in readers[1:]:
                _clone_for(op, uses)

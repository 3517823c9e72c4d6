"""xhlo-fuse-row-reductions: a row's reductions and the elementwise ops that read them, in one loop.

A softmax is four linalg ops after elementwise fusion: a max over each row, an
exponential that reads the row and its max, a sum of the exponentials, a
division by the sum. Vectorized one by one they make four loop nests, each a
pass over the whole tensor through memory (attention's scores: 8 MiB read or
written six times) and each an outlined parallel body that costs LLVM 10-25 ms
to compile. ``linalg-fuse-elementwise-ops`` cannot merge them: a reduction's
result is read broadcast along the row it reduced.

This pass tiles the last elementwise op of such a chain by one row (its
leading parallel loops, the ones the reductions keep) and fuses every producer
of the chain into that row loop with ``fuse_into_containing_op``. A row is
then reduced and normalized while it is in L1, and the chain is one loop nest.

A producer joins only if every user of its result is in the chain (nothing is
computed twice) and its rows are the consumer's rows: both index the leading
loops in order, so a row tile of the consumer needs one row tile of the
producer. A producer the chain reads twice is fused twice and the copies are
merged by a CSE scoped to the row loop (a function-wide CSE would merge
``tensor.empty`` ops, which bufferization must keep apart). Slices of
``tensor.empty`` in the row loop fold to row-sized ones: the row's
temporaries become stack buffers instead of slices of whole-tensor buffers.

Rows shorter than ``min-row-elements`` are left alone: the ops vectorize
better across rows than within a short one.
"""

from __future__ import annotations

import dataclasses
import heapq
import math

from xhlo._mlir import ir

from .base import ModulePass, indexing_maps, walk_ops
from .vectorize import BLAS_TAG, PARALLEL_LOOP, apply_transform, transform_sequence

ROOT_TAG = "xhlo.row_root"
MEMBER_TAG = "xhlo.row_member"


@dataclasses.dataclass(frozen=True)
class FuseRowReductions(ModulePass):
    """Fuse row reductions and their elementwise consumers into one loop over rows."""

    NAME = "xhlo-fuse-row-reductions"
    min_row_elements: int = 128  # elements of one row of the last op (shorter: not fused)

    def run(self, module: ir.Operation) -> None:
        claimed: set[ir.Operation] = set()
        chains = []
        ops = [op for op in walk_ops(module, ("linalg.generic", "linalg.fill")) if BLAS_TAG not in op.attributes]
        position = {op: i for i, op in enumerate(ops)}  # pre-order: program order within a block
        for root in reversed(ops):
            if root in claimed or not _is_elementwise(root):
                continue
            chain = _chain(root, position)
            if chain is None or math.prod(_static_shape(root)[chain[0]:]) < self.min_row_elements:
                continue
            claimed.update(chain[1])
            chains.append((root, *chain))
        if chains:  # one script for all: the fused ops' originals are erased under it
            apply_transform(module, transform_sequence("\n    ".join(_fusion_script(chains))))
            _untag(module)


def _static_shape(op: ir.Operation) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(op.results[0].type).shape)


def _is_elementwise(op: ir.Operation) -> bool:
    """A single-result linalg.generic of static shapes, all loops parallel, writing its
    loops in order (a row tile of its loops is a row tile of its result)."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    if not all(isinstance(v.type, ir.RankedTensorType) and ir.RankedTensorType(v.type).has_static_shape
               for v in op.operands):
        return False
    loops = len(op.attributes["iterator_types"])
    return _leading_parallel(op) == loops and indexing_maps(op)[-1] == ir.AffineMap.get_identity(loops)


def _leading_parallel(op: ir.Operation) -> int:
    """How many leading loops of a linalg op are parallel (all of a fill's)."""
    if op.name == "linalg.fill":
        return ir.RankedTensorType(op.results[0].type).rank
    count = 0
    for kind in op.attributes["iterator_types"]:
        if "parallel" not in str(kind):
            break
        count += 1
    return count


def _indexes_rows(amap: ir.AffineMap, rows: int) -> bool:
    """The map's first ``rows`` results are the loops d0 .. d(rows-1), in order."""
    results = list(amap.results)
    return len(results) >= rows and all(
        isinstance(e, ir.AffineDimExpr) and ir.AffineDimExpr(e).position == i for i, e in enumerate(results[:rows]))


def _row_reduction(op: ir.Operation) -> int | None:
    """The rows a single-result reduction keeps (its leading parallel loops, the rest
    reduced and its result indexed by the rows), None for other ops."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return None
    rows = _leading_parallel(op)
    loops = len(op.attributes["iterator_types"])
    if rows == 0 or rows == loops or any("parallel" in str(k) for k in list(op.attributes["iterator_types"])[rows:]):
        return None
    output = indexing_maps(op)[-1]
    return rows if len(output.results) == rows and _indexes_rows(output, rows) else None


def _joins(producer: ir.Operation, members: set[ir.Operation], rows: int) -> bool:
    """Every user of the producer is in the chain and reads it by the chain's rows."""
    if len(producer.results) != 1 or _leading_parallel(producer) < rows:
        return False
    if producer.name == "linalg.generic" and not _indexes_rows(indexing_maps(producer)[-1], rows):
        return False
    result = producer.results[0]
    if not isinstance(result.type, ir.RankedTensorType) or not ir.RankedTensorType(result.type).has_static_shape:
        return False
    for use in result.uses:
        user = use.owner.operation
        if user not in members or _leading_parallel(user) < rows:
            return False
        if not _indexes_rows(indexing_maps(user)[use.operand_number], rows):
            return False
    return True


def _chain(root: ir.Operation, position: dict[ir.Operation, int]) -> tuple[int, list[ir.Operation]] | None:
    """(rows, producers in program order) of the chain ending at ``root``, None when it
    holds no row reduction. The rows are tried from the most leading loops down."""
    for rows in range(len(_static_shape(root)) - 1, 0, -1):
        producers = _members(root, rows, position)
        if any(_row_reduction(op) == rows for op in producers):
            return rows, producers
    return None


def _members(root: ir.Operation, rows: int, position: dict[ir.Operation, int]) -> list[ir.Operation]:
    """The producers that join ``root``'s chain of ``rows``, in program order.

    Walked back from the root through operands, latest op first: when an op is
    reached, every user it has in the block comes after it and has been decided,
    so only the chain and the ops it reads are visited."""
    members, pending, seen = {root}, [], set()

    def reach(op: ir.Operation) -> None:
        for value in op.operands:
            owner = value.owner
            producer = None if isinstance(owner, ir.Block) else owner.operation
            if producer in position and producer not in seen and producer.block == root.block:
                seen.add(producer)
                heapq.heappush(pending, (-position[producer], id(producer), producer))

    reach(root)
    while pending:
        producer = heapq.heappop(pending)[2]
        if _joins(producer, members, rows):
            members.add(producer)
            reach(producer)
    members.discard(root)
    return sorted(members, key=position.__getitem__)


def _fusion_script(chains: list[tuple[ir.Operation, int, list[ir.Operation]]]) -> list[str]:
    """Tag the chains' ops; per chain, tile its root by one row and fuse its producers into
    the row loop (nearest first)."""
    i64 = ir.IntegerType.get_signless(64)
    lines = []
    member = 0
    for c, (root, rows, producers) in enumerate(chains):
        root.attributes[ROOT_TAG] = ir.IntegerAttr.get(i64, c)
        loops = [f"%c{c}l{i}" for i in range(rows)]
        types = ", ".join(["!transform.any_op"] * (rows + 1))
        sizes = [1] * rows + [0] * (len(_static_shape(root)) - rows)
        lines += [
            f"%c{c} = transform.structured.match attributes{{{ROOT_TAG} = {c} : i64}} in %root "
            ": (!transform.any_op) -> !transform.any_op",
            f"%c{c}t, {', '.join(loops)} = transform.structured.tile_using_for %c{c} tile_sizes {sizes} "
            f": (!transform.any_op) -> ({types})",
        ]
        inner = loops[-1]
        for producer in reversed(producers):
            producer.attributes[MEMBER_TAG] = ir.IntegerAttr.get(i64, member)
            lines += [
                f"%p{member} = transform.structured.match attributes{{{MEMBER_TAG} = {member} : i64}} in %root "
                ": (!transform.any_op) -> !transform.any_op",
                f"%f{member}, %in{member} = transform.structured.fuse_into_containing_op %p{member} into {inner} "
                ": (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)",
            ]
            inner = f"%in{member}"
            member += 1
        lines += [f'transform.annotate {loop} "{PARALLEL_LOOP}" : !transform.any_op' for loop in loops]
        lines += [
            f"transform.apply_cse to {loops[0]} : !transform.any_op",
            f"transform.apply_patterns to {loops[0]} {{\n"
            "      transform.apply_patterns.tensor.fold_tensor_empty\n"
            "    } : !transform.any_op",
        ]
    lines.append("transform.apply_dce to %root : !transform.any_op")  # the fused producers' originals
    return lines


def _untag(module: ir.Operation) -> None:
    for op in walk_ops(module, ("linalg.generic", "linalg.fill")):
        for tag in (ROOT_TAG, MEMBER_TAG):
            if tag in op.attributes:
                del op.attributes[tag]

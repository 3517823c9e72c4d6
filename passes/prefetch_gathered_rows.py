"""xhlo-prefetch-gathered-rows: a loop that copies table rows picked by loaded indices
prefetches the rows of iterations a few steps ahead.

An embedding lookup's row loop reads ``ids[i]``, clamps it, and copies row
``table[ids[i]]``. The rows are random, so the hardware prefetchers only see
each row once its first lines have missed: a row of 1 KiB from a 32 MiB
table waits on memory at every step. The index of a later iteration is known
early (the indices are in memory), so the loop can ask for that row now.
This pass clones the index computation for iteration ``i + distance`` (the
load and the pure integer ops between it and the row index) and prefetches
the lines of that row. A prefetch is a hint that never faults; the cloned
load reads ``ids[i + distance]`` only when that iteration exists (else
``ids[i]`` again).

Rows are prefetched whole up to ``max-row-bytes``; ``distance`` iterations
cover about ``ahead-bytes`` of rows. Runs on buffers, before
``convert-vector-to-scf`` (the row reads are still ``vector.transfer_read``).
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import arith, ir

from .base import ModulePass, walk_ops
from .gemm_to_blas import index_constant

CACHE_LINE = 64
# Integer ops between an index load and the row index (casts, clamps, wrapping of negatives).
_INDEX_MATH = frozenset({"arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci",
                         "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui", "arith.addi", "arith.subi",
                         "arith.cmpi", "arith.select"})


def _outside(value: ir.Value, loop: ir.Operation) -> bool:
    """Defined above the loop: not by an op in it, not an argument of one of its blocks."""
    owner = value.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner
    while op is not None:
        if op.operation == loop:
            return False
        op = op.operation.parent
    return True


def _index_chain(load: ir.Operation, loop: ir.Operation) -> list[ir.Operation]:
    """The load and the single-use pure integer ops after it, their other operands
    defined outside the loop."""
    chain = [load]
    while True:
        users = [u.owner.operation for u in chain[-1].results[0].uses]
        if len(users) != 1 or users[0].name not in _INDEX_MATH or len(users[0].results) != 1:
            return chain
        user = users[0]
        if any(v != chain[-1].results[0] and not _outside(v, loop) for v in user.operands):
            return chain
        chain.append(user)


def _gathered_table(row: ir.Value) -> ir.Value | None:
    """The row-major memref whose rows are read at index ``row`` (its first index)."""
    for use in row.uses:
        reader = use.owner.operation
        if reader.name not in ("vector.transfer_read", "memref.load") or use.operand_number != 1:
            continue
        table = reader.operands[0]
        if isinstance(table.type, ir.MemRefType) and _contiguous_rows(ir.MemRefType(table.type)):
            return table
    return None


def _contiguous_rows(table_type: ir.MemRefType) -> bool:
    """Rank 2 or more, static row shape, elements of a bit width (not complex, not
    index), each row one contiguous block."""
    if table_type.rank < 2 or any(d < 0 for d in table_type.shape[1:]) \
            or not isinstance(table_type.element_type, (ir.FloatType, ir.IntegerType)):
        return False
    strides, _ = table_type.get_strides_and_offset()
    expected = 1
    for size, stride in zip(reversed(table_type.shape[1:]), reversed(strides[1:])):
        if stride != expected:
            return False
        expected *= size
    return True


@dataclasses.dataclass(frozen=True)
class PrefetchGatheredRows(ModulePass):
    """Prefetch the table rows that later iterations of a row-gathering loop copy."""

    NAME = "xhlo-prefetch-gathered-rows"
    ahead_bytes: int = 8192  # bytes of rows requested ahead of the one being copied
    max_row_bytes: int = 2048  # longer rows: their first lines (the hardware prefetcher takes the rest)
    min_row_bytes: int = 256  # shorter rows: neighbours share lines, the loop is not latency-bound

    def run(self, module: ir.Operation) -> None:
        for load in walk_ops(module, "memref.load"):
            loop = load.parent.operation
            if loop.name != "scf.for" or not isinstance(loop.regions[0].blocks[0].arguments[0].type, ir.IndexType):
                continue
            iv = loop.regions[0].blocks[0].arguments[0]
            indices = list(load.operands[1:])
            if iv not in indices or any(v != iv and not _outside(v, loop) for v in indices):
                continue
            chain = _index_chain(load, loop)
            table = _gathered_table(chain[-1].results[0]) if len(chain) > 1 else None
            if table is not None:
                self._prefetch(loop, chain, table)

    def _prefetch(self, loop: ir.Operation, chain: list[ir.Operation], table: ir.Value) -> None:
        table_type = ir.MemRefType(table.type)
        row_bytes = math.prod(table_type.shape[1:]) * table_type.element_type.width // 8
        if row_bytes < self.min_row_bytes:
            return
        distance = max(1, self.ahead_bytes // row_bytes)
        lines = math.ceil(min(row_bytes, self.max_row_bytes) / CACHE_LINE)
        iv = loop.regions[0].blocks[0].arguments[0]
        upper, step = loop.operands[1], loop.operands[2]
        with ir.InsertionPoint(chain[0]), chain[0].location:
            later = arith.addi(iv, arith.muli(step, index_constant(distance)))
            exists = arith.cmpi(arith.CmpIPredicate.slt, later, upper)
            value = arith.select(exists, later, iv)
            clones = {iv: value}
            for op in chain:
                clone = op.clone()
                for i, operand in enumerate(clone.operands):
                    if operand in clones:
                        clone.operands[i] = clones[operand]
                clones[op.results[0]] = clone.results[0]
            row = clone.results[0]
            per_line = CACHE_LINE * 8 // table_type.element_type.width
            inner = _row_start_offsets(table_type, per_line, lines)
            for offsets in inner:
                ir.Operation.create("memref.prefetch", operands=[table, row, *map(index_constant, offsets)],
                                    attributes={"isWrite": ir.BoolAttr.get(False),
                                                "localityHint": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 3),
                                                "isDataCache": ir.BoolAttr.get(True)})


def _row_start_offsets(table_type: ir.MemRefType, per_line: int, lines: int) -> list[tuple[int, ...]]:
    """Indices (after the row's) of the first element of each of a row's first ``lines`` lines."""
    inner = table_type.shape[1:]
    result = []
    for line in range(lines):
        flat, offsets = line * per_line, []
        for size in reversed(inner):
            offsets.append(flat % size)
            flat //= size
        result.append(tuple(reversed(offsets)))
    return result

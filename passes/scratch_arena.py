"""xhlo-scratch-arena: an entry function's temporary buffers become views of one caller-owned arena.

Each call of a compiled program used to ``malloc`` and ``free`` its large
temporaries (the scores of an attention layer, an im2col matrix): glibc hands
such blocks back to the kernel on ``free``, so every call page-faults its
temporaries in again, zeroing memory it is about to overwrite. That cost as
much as the computation itself (attention: 26 ms -> 7.5 ms without it).

This pass gives every public function one extra, last argument, an
``memref<Nxi8>`` arena, and turns each static-shaped ``memref.alloc`` of the
function body's top level whose ``memref.dealloc`` is in that same block into
a ``memref.view`` at a fixed offset of the arena (the dealloc goes away).
Offsets come from a first-fit packing over the allocations' lifetimes (the
span from alloc to dealloc in the block), each 64-byte aligned, so buffers
that are never live together share bytes. The function records the arena
size as ``xhlo.scratch_bytes``; the Executable passes a per-thread buffer of
that size that lives as long as it does, so repeated calls touch warm memory
and allocate nothing. Allocations inside loops or conditionally freed keep
``malloc``.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import arith, ir
from xhlo.executable import SCRATCH_ATTR

from .base import ModulePass
from .memref_copy_to_linalg import row_major_strides

ALIGNMENT = 64


def static_bytes(t: ir.Type) -> int | None:
    """Byte size of a static, row-major, byte-addressable memref type; None otherwise."""
    mt = ir.MemRefType(t)
    elem = mt.element_type
    if not mt.has_static_shape or not isinstance(elem, (ir.FloatType, ir.IntegerType)) or elem.width % 8:
        return None  # complex, index, i1 and sub-byte types: left to malloc
    strides, offset = mt.get_strides_and_offset()
    if offset != 0 or list(strides) != row_major_strides(list(mt.shape)):
        return None
    return math.prod(mt.shape) * elem.width // 8


def _op(owner) -> ir.Operation:
    return owner.operation if hasattr(owner, "operation") else owner


@dataclasses.dataclass
class _Buffer:
    alloc: ir.Operation
    dealloc: ir.Operation
    start: int  # position of the alloc in the block
    end: int  # one past the position of its last use
    size: int
    offset: int = -1


_DATA_READS = frozenset({"memref.load", "vector.transfer_read", "vector.load", "vector.maskedload",
                         "vector.gather", "affine.load", "memref.dealloc"})


def _last_uses(block: ir.Block, roots: list[ir.Value]) -> dict:
    """Root buffer -> position of the last top-level op touching it or anything derived from it.

    Derived: every result of an op that takes a derived value, except data loads
    (a view, a pointer extracted as an index, a loop carrying it all count).
    """
    derived: dict = {root: frozenset([root]) for root in roots}  # value -> the roots it may alias
    last: dict = {}

    def visit(op: ir.Operation, position: int) -> None:
        touched = frozenset().union(*(derived[v] for v in op.operands if v in derived))
        for root in touched:
            last[root] = position
        if touched and op.name not in _DATA_READS:
            for result in op.results:
                derived[result] = touched
        for region in op.regions:
            for inner_block in region.blocks:
                for inner in inner_block.operations:
                    visit(inner.operation, position)

    for position, op in enumerate(block.operations):
        if op.operation.name != "memref.dealloc":
            visit(op.operation, position)
    return last


def _buffers(block: ir.Block) -> list[_Buffer]:
    ops = [op.operation for op in block.operations]
    position = {op: i for i, op in enumerate(ops)}
    candidates = []
    for i, op in enumerate(ops):
        if op.name != "memref.alloc" or len(op.operands) or len(op.results) != 1:
            continue
        size = static_bytes(op.results[0].type)
        if not size:
            continue
        deallocs = [_op(use.owner) for use in op.results[0].uses if _op(use.owner).name == "memref.dealloc"]
        if len(deallocs) != 1 or deallocs[0] not in position:
            continue  # freed conditionally, or not at all (escapes)
        candidates.append(_Buffer(op, deallocs[0], i, position[deallocs[0]], size))
    last = _last_uses(block, [b.alloc.results[0] for b in candidates])
    for b in candidates:
        b.end = last.get(b.alloc.results[0], b.start) + 1  # free after its last use
    return candidates


def pack(sizes_and_lifetimes: list[tuple[int, int, int]], alignment: int = ALIGNMENT) -> tuple[list[int], int]:
    """First-fit offsets for (size, start, end) buffers in order of start; (offsets, arena size)."""
    order = sorted(range(len(sizes_and_lifetimes)), key=lambda i: sizes_and_lifetimes[i][1])
    live: list[tuple[int, int, int]] = []  # (offset, size, end)
    offsets = [0] * len(sizes_and_lifetimes)
    total = 0
    for i in order:
        size, start, end = sizes_and_lifetimes[i]
        live = [b for b in live if b[2] > start]
        size = -(-size // alignment) * alignment
        offset = 0
        for taken_offset, taken_size, _ in sorted(live):
            if offset + size <= taken_offset:
                break
            offset = max(offset, taken_offset + taken_size)
        offsets[i] = offset
        live.append((offset, size, end))
        total = max(total, offset + size)
    return offsets, total


def _is_public_definition(op: ir.Operation) -> bool:
    if op.name != "func.func" or not len(op.regions[0].blocks):
        return False
    visibility = op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
    return visibility is None or ir.StringAttr(visibility).value == "public"


def _add_argument(func: ir.Operation, arg_type: ir.Type) -> ir.Value:
    block = func.regions[0].blocks[0]
    arg = block.add_argument(arg_type, func.location)
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(list(ftype.inputs) + [arg_type], list(ftype.results)))
    if "arg_attrs" in func.attributes:
        attrs = list(ir.ArrayAttr(func.attributes["arg_attrs"]))
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs + [ir.DictAttr.get({})])
    return arg


def _place(func: ir.Operation) -> None:
    block = func.regions[0].blocks[0]
    buffers = _buffers(block)
    if not buffers:
        return
    offsets, total = pack([(b.size, b.start, b.end) for b in buffers])
    with func.location:
        arena = _add_argument(func, ir.MemRefType.get([total], ir.IntegerType.get_signless(8)))
    for buffer, offset in zip(buffers, offsets):
        with ir.InsertionPoint(buffer.alloc), buffer.alloc.location:
            shift = arith.constant(ir.IndexType.get(), offset)
            view = ir.Operation.create(
                "memref.view", results=[buffer.alloc.results[0].type], operands=[arena, shift]).result
        buffer.alloc.results[0].replace_all_uses_with(view)
        buffer.dealloc.erase()
        buffer.alloc.erase()
    func.attributes[SCRATCH_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), total)


@dataclasses.dataclass(frozen=True)
class ScratchArena(ModulePass):
    """Place public functions' freed-in-place temporaries in one caller-provided arena."""

    NAME = "xhlo-scratch-arena"

    def run(self, module: ir.Operation) -> None:
        for op in module.regions[0].blocks[0].operations:
            if _is_public_definition(op.operation):
                _place(op.operation)

"""xhlo-partition-codegen: share LLVM's work on a program between threads.

LLVM optimises and generates machine code for a module on one thread, and for
the benchmark programs that is about half of a compile (attention: 36 of its
85 ms). The loop bodies xhlo-parallelize-loops and xhlo-outline-serial-loops
outlined are reached only through function pointers, so they can be compiled
in modules of their own, on other threads: this pass assigns the bodies to ``parts`` code-generation parts,
greedily by estimated cost (part 0 keeps everything else), and ``xhlo.llvm_jit`` compiles
one module per part, all at once.

In the IR:

* a body given to part p > 0 gets ``xhlo.codegen_part = p``, external linkage
  (the JIT finds it by name) and ``xhlo.codegen_needs``: the symbols it uses,
  which its part gets copies of;
* each ``llvm.mlir.addressof`` of it elsewhere becomes a load from a new
  pointer global, ``@xhlo_link_<body>`` (``xhlo.link_to = "<body>"``), which
  the JIT fills once every part is compiled;
* the module gets ``xhlo.codegen_parts = N``.

A body moves if all it uses can be copied (function declarations, constant
globals up to ``MAX_COPIED_BYTES``, internal functions using nothing else) or
is a function it only calls: such a function stays in part 0 with the state it
keeps (the cache of large allocations), and its calls become calls through
``@xhlo_call_<function>_<part>``, a pointer global of the body's part that the
JIT fills with part 0's function (``xhlo.link_to`` on a slot of part p). A
softmax's row body allocates its rows: it had stayed in part 0, and LLVM
compiled the whole program on one thread (29 ms of softmax's 55). A body that
takes the address of another body (a nested parallel loop) stays. A part is made
only if its cost (``_cost``: ops LLVM does not fold at once, plus LOOP_WEIGHT per
loop) reaches ``min_part_cost``: each part costs LLVM about 4 ms of set-up (its
own pass pipelines, target machine and JIT session), paid on its thread.
"""

from __future__ import annotations

import dataclasses
import os

from xhlo._mlir import ir
from xhlo.llvm_jit import LINK_TO_ATTR, NEEDS_ATTR, PART_ATTR, PARTS_ATTR

from .base import ModulePass
from .parallelize_loops import BODY_ATTR

LINK_PREFIX = "xhlo_link_"
CALL_PREFIX = "xhlo_call_"
MAX_COPIED_BYTES = 1 << 16  # a larger constant keeps its users in part 0


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _symbol(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _is_declaration(op: ir.Operation) -> bool:
    return op.name == "llvm.func" and len(op.regions[0].blocks) == 0


def _is_internal(op: ir.Operation) -> bool:
    return "linkage" in op.attributes and str(op.attributes["linkage"]) in (
        "#llvm.linkage<internal>",
        "#llvm.linkage<private>",
    )


# Ops LLVM folds away at once: the memref descriptors the lowering builds and takes apart.
_FREE_OPS = frozenset({"llvm.mlir.constant", "llvm.insertvalue", "llvm.extractvalue", "llvm.mlir.poison",
                       "llvm.mlir.undef", "llvm.mlir.zero"})
# A loop costs LLVM about as much as this many ops besides its own (loop passes,
# the vectorizer's analysis): measured, sort_1m's merge loops took 0.09 ms of
# LLVM time per op, the straight-line code around them 0.04.
LOOP_WEIGHT = 50


def _loops(func: ir.Operation) -> int:
    """Back edges of a function's CFG (branches to a block at or before their own)."""
    blocks = list(func.regions[0].blocks)
    order = {block: i for i, block in enumerate(blocks)}
    count = 0
    for i, block in enumerate(blocks):
        terminator = block.operations[len(block.operations) - 1]
        count += sum(1 for successor in terminator.successors if order[successor] <= i)
    return count


@dataclasses.dataclass
class _Summary:
    """What the partition needs of one function, from one walk."""

    uses: set[str]  # symbols it calls or takes the address of
    cost: int  # a rough measure of LLVM's work on it: ops LLVM does not fold at once, loops
    addressofs: list[tuple[ir.Operation, str]]  # its llvm.mlir.addressof ops and their targets


def _summarize(func: ir.Operation) -> _Summary:
    summary = _Summary(set(), LOOP_WEIGHT * _loops(func), [])

    def visit(op):
        name = op.name
        if name not in _FREE_OPS:
            summary.cost += 1
        if name == "llvm.mlir.addressof":
            target = ir.FlatSymbolRefAttr(op.attributes["global_name"]).value
            summary.uses.add(target)
            summary.addressofs.append((op.operation, target))
        elif name == "llvm.call" and "callee" in op.attributes:
            summary.uses.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        return ir.WalkResult.ADVANCE

    func.walk(visit, ir.WalkOrder.PRE_ORDER)
    return summary


def _constant_bytes(op: ir.Operation) -> int | None:
    """Size of a constant global's initializer, None when it is not a plain constant."""
    if "constant" not in op.attributes or "value" not in op.attributes or len(op.regions[0].blocks):
        return None  # mutable, or initialized by a region (which may use other symbols)
    value = op.attributes["value"]
    if isinstance(value, ir.StringAttr):
        return len(value.value)
    if isinstance(value, (ir.IntegerAttr, ir.FloatAttr)):
        return 8
    try:
        shaped = ir.ShapedType(value.type)
    except (AttributeError, TypeError, ValueError):
        return None
    count = 1
    for size in shaped.shape:
        count *= size
    return count * getattr(shaped.element_type, "width", 64) // 8


@dataclasses.dataclass(frozen=True)
class PartitionCodegen(ModulePass):
    """Assign outlined loop bodies to code-generation parts compiled on other threads."""

    NAME = "xhlo-partition-codegen"
    parts: int = 0  # 0: as many as the cores this process may use
    min_part_cost: int = 60  # about 3 ms of LLVM time: a part of less gains nothing

    def run(self, module: ir.Operation) -> None:
        parts = self.parts or available_cores()
        if parts < 2:
            return
        top = list(module.regions[0].blocks[0].operations)
        symbols = {_symbol(op.operation): op.operation for op in top if "sym_name" in op.operation.attributes}
        summaries = {name: _summarize(op) for name, op in symbols.items()
                     if op.name == "llvm.func" and not _is_declaration(op)}
        uses = {name: summary.uses for name, summary in summaries.items()}
        movable = {}
        for name, op in symbols.items():
            if BODY_ATTR in op.attributes and name in uses:
                taken = {target for _, target in summaries[name].addressofs}
                found = _movable(name, symbols, uses, taken)
                if found is not None:
                    movable[name] = found
        costs = {name: summary.cost for name, summary in summaries.items()}
        assignment = _assign(costs, movable, parts, self.min_part_cost)
        if assignment:
            addressofs = [pair for summary in summaries.values() for pair in summary.addressofs]
            _apply(module, symbols, movable, assignment, addressofs)


@dataclasses.dataclass
class _Movable:
    """What a body that can move takes along: symbols its part copies, functions it calls in part 0."""

    needs: set[str]
    host_calls: set[str]


def _movable(body: str, symbols: dict, uses: dict, taken: set[str]) -> _Movable | None:
    """How ``body`` moves to another part, None if it cannot (``taken``: the symbols it
    takes the address of, which cannot become calls through a pointer)."""
    moving = _Movable(set(), set())
    for name in uses[body]:
        copied = _copyable_closure([name], symbols, uses)
        if copied is not None:
            moving.needs |= copied
        elif name not in taken and _callable_in_part_0(symbols.get(name)):
            moving.host_calls.add(name)
        else:
            return None
    return moving


def _callable_in_part_0(op: ir.Operation | None) -> bool:
    return op is not None and op.name == "llvm.func" and not _is_declaration(op) and BODY_ATTR not in op.attributes


def _copyable_closure(start: list[str], symbols: dict, uses: dict) -> set[str] | None:
    """``start`` and what it uses, directly or not, if all of it can be copied into another module."""
    needs: set[str] = set()
    pending = list(start)
    while pending:
        name = pending.pop()
        if name in needs:
            continue
        op = symbols.get(name)
        if op is None:
            return None
        if op.name == "llvm.func":
            if not _is_declaration(op):
                if not _is_internal(op) or BODY_ATTR in op.attributes:
                    return None  # the host or another part may need the one definition
                pending.extend(uses[name])
        elif op.name == "llvm.mlir.global":
            size = _constant_bytes(op)
            if size is None or size > MAX_COPIED_BYTES:
                return None
        else:
            return None
        needs.add(name)
    return needs


def _assign(costs: dict[str, int], movable: dict, parts: int, min_part_cost: int) -> dict[str, int]:
    """Greedy balance: the largest body goes to the least loaded part; part 0 starts
    with everything that cannot move. Parts below ``min_part_cost`` are given back to part 0."""
    loads = [sum(cost for name, cost in costs.items() if name not in movable)] + [0] * (parts - 1)
    placed: dict[str, int] = {}
    for name in sorted(movable, key=lambda n: (-costs[n], n)):
        part = min(range(parts), key=lambda p: (loads[p], p))
        loads[part] += costs[name]
        placed[name] = part
    kept = sorted({p for p in placed.values() if p and loads[p] >= min_part_cost})
    renumber = {old: new for new, old in enumerate(kept, start=1)}
    return {name: renumber[p] for name, p in placed.items() if p in renumber}


def _apply(module: ir.Operation, symbols: dict, movable: dict, assignment: dict[str, int],
           addressofs: list[tuple[ir.Operation, str]]) -> None:
    ctx = module.context
    i32 = ir.IntegerType.get_signless(32, ctx)
    module.attributes[PARTS_ATTR] = ir.IntegerAttr.get(i32, max(assignment.values()) + 1)
    external = ir.Attribute.parse("#llvm.linkage<external>", ctx)
    block = module.regions[0].blocks[0]
    for name, part in sorted(assignment.items()):
        body = symbols[name]
        body.attributes[PART_ATTR] = ir.IntegerAttr.get(i32, part)
        _make_external(body, external)
        slots = {callee: f"{CALL_PREFIX}{callee}_{part}" for callee in sorted(movable[name].host_calls)}
        for callee, slot in slots.items():
            if slot not in symbols:
                symbols[slot] = _link_slot(slot, callee, ctx)
                symbols[slot].attributes[PART_ATTR] = ir.IntegerAttr.get(i32, part)
                block.append(symbols[slot])
                _make_external(symbols[callee], external)
        if slots:
            _call_through_slots(body, slots)
        needs = movable[name].needs | set(slots.values())
        body.attributes[NEEDS_ATTR] = ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(n, ctx) for n in sorted(needs)], ctx)
        block.append(_link_slot(LINK_PREFIX + name, name, ctx))
    for op, target in addressofs:
        if target in assignment:
            _load_from_slot(op, target)


def _make_external(func: ir.Operation, external: ir.Attribute) -> None:
    """The JIT finds ``func`` by name in its part."""
    func.attributes["linkage"] = external
    if "sym_visibility" in func.attributes:
        del func.attributes["sym_visibility"]


def _link_slot(slot: str, target: str, ctx: ir.Context) -> ir.Operation:
    """A pointer global the JIT sets to ``target``'s machine code."""
    text = (
        f'llvm.mlir.global external @{slot}() {{addr_space = 0 : i32, alignment = 8 : i64, '
        f'{LINK_TO_ATTR} = "{target}"}} : !llvm.ptr {{\n'
        "  %null = llvm.mlir.zero : !llvm.ptr\n  llvm.return %null : !llvm.ptr\n}"
    )
    return ir.Operation.parse(text, context=ctx)


def _call_through_slots(body: ir.Operation, slots: dict[str, str]) -> None:
    """``llvm.call @callee(args)`` in ``body`` -> ``llvm.call (llvm.load @slot)(args)``, for
    each ``{callee: slot}``."""
    calls = []

    def visit(op):
        if op.name == "llvm.call" and "callee" in op.attributes \
                and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in slots:
            calls.append(op.operation)
        return ir.WalkResult.ADVANCE

    body.walk(visit, ir.WalkOrder.PRE_ORDER)
    for call in calls:
        pointer = _load_slot(call, slots[ir.FlatSymbolRefAttr(call.attributes["callee"]).value])
        attributes = {name: call.attributes[name] for name in call.attributes if name != "callee"}
        segments = list(ir.DenseI32ArrayAttr(attributes["operandSegmentSizes"]))
        attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([segments[0] + 1, *segments[1:]])
        with ir.InsertionPoint(call), call.location:
            indirect = ir.Operation.create("llvm.call", results=[r.type for r in call.results],
                                           operands=[pointer, *call.operands], attributes=attributes)
        for old, new in zip(call.results, indirect.results):
            old.replace_all_uses_with(new)
        call.erase()


def _load_slot(before: ir.Operation, slot: str) -> ir.Value:
    """``llvm.load (llvm.mlir.addressof @slot)``, inserted before ``before``."""
    ptr = ir.Type.parse("!llvm.ptr")
    with ir.InsertionPoint(before), before.location:
        address = ir.Operation.create(
            "llvm.mlir.addressof", results=[ptr], attributes={"global_name": ir.FlatSymbolRefAttr.get(slot)}
        )
        loaded = ir.Operation.create(
            "llvm.load",
            results=[ptr],
            operands=[address.results[0]],
            attributes={"alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 8)},
        )
    return loaded.results[0]


def _load_from_slot(addressof: ir.Operation, body: str) -> None:
    """``llvm.mlir.addressof @body`` -> ``llvm.load (llvm.mlir.addressof @xhlo_link_body)``."""
    addressof.results[0].replace_all_uses_with(_load_slot(addressof, LINK_PREFIX + body))
    addressof.erase()

"""xhlo-outline-serial-loops: large serial loop nests become functions of their own.

``xhlo-partition-codegen`` shares LLVM's work between threads one outlined
function at a time, and what no function holds stays in the public function's
part. A sort's merge passes, a padding copy or a scan that
``xhlo-parallelize-loops`` left serial made that part the largest: sort_1m's
``main`` alone was most of its LLVM time. This pass outlines each top-level
``scf.for`` of a public function with at least ``min-ops`` ops in its nest
exactly as that pass outlines a parallel body (captured values in a struct on
the stack, ``(captures, begin, end)``), but calls it once, over the loop's
whole range, through its function pointer (``func.call_indirect`` of a
``func.constant``), which is what xhlo-partition-codegen redirects.

Smaller nests, down to ``balance-min-ops`` ops, are outlined too while the
public function holds more than its share (one part's) of the program's
estimated LLVM work, largest first: the glue and small loops of a large
training step (a GPT-style Adam step: 7.5K ops in ``main`` against 4.8K in all
bodies) otherwise kept one part busy long after the others (a ResNet-style
step's two parts: 325 and 110 ms of LLVM, now 245 and 193). Work is estimated
as xhlo-partition-codegen does: ops plus ``LOOP_WEIGHT`` per loop.

A loop is left in place when a value it yields is used after it, when a value
it uses cannot travel in the struct, or when it calls ``xhlo_parallel_for`` (a
body holding nested parallel loops would stay in part 0 anyway). One indirect
call per loop nest per run is the run-time cost.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from . import partition_codegen
from .base import ModulePass, functions, symbol_names
from .parallelize_loops import PARALLEL_FOR, Nest, _Outliner, fresh_name, loop_owners


def _is_public(func: ir.Operation) -> bool:
    attrs = func.attributes
    return "sym_visibility" not in attrs or ir.StringAttr(attrs["sym_visibility"]).value == "public"


def _work(names: list[str]) -> int:
    """LLVM's work on ops of these names, estimated as xhlo-partition-codegen does."""
    return len(names) + partition_codegen.LOOP_WEIGHT * names.count("scf.for")


def _op_names(root: ir.Operation) -> list[str]:
    """The names of the ops below and including ``root``, in pre-order."""
    names: list[str] = []

    def visit(op):
        names.append(op.name)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return names


def _distinct_work(module: ir.Operation, func: ir.Operation) -> int:
    """The work of every function but ``func``, counting once those with the same ops in the
    same order (xhlo-merge-identical-bodies later leaves one of them: a layer's bodies
    repeat per layer)."""
    distinct: dict[tuple[str, ...], int] = {}
    for op in functions(module):
        if op != func:
            names = _op_names(op)
            distinct[tuple(names)] = _work(names)
    return sum(distinct.values())


def _by_kind(nests: list[Nest]) -> dict[tuple[str, ...], tuple[int, list[Nest]]]:
    """Nests grouped by their ops' names in order: ``{names: (work of one, nests)}``."""
    kinds: dict[tuple[str, ...], tuple[int, list[Nest]]] = {}
    for nest in nests:
        names = tuple(op.name for op in nest.ops)
        kinds.setdefault(names, (_work(list(names)), []))[1].append(nest)
    return kinds


@dataclasses.dataclass(frozen=True)
class OutlineSerialLoops(ModulePass):
    """Outline large top-level serial loop nests into functions called through a pointer."""

    NAME = "xhlo-outline-serial-loops"
    min_ops: int = 30  # nests this large are always outlined
    balance_min_ops: int = 6  # smaller ones while the public function holds more than its share
    # ... when it holds at least this much work: below, a part's set-up outweighs the gain
    balance_min_work: int = 2000
    parts: int = 0  # code-generation parts (0: as many as the cores this process may use)

    def run(self, module: ir.Operation) -> None:
        names = None
        for func in filter(_is_public, loop_owners(module)):  # the programs' entries
            nests = [n for op in func.regions[0].blocks[0].operations if (n := self._eligible(op.operation))]
            chosen = [n for n in nests if len(n.ops) >= self.min_ops]
            chosen += self._to_balance(module, func, chosen, [n for n in nests if len(n.ops) < self.min_ops])
            base = ir.StringAttr(func.attributes["sym_name"]).value
            for nest in chosen:
                names = names if names is not None else symbol_names(module)
                _Outliner(module, func, nest, fresh_name(base, names, "serial"), serial=True).run()

    def _to_balance(self, module: ir.Operation, func: ir.Operation, chosen: list[Nest],
                    small: list[Nest]) -> list[Nest]:
        """The small nests that bring ``func`` down to one part's share of the work. Nests
        with the same ops become one function (xhlo-merge-identical-bodies), so the other
        parts' work grows by one copy of each kind while ``func`` loses every copy: the
        kinds that take the most work out of ``func`` go first."""
        parts = self.parts or partition_codegen.available_cores()
        if not small or parts < 2:
            return []
        kinds = _by_kind(chosen)
        kept = _work(_op_names(func)) - sum(work * len(nests) for work, nests in kinds.values())
        if kept < self.balance_min_work:
            return []
        others = _distinct_work(module, func) + sum(work for work, _ in kinds.values())
        balancing = []
        for work, nests in sorted(_by_kind(small).values(), key=lambda kind: -kind[0] * len(kind[1])):
            if kept * (parts - 1) <= others:  # no more than one part's share left
                break
            balancing += nests
            kept -= work * len(nests)
            others += work
        return balancing

    def _eligible(self, op: ir.Operation) -> Nest | None:
        if op.name != "scf.for" or any(len(list(result.uses)) for result in op.results):
            return None
        nest = Nest.of(op)
        if len(nest.ops) < min(self.min_ops, self.balance_min_ops):
            return None
        if any(inner.name == "func.call" and ir.FlatSymbolRefAttr(inner.attributes["callee"]).value == PARALLEL_FOR
               for inner in nest.ops):
            return None
        return nest if nest.travels() else None

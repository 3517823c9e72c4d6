"""xhlo-merge-identical-bodies: outlined loop bodies with the same code become one function.

An outlined body reads what it captures from a struct, so loops that differ
only in the buffers they touch outline to identical functions: the four real
products of a complex matrix product in an FFT, the same layer twice in a
network, a gradient's loops mirroring the forward ones. LLVM compiles every
function it is given (about 5 ms per loop body at -O2, see
``benchmarks/README.md``), so this pass keeps the first body of each set of
identical ones and points every reference to the others at it.

Bodies are compared by their printed form, with their own symbol left out;
only bodies that agree on a cheap signature (type, ops per block) are
printed. Merging can make bodies that call merged ones identical in turn, so
the pass repeats until nothing merges.
"""

from __future__ import annotations

import dataclasses
import re

from xhlo._mlir import ir

from .base import ModulePass
from .parallelize_loops import BODY_ATTR


def _name(func: ir.Operation) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


def _signature(func: ir.Operation) -> tuple:
    """Equal for identical bodies, and cheap: the type and the ops in each block."""
    blocks = tuple(len(block.operations) for region in func.regions for block in region.blocks)
    return str(func.attributes["function_type"]), blocks


def _code(func: ir.Operation) -> str:
    """The printed body with its own name replaced (verified already: no re-check; values
    numbered within the function, not the module: five times faster)."""
    return func.get_asm(assume_verified=True, use_local_scope=True).replace(f"@{_name(func)}(", "@_(", 1)


_REFERRERS = {"func.constant": "value", "func.call": "callee"}  # how bodies are reached


def _rename_references(module: ir.Operation, renames: dict[str, str]) -> None:
    """Point every reference to a key of ``renames`` at its value, in one walk (a symbol
    table replacement per merged body walked the whole module each time: 0.4 s for a
    module of 200 bodies)."""
    targets = {name: ir.FlatSymbolRefAttr.get(new) for name, new in renames.items()}

    def visit(op):
        attribute = _REFERRERS.get(op.name)
        if attribute is not None:
            ref = ir.FlatSymbolRefAttr(op.attributes[attribute]).value
            if ref in targets:
                op.attributes[attribute] = targets[ref]
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)


def _merge_once(module: ir.Operation, codes: dict[str, str]) -> bool:
    """One round; ``codes`` keeps the printed bodies between rounds (a body printed
    again only when it referred to a body merged away)."""
    bodies = [
        op.operation
        for op in module.regions[0].blocks[0].operations
        if op.operation.name == "func.func" and BODY_ATTR in op.operation.attributes
    ]
    by_signature: dict[tuple, list[ir.Operation]] = {}
    for body in bodies:
        by_signature.setdefault(_signature(body), []).append(body)
    renames: dict[str, str] = {}
    for group in by_signature.values():
        if len(group) < 2:
            continue
        first_with_code: dict[str, str] = {}
        for body in group:
            name = _name(body)
            code = codes.get(name) or codes.setdefault(name, _code(body))
            if code in first_with_code:
                renames[name] = first_with_code[code]
                body.erase()
            else:
                first_with_code[code] = name
    if not renames:
        return False
    _rename_references(module, renames)
    for name in [n for n, code in codes.items() if set(_REFERENCE.findall(code)) & renames.keys()]:
        del codes[name]
    return True


_REFERENCE = re.compile(r"@([\w$.-]+)")


@dataclasses.dataclass(frozen=True)
class MergeIdenticalBodies(ModulePass):
    """Merge outlined loop bodies whose code is identical (LLVM compiles each one once)."""

    NAME = "xhlo-merge-identical-bodies"

    def run(self, module: ir.Operation) -> None:
        codes: dict[str, str] = {}
        while _merge_once(module, codes):
            pass

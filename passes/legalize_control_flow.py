"""xhlo-legalize-control-flow: stablehlo.while/if/case -> scf.while/if/index_switch.

The upstream linalg lowering in the pinned wheel has no control-flow patterns.
Regions keep their StableHLO bodies (on tensors); stablehlo-legalize-to-linalg
then lowers the ops inside the scf regions like any other.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, walk_ops


def _move_region(src: ir.Region, dst: ir.Region) -> ir.Block:
    block = src.blocks[0]
    block.append_to(dst)
    return block


def _replace_terminator(block: ir.Block, name: str, extra_front: list[ir.Value] = ()) -> None:
    term = block.operations[len(block.operations) - 1]
    with ir.InsertionPoint(term), term.location:
        ir.Operation.create(name, operands=[*extra_front, *term.operands])
    term.erase()


def _extract_scalar(value: ir.Value, before: ir.Operation) -> ir.Value:
    """tensor<T> -> T, inserted before ``before``."""
    elem = ir.RankedTensorType(value.type).element_type
    with ir.InsertionPoint(before), before.location:
        return ir.Operation.create("tensor.extract", results=[elem], operands=[value]).result


def _signless(t: ir.Type) -> ir.Type:
    if isinstance(t, ir.IntegerType):
        return ir.IntegerType.get_signless(ir.IntegerType(t).width)
    return t


def _lower_while(op: ir.Operation) -> None:
    types = [r.type for r in op.results]
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create("scf.while", results=types, operands=list(op.operands), regions=2)
    cond = _move_region(op.regions[0], new.regions[0])
    term = cond.operations[len(cond.operations) - 1]
    flag = _extract_scalar(term.operands[0], term)
    with ir.InsertionPoint(term), term.location:
        ir.Operation.create("scf.condition", operands=[flag, *cond.arguments])
    term.erase()
    body = _move_region(op.regions[1], new.regions[1])
    _replace_terminator(body, "scf.yield")
    _replace_op(op, new)


def _lower_if(op: ir.Operation) -> None:
    flag = _extract_scalar(op.operands[0], op)
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create(
            "scf.if", results=[r.type for r in op.results], operands=[flag], regions=2
        )
    for src, dst in zip(op.regions, new.regions):
        _replace_terminator(_move_region(src, dst), "scf.yield")
    _replace_op(op, new)


def _lower_case(op: ir.Operation) -> None:
    """Out-of-range indices (< 0 or >= N) run the last branch, as the spec says."""
    n = len(op.regions)
    index = _extract_scalar(op.operands[0], op)
    i32 = _signless(index.type)
    with ir.InsertionPoint(op), op.location:
        if i32 != index.type:  # ui32 index: reinterpret
            index = ir.Operation.create(
                "builtin.unrealized_conversion_cast", results=[i32], operands=[index]
            ).result
        as_index = ir.Operation.create(
            "arith.index_cast", results=[ir.IndexType.get()], operands=[index]
        ).result
        new = ir.Operation.create(
            "scf.index_switch",
            results=[r.type for r in op.results],
            operands=[as_index],
            attributes={"cases": ir.DenseI64ArrayAttr.get(list(range(n - 1)))},
            regions=n,
        )
    # regions of scf.index_switch: default first, then the cases in order.
    _replace_terminator(_move_region(op.regions[n - 1], new.regions[0]), "scf.yield")
    for i in range(n - 1):
        _replace_terminator(_move_region(op.regions[i], new.regions[i + 1]), "scf.yield")
    _replace_op(op, new)


def _replace_op(old: ir.Operation, new: ir.Operation) -> None:
    for a, b in zip(old.results, new.results):
        a.replace_all_uses_with(b)
    old.erase()


_LOWERINGS = {"stablehlo.while": _lower_while, "stablehlo.if": _lower_if, "stablehlo.case": _lower_case}


@dataclasses.dataclass(frozen=True)
class LegalizeControlFlow(ModulePass):
    """Lower stablehlo.while/if/case to scf.while/if/index_switch on tensors."""

    NAME = "xhlo-legalize-control-flow"

    def run(self, module: ir.Operation) -> None:
        # Post-order: inner ops first, so moved blocks only contain lowered ops.
        ops = []

        def visit(op):
            if op.name in _LOWERINGS:
                ops.append(op.operation)
            return ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.POST_ORDER)
        for op in ops:
            _LOWERINGS[op.name](op)

"""xhlo-legalize-control-flow: stablehlo.while/if/case -> scf.for/while/if/index_switch.

The upstream linalg lowering in the pinned wheel has no control-flow patterns.
Regions keep their StableHLO bodies (on tensors); stablehlo-legalize-to-linalg
then lowers the ops inside the scf regions like any other.

A counted loop (what ``fori_loop`` and ``scan`` export: a counter starting at
a constant, ``counter < bound`` as the whole condition with a constant or
loop-invariant bound, the body adding 1 to it) becomes an ``scf.for`` with a
static trip count instead of an ``scf.while``. Besides being simpler, this
matters for buffers: the buffer deallocation pass gives the values an
``scf.condition`` forwards fresh ownership by copying them, so an
``scf.while`` copies its whole carried state on every iteration (16 MiB per
step for a ``fori_loop`` over a 16 MiB array), while an ``scf.for`` passes its
iteration buffers on.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

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
    with ir.InsertionPoint(before), before.location:
        return sh.element_of(value)


def _signless(t: ir.Type) -> ir.Type:
    if isinstance(t, ir.IntegerType):
        return ir.IntegerType.get_signless(ir.IntegerType(t).width)
    return t


def _constant_int(value: ir.Value) -> int | None:
    """The value of a scalar signless/signed integer ``stablehlo.constant``, else None."""
    if not isinstance(value, ir.OpResult) or value.owner.name != "stablehlo.constant":
        return None
    t = ir.RankedTensorType(value.type)
    if t.rank != 0 or not isinstance(t.element_type, ir.IntegerType) or ir.IntegerType(t.element_type).is_unsigned:
        return None
    return ir.DenseIntElementsAttr(value.owner.attributes["value"])[0]


def _is_arg(value: ir.Value, block: ir.Block, index: int) -> bool:
    return isinstance(value, ir.BlockArgument) and value.owner == block and value.arg_number == index


def _invariant_constant(value: ir.Value, op: ir.Operation) -> int | None:
    """A constant, or a carried value whose init is constant and that the body passes on unchanged."""
    cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
    if not (isinstance(value, ir.BlockArgument) and value.owner == cond):
        return _constant_int(value)
    index = value.arg_number
    returned = body.operations[len(body.operations) - 1].operands[index]
    return _constant_int(op.operands[index]) if _is_arg(returned, body, index) else None


def counted_trip_count(op: ir.Operation) -> int | None:
    """Iterations of a counted while loop (``i = c0; while i < bound: ...; i = i + 1``), else None."""
    cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
    ops = [o for o in cond.operations if o.operation.name != "stablehlo.constant"]
    if len(ops) != 2 or ops[0].operation.name != "stablehlo.compare":
        return None
    compare = ops[0].operation
    if ops[1].operands[0] != compare.result or "LT" not in str(compare.attributes["comparison_direction"]):
        return None
    counter, bound = compare.operands
    if not isinstance(counter, ir.BlockArgument) or counter.owner != cond:
        return None
    index = counter.arg_number
    start, limit = _constant_int(op.operands[index]), _invariant_constant(bound, op)
    step = body.operations[len(body.operations) - 1].operands[index]
    if start is None or limit is None or not isinstance(step, ir.OpResult):
        return None
    add = step.owner
    if add.name != "stablehlo.add":
        return None
    lhs, rhs = add.operands
    if not ((_is_arg(lhs, body, index) and _constant_int(rhs) == 1) or (_is_arg(rhs, body, index) and _constant_int(lhs) == 1)):
        return None
    return max(0, limit - start)


def _index_constant(value: int) -> ir.Value:
    index = ir.IndexType.get()
    return ir.Operation.create(
        "arith.constant", results=[index], attributes={"value": ir.IntegerAttr.get(index, value)}
    ).result


def _lower_counted_while(op: ir.Operation, trips: int) -> None:
    """The loop as ``scf.for`` over ``[0, trips)``; the counter stays carried (the body reads it)."""
    types = [r.type for r in op.results]
    with ir.InsertionPoint(op), op.location:
        bounds = [_index_constant(v) for v in (0, trips, 1)]
        new = ir.Operation.create("scf.for", results=types, operands=[*bounds, *op.operands], regions=1)
    old = op.regions[1].blocks[0]
    block = new.regions[0].blocks.append(ir.IndexType.get(), *types)
    for arg, replacement in zip(old.arguments, list(block.arguments)[1:]):
        arg.replace_all_uses_with(replacement)
    for inner in list(old.operations):
        block.append(inner.operation)
    _replace_terminator(block, "scf.yield")
    _replace_op(op, new)


def _lower_while(op: ir.Operation) -> None:
    trips = counted_trip_count(op)
    if trips is not None:
        _lower_counted_while(op, trips)
        return
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
    """Lower stablehlo.while/if/case to scf.for/while/if/index_switch on tensors."""

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

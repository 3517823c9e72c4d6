"""xhlo-widen-bool-tensors: i1 tensors passed between linalg.generic ops become i8.

A mask that is not fused into its consumer (it feeds several selects, or comes
from a gather) is an ``i1`` tensor in memory, one byte per element. LLVM packs
vectors of ``i1`` into bits, so xhlo-vectorize leaves every op that reads or
writes such a tensor scalar (a 1M-query ``searchsorted``: three scalar loops per
step). Where an ``i1`` result of a ``linalg.generic`` (from a ``tensor.empty``) is
read only as an input of other ``linalg.generic`` ops (through reshapes), it is stored as ``i8``
instead (``extui`` before the yield, ``trunci`` at the top of each reader), the
same bytes, and both sides vectorize.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, retype, walk_ops

_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")


def _is_bool_tensor(t: ir.Type) -> bool:
    if not isinstance(t, ir.RankedTensorType):
        return False
    elem = ir.RankedTensorType(t).element_type
    return isinstance(elem, ir.IntegerType) and ir.IntegerType(elem).width == 1


def _input_count(op: ir.Operation) -> int:
    return len(op.operands) - len(op.results)  # a generic on tensors has one init per result


def _readers(result: ir.Value, reshapes: list[ir.Value]) -> list[tuple[ir.Operation, int]] | None:
    """(generic, operand index) of every use, through reshapes (collected in ``reshapes``),
    None unless all are generic inputs."""
    readers = []
    for use in result.uses:
        owner = use.owner
        if owner.name in _RESHAPES:
            reshapes.append(owner.results[0])
            further = _readers(owner.results[0], reshapes)
            if further is None:
                return None
            readers.extend(further)
        elif owner.name == "linalg.generic" and use.operand_number < _input_count(owner):
            readers.append((owner, use.operand_number))
        else:
            return None
    return readers or None


def _byte_tensor(t: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get(ir.RankedTensorType(t).shape, ir.IntegerType.get_signless(8))


def _narrow_at_top(block: ir.Block, arg: ir.BlockArgument) -> None:
    """``arg`` becomes i8; its users read ``trunci arg``."""
    first = block.operations[0]
    retype(arg, ir.IntegerType.get_signless(8), _truncate, ir.InsertionPoint(first), first.location)


def _truncate(byte: ir.Value) -> ir.Value:
    return ir.Operation.create("arith.trunci", results=[ir.IntegerType.get_signless(1)], operands=[byte]).result


def _widen(op: ir.Operation, index: int) -> bool:
    result = op.results[index]
    reshapes: list[ir.Value] = []
    readers = _readers(result, reshapes)
    inputs = _input_count(op)
    init = op.operands[inputs + index]
    if readers is None or not isinstance(init, ir.OpResult) or init.owner.name != "tensor.empty":
        return False
    body = op.regions[0].blocks[0]
    with ir.InsertionPoint(op), op.location:
        empty = ir.Operation.create("tensor.empty", results=[_byte_tensor(init.type)], operands=list(init.owner.operands))
    op.operands[inputs + index] = empty.result
    out_arg = body.arguments[inputs + index]
    if len(list(out_arg.uses)):
        _narrow_at_top(body, out_arg)
    else:
        out_arg.set_type(ir.IntegerType.get_signless(8))
    terminator = body.operations[len(body.operations) - 1]
    with ir.InsertionPoint(terminator), terminator.location:
        wide = ir.Operation.create(
            "arith.extui", results=[ir.IntegerType.get_signless(8)], operands=[terminator.operands[index]]
        ).result
    terminator.operands[index] = wide
    for value in [result, *reshapes]:
        value.set_type(_byte_tensor(value.type))
    for reader, operand in readers:
        block = reader.regions[0].blocks[0]
        _narrow_at_top(block, block.arguments[operand])
    return True


@dataclasses.dataclass(frozen=True)
class WidenBoolTensors(ModulePass):
    """Store i1 tensors passed between linalg.generic ops as i8, so both sides vectorize."""

    NAME = "xhlo-widen-bool-tensors"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "linalg.generic"):
            for index, result in enumerate(op.results):
                if _is_bool_tensor(result.type):
                    _widen(op, index)

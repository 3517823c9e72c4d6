"""xhlo-runtime-operands-in-place: runtime calls read row-major operands where they lie.

``xhlo-lower-runtime-calls`` declares ``@xhlo_rt_op<k>`` on identity-layout
memrefs, so bufferization hands a call a fresh copy of any operand with another
layout: a loop-carried value (``scf.for`` iter_args get a fully dynamic layout)
or a slice. A collective in a loop thus copied its whole operand on every step.
The runtime reads each descriptor's offset, so this pass, run after
bufferization, declares the calls' operands (``bufferization.access = "read"``)
row-major with a dynamic offset, casts identity-layout operands to that, and
turns each such copy

    %a = memref.alloc()                  only copied into, read by the call and freed
    memref.copy %x, %a
    func.call @xhlo_rt_op<k>(%a, ...)

into a run-time choice: ``%x`` itself when its strides are row-major, else the copy.

    %v = scf.if <%x is row-major> { reinterpret_cast of %x } else { linalg.copy %x -> %a; cast %a }
    func.call @xhlo_rt_op<k>(%v, ...)
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir, linalg, memref, scf

from .base import ModulePass, op_name, walk_ops
from .lower_runtime_calls import SYMBOL_PREFIX, read_arguments
from .memref_copy_to_linalg import row_major_strides, row_major_view

_DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset()
# ops that may sit between an operand's copy and the call without writing the copied memory
_HARMLESS = ("memref.alloc", "memref.cast", "memref.extract_strided_metadata", "memref.reinterpret_cast")


def _operand_type(t: ir.MemRefType) -> ir.MemRefType:
    """``t``'s shape, row-major strides, any offset."""
    layout = ir.StridedLayoutAttr.get(_DYNAMIC, row_major_strides(list(t.shape)))
    return ir.MemRefType.get(list(t.shape), t.element_type, layout)


def _copy_feeding(buffer: ir.Value, call: ir.Operation) -> ir.Operation | None:
    """The ``memref.copy`` that fills ``buffer``, a fresh alloc whose other uses are one
    operand of ``call`` and deallocations, when nothing between the copy and the call can
    write."""
    owner = buffer.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or op_name(owner) != "memref.alloc":
        return None
    uses = [u for u in buffer.uses if op_name(u.owner) != "memref.dealloc"]
    copies = [u for u in uses if op_name(u.owner) == "memref.copy" and u.operand_number == 1]
    calls = [u for u in uses if u.owner.operation == call]
    if len(uses) != 2 or len(copies) != 1 or len(calls) != 1:
        return None
    copy = copies[0].owner.operation
    return copy if _nothing_writes_between(copy, call) else None


def _nothing_writes_between(first: ir.Operation, last: ir.Operation) -> bool:
    """Every op strictly between ``first`` and ``last`` (one block) only creates buffers or
    views, or copies into a fresh alloc."""
    block_ops = [op.operation for op in first.block.operations]
    for op in block_ops[block_ops.index(first) + 1 :]:
        if op == last:
            return True
        if op_name(op) in _HARMLESS or op_name(op).startswith("arith."):
            continue
        target = op.operands[1].owner if op_name(op) == "memref.copy" else None
        if isinstance(target, (ir.Operation, ir.OpView)) and op_name(target) == "memref.alloc":
            continue
        return False
    return False


def _erase_if_only_freed(buffer: ir.Value) -> None:
    """Drop an alloc that no one uses any more but its deallocations."""
    owner = buffer.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or op_name(owner) != "memref.alloc":
        return
    uses = [u.owner for u in buffer.uses]
    if all(op_name(user) == "memref.dealloc" for user in uses):
        for user in uses:
            user.erase()
        buffer.owner.erase()


def _in_place(operand: ir.Value, call: ir.Operation) -> ir.Value:
    """The value to pass for ``operand``, of ``_operand_type``."""
    target_type = _operand_type(ir.MemRefType(operand.type))
    copy = _copy_feeding(operand, call)
    if copy is None:
        return memref.cast(target_type, operand)
    source = copy.operands[0]
    with ir.InsertionPoint(copy):
        view, row_major = row_major_view(source, list(target_type.shape))
        if row_major is None:  # row-major by its type: no copy, no buffer
            copy.erase()
            return view
        choice = scf.IfOp(row_major, [target_type], has_else=True)
        with ir.InsertionPoint(choice.then_block):
            scf.yield_([view])
        with ir.InsertionPoint(choice.else_block):
            # not row-major here: element loops, no memcpy versioning (xhlo-memref-copy-to-linalg)
            linalg.copy(source, outs=[operand])
            scf.yield_([memref.cast(target_type, operand)])
    copy.erase()
    return choice.results[0]


@dataclasses.dataclass(frozen=True)
class RuntimeOperandsInPlace(ModulePass):
    """Pass row-major operands to runtime calls where they lie instead of copies."""

    NAME = "xhlo-runtime-operands-in-place"

    def run(self, module: ir.Operation) -> None:
        reads = {name: sorted(args) for name, args in read_arguments(module).items()
                 if name.startswith(SYMBOL_PREFIX)}
        for call in walk_ops(module, "func.call"):
            for position in reads.get(ir.FlatSymbolRefAttr(call.attributes["callee"]).value, ()):
                operand = call.operands[position]
                with ir.InsertionPoint(call), call.location:
                    call.operands[position] = _in_place(operand, call)
                _erase_if_only_freed(operand)
        symbols = ir.SymbolTable(module)
        for name, positions in reads.items():
            declaration = symbols[name].operation
            function = ir.FunctionType(ir.TypeAttr(declaration.attributes["function_type"]).value)
            inputs = list(function.inputs)
            for position in positions:
                inputs[position] = _operand_type(ir.MemRefType(inputs[position]))
            declaration.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(inputs, list(function.results))
            )

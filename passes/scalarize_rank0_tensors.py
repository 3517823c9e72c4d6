"""xhlo-scalarize-rank0-tensors: rank-0 (and other one-element) tensors in loops and
elementwise ops become scalars.

StableHLO has no scalars: a loop counter, a ``while_loop``'s scalar state or a
scatter's one-element window combine is a ``tensor<T>``, and JAX code run on one
element carries ``tensor<1xT>`` state. Bufferized as is, every such value is a
heap buffer, and a loop that carries or computes one allocates and frees it on
every iteration (a 1M-update ``segment_sum`` spent 20 ns per update in
``malloc``; ``gammainc`` of one element, whose series loops carry fifteen
``tensor<1xf32>``, ran 10x XLA's time). On linalg/scf, before bufferization,
this pass makes them SSA scalars:

* ``scf.for``/``scf.while`` carried values and ``scf.if``/``scf.index_switch``
  results of one element are carried as that element (``tensor.extract`` where a
  tensor goes in, ``tensor.from_elements`` where one comes out);
* a ``linalg.generic`` whose operands and results all have one element becomes
  its body's scalar ops, run once (its iteration space is one point, so a
  reduction's body combines the one input element with the init);
* a one-element ``tensor.insert_slice`` of a ``tensor.from_elements`` (through
  reshapes) becomes a ``tensor.insert`` (a store, no temporary buffer).

The ``canonicalize`` that follows folds ``tensor.extract(tensor.from_elements)``
pairs, so chains of scalar ops no longer touch memory.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir

from .base import ModulePass, retype, walk_ops
from .gemm_to_blas import index_constant

_LOOPS = ("scf.for", "scf.while", "scf.if", "scf.index_switch")
_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape", "tensor.reshape")


def _is_single_element(t: ir.Type) -> bool:
    """One element: rank 0, or a static shape of 1s."""
    if not isinstance(t, ir.RankedTensorType):
        return False
    t = ir.RankedTensorType(t)
    return t.has_static_shape and math.prod(t.shape) == 1


def _element(t: ir.Type) -> ir.Type:
    return ir.RankedTensorType(t).element_type


def _element_of(value: ir.Value) -> ir.Value:
    """The one element of ``value`` (``tensor.extract`` at index 0 of every dim)."""
    zeros = [index_constant(0)] * ir.RankedTensorType(value.type).rank
    return ir.Operation.create("tensor.extract", results=[_element(value.type)], operands=[value, *zeros]).result


def _tensor_like(t: ir.Type):
    """``scalar -> tensor of type t`` (``tensor.from_elements``), for ``retype``."""
    return lambda scalar: ir.Operation.create("tensor.from_elements", results=[t], operands=[scalar]).result


def _terminator(block: ir.Block) -> ir.Operation:
    return block.operations[len(block.operations) - 1].operation


def _scalar_operands(op: ir.Operation, positions: list[int], first: int = 0) -> None:
    """Operands ``first + p`` of ``op`` (rank-0 tensors) replaced by their element."""
    with ir.InsertionPoint(op), op.location:
        for p in positions:
            op.operands[first + p] = _element_of(op.operands[first + p])


def _scalar_arg(block: ir.Block, index: int) -> None:
    """Block argument ``index`` (a rank-0 tensor) becomes its element; its users read a
    ``tensor.from_elements`` at the top of the block."""
    arg, first = block.arguments[index], block.operations[0]  # the terminator at least
    retype(arg, _element(arg.type), _tensor_like(arg.type), ir.InsertionPoint(first), first.location)


def _scalar_result(op: ir.Operation, index: int) -> None:
    """Result ``index`` (a rank-0 tensor) becomes its element; its users read a
    ``tensor.from_elements`` right after ``op``."""
    result = op.results[index]
    retype(result, _element(result.type), _tensor_like(result.type), ir.InsertionPoint.after(op), op.location)


def _scalarize_yields(region: ir.Region, positions: list[int], first: int = 0) -> None:
    for block in region.blocks:
        _scalar_operands(_terminator(block), positions, first)


def _scalarize_for(op: ir.Operation) -> None:
    inits = [p for p, r in enumerate(op.results) if _is_single_element(r.type)]
    _scalar_operands(op, inits, first=3)  # lower bound, upper bound, step come first
    _scalarize_yields(op.regions[0], inits)
    for p in inits:
        _scalar_arg(op.regions[0].blocks[0], 1 + p)  # after the induction variable
        _scalar_result(op, p)


def _scalarize_while(op: ir.Operation) -> None:
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    carried = [p for p, a in enumerate(before.arguments) if _is_single_element(a.type)]
    forwarded = [p for p, r in enumerate(op.results) if _is_single_element(r.type)]
    _scalar_operands(op, carried)
    _scalar_operands(_terminator(before), forwarded, first=1)  # scf.condition(flag, values...)
    _scalarize_yields(op.regions[1], carried)
    for p in carried:
        _scalar_arg(before, p)
    for p in forwarded:
        _scalar_arg(after, p)
        _scalar_result(op, p)


def _scalarize_branches(op: ir.Operation) -> None:
    """scf.if / scf.index_switch: rank-0 results come out of every branch as scalars."""
    results = [p for p, r in enumerate(op.results) if _is_single_element(r.type)]
    for region in op.regions:
        _scalarize_yields(region, results)
    for p in results:
        _scalar_result(op, p)


def _scalarize_generic(op: ir.Operation) -> None:
    """A one-element ``linalg.generic``: its body's ops, on the operands' elements
    (``linalg.index`` is 0: every loop has one iteration)."""
    if not all(_is_single_element(v.type) or not isinstance(v.type, ir.ShapedType) for v in op.operands):
        return
    if not all(_is_single_element(r.type) for r in op.results) or len(op.regions[0].blocks) != 1:
        return
    body = op.regions[0].blocks[0]
    with ir.InsertionPoint(op), op.location:
        for arg, operand in zip(body.arguments, op.operands):
            if len(list(arg.uses)):
                arg.replace_all_uses_with(_element_of(operand) if _is_single_element(operand.type) else operand)
        terminator = _terminator(body)
        for inner in list(body.operations)[:-1]:
            inner = inner.operation
            if inner.name == "linalg.index":
                inner.results[0].replace_all_uses_with(index_constant(0))
                inner.erase()
            else:
                inner.move_before(op)
        for result, value in zip(op.results, terminator.operands):
            result.replace_all_uses_with(_tensor_like(result.type)(value))
    op.erase()


def _single_element_source(value: ir.Value) -> ir.Value | None:
    """The scalar a one-element tensor was made from (through reshapes), else None."""
    while isinstance(value, ir.OpResult) and value.owner.name in _RESHAPES:
        value = value.owner.operands[0]
    if isinstance(value, ir.OpResult) and value.owner.name == "tensor.from_elements":
        owner = value.owner
        if len(owner.operands) == 1:
            return owner.operands[0]
    return None


def _insert_single_element(op: ir.Operation) -> None:
    """``tensor.insert_slice`` of a one-element ``from_elements`` -> ``tensor.insert``."""
    source_type = ir.RankedTensorType(op.operands[0].type)
    if not source_type.has_static_shape or math.prod(source_type.shape) != 1:
        return
    if "operandSegmentSizes" not in op.attributes:
        return
    segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    static_offsets = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
    static_sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    if segments[3:] != [0, 0] or any(size != 1 for size in static_sizes):  # static unit sizes and strides
        return
    scalar = _single_element_source(op.operands[0])
    if scalar is None:
        return
    dynamic = iter(list(op.operands)[2 : 2 + segments[2]])
    with ir.InsertionPoint(op), op.location:
        indices = [
            next(dynamic) if offset == ir.ShapedType.get_dynamic_stride_or_offset() else index_constant(offset)
            for offset in static_offsets
        ]
        insert = ir.Operation.create(
            "tensor.insert", results=[op.results[0].type], operands=[scalar, op.operands[1], *indices]
        )
    op.results[0].replace_all_uses_with(insert.result)
    op.erase()


@dataclasses.dataclass(frozen=True)
class ScalarizeRank0Tensors(ModulePass):
    """Carry one-element tensors of scf loops and branches, and compute one-element linalg.generic ops, as scalars."""

    NAME = "xhlo-scalarize-rank0-tensors"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "linalg.generic"):
            _scalarize_generic(op)
        for op in walk_ops(module, _LOOPS):
            if op.name == "scf.for":
                _scalarize_for(op)
            elif op.name == "scf.while":
                _scalarize_while(op)
            else:
                _scalarize_branches(op)
        for op in walk_ops(module, "tensor.insert_slice"):
            _insert_single_element(op)

"""xhlo-fold-empty-tensors: data movement that yields no elements is an empty constant.

StableHLO lets a slice start at the end of a dimension (``x[:, 2:2]`` of a
dimension of 2) and a negative padding remove a whole dimension. The upstream
linalg lowering turns both into a ``tensor.extract_slice`` at that offset, which
the provider's verifier rejects ("offset 1 is out-of-bounds: 2 >= 2"), so the
program did not compile: ``jax.grad`` of ``lax.cumlogsumexp`` over an axis of
a power-of-two length slices its last level so. Such a result holds nothing
to compute, and no data-movement op has an effect besides its result, so it
becomes a ``stablehlo.constant`` with no elements.

A padding of an operand without elements is its padding value, broadcast. A
``concatenate`` drops its operands without elements, and one left with a
single operand is that operand. The upstream lowering of a concatenation of one
operand and an empty one is a copy through ``tensor.extract``, which the linalg
vectorizer turns into a ``vector.gather`` of linearized indices: wrong once the
operand is a strided view (it read across rows of the slice's source).
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, walk_ops

_DATA_MOVEMENT = (
    "stablehlo.slice", "stablehlo.pad", "stablehlo.dynamic_slice", "stablehlo.real_dynamic_slice",
    "stablehlo.reverse", "stablehlo.transpose", "stablehlo.reshape", "stablehlo.broadcast_in_dim",
    "stablehlo.concatenate", "stablehlo.gather",
)


def _has_no_elements(value: ir.Value) -> bool:
    return isinstance(value.type, ir.RankedTensorType) and value.type.has_static_shape \
        and 0 in ir.RankedTensorType(value.type).shape


@dataclasses.dataclass(frozen=True)
class FoldEmptyTensors(ModulePass):
    """Replace data-movement ops whose result has no elements by empty constants."""

    NAME = "xhlo-fold-empty-tensors"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, _DATA_MOVEMENT):
            result = op.results[0]
            if op.name == "stablehlo.concatenate" and not _has_no_elements(result):
                _drop_empty_operands(op)
                continue
            if op.name == "stablehlo.pad" and _has_no_elements(op.operands[0]) and not _has_no_elements(result):
                _padding_only(op)
                continue
            if not _has_no_elements(result):
                continue
            with ir.InsertionPoint(op), op.location:
                empty = _empty(result.type)
            result.replace_all_uses_with(empty)
            op.erase()


def _empty(tensor_type: ir.Type) -> ir.Value:
    """A constant of ``tensor_type``, which has no elements. The bindings cannot hold a
    complex ``dense<>`` attribute: a complex one is made of two real ones."""
    element = ir.RankedTensorType(tensor_type).element_type
    if isinstance(element, ir.ComplexType):
        part = _empty(ir.RankedTensorType.get(ir.RankedTensorType(tensor_type).shape, element.element_type))
        return ir.Operation.create("stablehlo.complex", results=[tensor_type], operands=[part, part]).results[0]
    value = ir.Attribute.parse(f"dense<> : {tensor_type}")
    return ir.Operation.create("stablehlo.constant", results=[tensor_type], attributes={"value": value}).results[0]


def _drop_empty_operands(concatenate: ir.Operation) -> None:
    """Concatenate only the operands with elements (one such operand, with or without
    empty ones beside it: the operand itself)."""
    kept = [v for v in concatenate.operands if not _has_no_elements(v)]
    if len(kept) == 1:
        concatenate.results[0].replace_all_uses_with(kept[0])
        concatenate.erase()
        return
    if len(kept) == len(concatenate.operands):
        return
    with ir.InsertionPoint(concatenate), concatenate.location:
        fewer = ir.Operation.create("stablehlo.concatenate", results=[concatenate.results[0].type], operands=kept,
                                    attributes={"dimension": concatenate.attributes["dimension"]})
    concatenate.results[0].replace_all_uses_with(fewer.results[0])
    concatenate.erase()


def _padding_only(pad: ir.Operation) -> None:
    """A padding of nothing: the padding value everywhere."""
    with ir.InsertionPoint(pad), pad.location:
        filled = ir.Operation.create(
            "stablehlo.broadcast_in_dim", results=[pad.results[0].type], operands=[pad.operands[1]],
            attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])})
    pad.results[0].replace_all_uses_with(filled.results[0])
    pad.erase()

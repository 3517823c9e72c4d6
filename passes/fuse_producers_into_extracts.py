"""xhlo-fuse-producers-into-extracts: elementwise producers computed where a gather reads them.

A gather lowers to a ``linalg.generic`` whose body reads its operand with
``tensor.extract``. ``linalg-fuse-elementwise-ops`` fuses only operands read
through indexing maps, so an elementwise producer of the gathered tensor is
computed whole and stored before a few of its elements are read: a
cross-entropy over integer labels wrote the full 4096x1000 ``log_softmax``
to read 4096 of its values (XLA computes only those). This pass replaces
such an extract with the producer's body applied to extracts of the
producer's inputs at the same position (through the producer's indexing
maps), so the producer dies, and its own producers can follow the same way
(``xhlo-clone-cheap-producers`` has given cheap ones a copy per reader).

Fused: the one reader of a producer, a ``tensor.extract`` directly in the
body of a ``linalg.generic``
that iterates no more times than the producer has elements (recomputing is
then no more work than computing it all) and whose body stays within
``MAX_BODY_OPS``; the producer a ``linalg.generic`` with parallel iterators
only, identity output maps, inputs read through dimensions and constants,
and a body without regions or gathers of its own that does not read its
outputs.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import arith, ir, tensor

from .base import ModulePass, defining_op, generic_iterations, indexing_maps, walk_ops

# Ops a gather's body may grow to: producers that read one input twice (x * x) copy its
# producers twice, so a deep chain of them would grow exponentially.
MAX_BODY_OPS = 64


def _fusible_producer(op: ir.Operation) -> bool:
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    if any("parallel" not in it for it in iterators):
        return False
    maps = indexing_maps(op)
    n_inputs = len(op.operands) - len(op.results)
    if any(m != ir.AffineMap.get_minor_identity(len(iterators), len(iterators)) for m in maps[n_inputs:]):
        return False
    if any(not isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)) for m in maps[:n_inputs] for e in m.results):
        return False
    block = op.regions[0].blocks[0]
    if any(len(inner.regions) for inner in block.operations):
        return False  # nested ops would keep reading the producer's block (scf.if of a concatenate)
    if any(inner.operation.name == "tensor.extract" for inner in block.operations):
        return False  # a gather itself: chains of them (a binary search) would nest without end
    return all(not list(arg.uses) for arg in block.arguments[n_inputs:])


def _position(expr: ir.AffineExpr, indices: list[ir.Value]) -> ir.Value:
    if isinstance(expr, ir.AffineDimExpr):
        return indices[ir.AffineDimExpr(expr).position]
    return arith.ConstantOp(ir.IndexType.get(), ir.AffineConstantExpr(expr).value).result


def _fuse(extract: ir.Operation, producer: ir.Operation) -> None:
    """Replace ``extract`` (of a result of ``producer``) by the producer's body at its indices."""
    indices = list(extract.operands[1:])
    n_inputs = len(producer.operands) - len(producer.results)
    block = producer.regions[0].blocks[0]
    mapping: dict = {}
    with ir.InsertionPoint(extract), extract.location:
        for value, amap, arg in zip(producer.operands[:n_inputs], indexing_maps(producer), block.arguments):
            if isinstance(value.type, ir.RankedTensorType):
                at = [_position(e, indices) for e in amap.results]
                mapping[arg] = tensor.ExtractOp(value, at).result
            else:
                mapping[arg] = value
        yielded = None
        for inner in block.operations:
            inner = inner.operation
            if inner.name == "linalg.yield":
                yielded = [mapping.get(v, v) for v in inner.operands]
                break
            if inner.name == "linalg.index":
                mapping[inner.results[0]] = indices[ir.IntegerAttr(inner.attributes["dim"]).value]
                continue
            clone = inner.clone()
            for i, operand in enumerate(clone.operands):
                if operand in mapping:
                    clone.operands[i] = mapping[operand]
            for old, new in zip(inner.results, clone.results):
                mapping[old] = new
    extract.results[0].replace_all_uses_with(yielded[ir.OpResult(extract.operands[0]).result_number])
    extract.erase()
    if all(not list(r.uses) for r in producer.results):
        producer.erase()


def _candidate(extract: ir.Operation) -> ir.Operation | None:
    """The producer to fuse into ``extract``, if it qualifies."""
    consumer = extract.parent
    if consumer is None or consumer.name != "linalg.generic":
        return None
    producer = defining_op(extract.operands[0], "linalg.generic")
    if producer is None or not _fusible_producer(producer):
        return None
    if sum(len(list(result.uses)) for result in producer.results) != 1:
        return None  # read elsewhere too: it stays, and a copy would repeat its work
    grown = len(consumer.regions[0].blocks[0].operations) + len(producer.regions[0].blocks[0].operations)
    if grown > MAX_BODY_OPS:
        return None
    iterations = generic_iterations(consumer)
    elements = math.prod(ir.RankedTensorType(extract.operands[0].type).shape)
    return producer if iterations is not None and iterations <= elements else None


@dataclasses.dataclass(frozen=True)
class FuseProducersIntoExtracts(ModulePass):
    """Compute elementwise linalg.generic producers inside the gathers (tensor.extract in a
    linalg.generic body) that read them, instead of materializing them."""

    NAME = "xhlo-fuse-producers-into-extracts"

    def run(self, module: ir.Operation) -> None:
        fused = True
        while fused:  # the extracts a fusion makes may read fusible producers in turn
            fused = False
            for extract in walk_ops(module, "tensor.extract"):
                producer = _candidate(extract)
                if producer is not None:  # no extract of the list dies but this one:
                    _fuse(extract, producer)  # producers read once and hold none
                    fused = True

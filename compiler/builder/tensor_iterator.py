"""OpenVINO's TensorIterator (seed 004) as a builder op lowering to ``stablehlo.while``.

A TensorIterator runs a ``body`` network repeatedly. Its ``port_map`` says how
external inputs reach body parameters (whole, or sliced along an axis, one
slice per iteration) and how body results become outputs (the last value, or
all iterations concatenated along an axis); ``back_edges`` copy a body result
into a body parameter for the next iteration. Here the body is an
XlaComputation (or callable): ``internal_layer_id`` of an input entry and the
``to`` end of a back edge name a body *parameter number*; ``internal_layer_id``
of an output entry and the ``from`` end of a back edge name a body *result
index* (the position in the body's result tuple).

Lowering (SEMANTICS 4.2): one ``While`` whose state carries the iteration
counter, back-edge values, invariant and sliced inputs and the output
accumulators; each iteration takes ``DynamicSlice``s of the sliced inputs,
inlines the body and writes axis outputs with ``DynamicUpdateSlice``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ._support import array, resolve_builder
from .builder import XlaComputation, XlaOp, as_computation
from .shape import Shape

__all__ = ["TensorIterator", "TensorIteratorInput", "TensorIteratorOutput"]


@dataclasses.dataclass(frozen=True)
class _PortMapEntry:
    """One ``port_map`` entry: an external port, the body's parameter or result,
    and optionally how it is sliced (inputs) or concatenated (outputs)."""

    external_port_id: int
    internal_layer_id: int
    axis: int | None = None
    start: int = 0
    end: int = -1
    stride: int = 1
    part_size: int | None = None


@dataclasses.dataclass(frozen=True)
class TensorIteratorInput(_PortMapEntry):
    """``<input external_port_id internal_layer_id [axis start end stride]/>``;
    ``part_size``: slice extent along ``axis`` (default: the body parameter's, else |stride|)."""


@dataclasses.dataclass(frozen=True)
class TensorIteratorOutput(_PortMapEntry):
    """``<output external_port_id internal_layer_id [axis start end stride]/>``."""


_FIELDS = {f.name for f in dataclasses.fields(TensorIteratorInput)}


def _entry(cls, value):
    if isinstance(value, (TensorIteratorInput, TensorIteratorOutput)):
        return cls(**dataclasses.asdict(value))
    fields = {k.replace("-", "_"): v for k, v in dict(value).items() if k != "kind"}
    unknown = set(fields) - _FIELDS
    if unknown:
        raise ValueError(f"TensorIterator: unknown port_map attributes {sorted(unknown)}")
    return cls(**{k: (int(v) if v is not None else None) for k, v in fields.items()})


def _port_map(port_map) -> tuple[list[TensorIteratorInput], list[TensorIteratorOutput]]:
    if isinstance(port_map, dict):
        return (
            [_entry(TensorIteratorInput, e) for e in port_map.get("input", ())],
            [_entry(TensorIteratorOutput, e) for e in port_map.get("output", ())],
        )
    inputs, outputs = [], []
    for e in port_map:
        kind = e.get("kind") if isinstance(e, dict) else None
        if isinstance(e, TensorIteratorOutput) or kind == "output":
            outputs.append(_entry(TensorIteratorOutput, e))
        else:
            inputs.append(_entry(TensorIteratorInput, e))
    return inputs, outputs


def _back_edges(back_edges) -> list[tuple[int, int]]:
    edges = []
    for e in back_edges or ():
        if isinstance(e, dict):
            edges.append(
                (
                    int(e.get("from-layer", e.get("from_layer"))),
                    int(e.get("to-layer", e.get("to_layer"))),
                )
            )
        else:
            src, dst = e
            edges.append((int(src), int(dst)))
    return edges


def _boundary(b: int, size: int) -> int:
    """A start/end position on the axis; negative values count from the end (D+1+b)."""
    return b if b >= 0 else size + 1 + b


def _iterations(what: str, size: int, entry, part: int) -> int:
    if entry.stride == 0:
        raise ValueError(f"TensorIterator: {what} has stride 0")
    first, last = _boundary(entry.start, size), _boundary(entry.end, size)
    if not (0 <= first <= size and 0 <= last <= size):
        raise ValueError(
            f"TensorIterator: {what} start/end ({entry.start}, {entry.end}) are outside an axis of size {size}"
        )
    span = last - first if entry.stride > 0 else first - last
    if span < part:
        return 0
    return (span - part) // abs(entry.stride) + 1


def TensorIterator(
    body, inputs: Sequence[XlaOp], port_map, back_edges=(), num_iterations: int | None = None
) -> XlaOp:
    """Run ``body`` over slices of ``inputs`` as OpenVINO's TensorIterator does.

    Returns the outputs ordered by ``external_port_id`` (one XlaOp, or a tuple).
    ``num_iterations`` is only needed when no input is sliced.
    """
    inputs = list(inputs)
    in_entries, out_entries = _port_map(port_map)
    edges = _back_edges(back_edges)
    for i, x in enumerate(inputs):
        array("TensorIterator", x, f"input {i}")
    by_param: dict[int, TensorIteratorInput] = {}
    for e in in_entries:
        if not 0 <= e.external_port_id < len(inputs):
            raise ValueError(
                f"TensorIterator: input port {e.external_port_id} does not name one of the {len(inputs)} inputs"
            )
        if e.internal_layer_id in by_param:
            raise ValueError(
                f"TensorIterator: body parameter {e.internal_layer_id} is fed by two port_map inputs"
            )
        by_param[e.internal_layer_id] = e
    num_params = len(by_param)
    if sorted(by_param) != list(range(num_params)):
        raise ValueError(
            f"TensorIterator: port_map inputs must feed body parameters 0..n-1, got {sorted(by_param)}"
        )

    # body parameter shapes and iteration count
    given = body if isinstance(body, XlaComputation) else None
    param_shapes, parts, counts = [], {}, []
    for p in range(num_params):
        e = by_param[p]
        xs = inputs[e.external_port_id].shape
        if e.axis is None:
            param_shapes.append(xs)
            continue
        axis = e.axis + xs.rank() if e.axis < 0 else e.axis
        if not 0 <= axis < xs.rank():
            raise ValueError(f"TensorIterator: axis {e.axis} is out of range for input {xs}")
        part = e.part_size
        if part is None:
            part = (
                given.parameter_shapes()[p].dimensions()[axis]
                if given and p < len(given.params)
                else abs(e.stride)
            )
        dims = list(xs.dimensions())
        dims[axis] = part
        param_shapes.append(Shape(xs.element_type(), dims))
        parts[p] = (axis, part)
        counts.append(
            _iterations(f"input port {e.external_port_id}", xs.dimensions()[axis], e, part)
        )
    if len(set(counts)) > 1:
        raise ValueError(f"TensorIterator: sliced inputs disagree on the iteration count: {counts}")
    n = counts[0] if counts else num_iterations
    if n is None:
        raise ValueError("TensorIterator: no input is sliced; pass num_iterations")
    if num_iterations is not None and num_iterations != n:
        raise ValueError(
            f"TensorIterator: num_iterations {num_iterations} differs from the sliced inputs' {n}"
        )

    comp = as_computation(body, param_shapes, "TensorIterator", "tensor_iterator_body")
    result_shapes = (
        list(comp.result_shape().tuple_shapes())
        if comp.result_shape().is_tuple()
        else [comp.result_shape()]
    )
    for src, dst in edges:
        if not 0 <= src < len(result_shapes) or dst not in by_param:
            raise ValueError(
                f"TensorIterator: back edge {src} -> {dst} must go from a body result to a body parameter"
            )
        if dst in parts:
            raise ValueError(f"TensorIterator: back edge target {dst} is a sliced input")
        if not result_shapes[src].equal_ignoring_layout(param_shapes[dst]):
            raise TypeError(
                f"TensorIterator: back edge {src} -> {dst} carries {result_shapes[src]} into a parameter of {param_shapes[dst]}"
            )
    out_specs = []
    for e in sorted(out_entries, key=lambda e: e.external_port_id):
        if not 0 <= e.internal_layer_id < len(result_shapes):
            raise ValueError(
                f"TensorIterator: output port {e.external_port_id} names result {e.internal_layer_id}, body has {len(result_shapes)}"
            )
        rs = result_shapes[e.internal_layer_id]
        if e.axis is None:
            out_specs.append((e, None, rs))
            continue
        axis = e.axis + rs.rank() if e.axis < 0 else e.axis
        if not 0 <= axis < rs.rank():
            raise ValueError(
                f"TensorIterator: output axis {e.axis} is out of range for body result {rs}"
            )
        dims = list(rs.dimensions())
        dims[axis] *= n
        out_specs.append((e, axis, Shape(rs.element_type(), dims)))
    if not out_specs:
        raise ValueError("TensorIterator: port_map has no output")

    builder = resolve_builder("TensorIterator", inputs)
    with builder:
        return _lower(builder, comp, inputs, by_param, parts, edges, out_specs, n)


def _lower(builder, comp, inputs, by_param, parts, edges, out_specs, n):
    from . import ops

    num_params = len(by_param)
    edge_target = {dst: src for src, dst in edges}
    # state: counter, one slot per body parameter (its current value or its full sliced input), one per output
    state = [ops.ConstantLiteral(builder, np.int32(0))]
    state += [inputs[by_param[p].external_port_id] for p in range(num_params)]
    for _, _, shape in out_specs:
        state.append(
            ops.Broadcast(
                ops.ConstantLiteral(builder, np.zeros((), shape.numpy_dtype())), shape.dimensions()
            )
        )

    def condition(s):
        return ops.Lt(s[0], np.int32(n))

    def step(s):
        i = s[0]
        params = []
        for p in range(num_params):
            value = s[1 + p]
            if p in parts:
                axis, part = parts[p]
                e = by_param[p]
                size = value.shape.dimensions()[axis]
                first = _boundary(e.start, size)
                pos = (
                    first + i * np.int32(e.stride)
                    if e.stride > 0
                    else first - part - i * np.int32(-e.stride)
                )
                starts = [ops.ConstantLiteral(np.int32(0)) for _ in value.shape.dimensions()]
                starts[axis] = pos
                sizes = list(value.shape.dimensions())
                sizes[axis] = part
                value = ops.DynamicSlice(value, starts, sizes)
            params.append(value)
        results = ops._inline(comp, params, "TensorIterator body")
        results = list(results) if results.shape.is_tuple() else [results]
        new = [i + np.int32(1)]
        for p in range(num_params):
            new.append(results[edge_target[p]] if p in edge_target else s[1 + p])
        for k, (e, axis, _) in enumerate(out_specs):
            value = results[e.internal_layer_id]
            if axis is None:
                new.append(value)
                continue
            part = value.shape.dimensions()[axis]
            j = i if e.stride > 0 else np.int32(n - 1) - i
            starts = [ops.ConstantLiteral(np.int32(0)) for _ in value.shape.dimensions()]
            starts[axis] = j * np.int32(part)
            new.append(ops.DynamicUpdateSlice(s[1 + num_params + k], value, starts))
        return ops.Tuple(new)

    final = ops.While(condition, step, ops.Tuple(builder, state))
    outputs = [ops.GetTupleElement(final, 1 + num_params + k) for k in range(len(out_specs))]
    return outputs[0] if len(outputs) == 1 else ops.Tuple(builder, outputs)

"""xhlo-legalize-dynamic-custom-calls: JAX's dynamic ops with constant shape operands -> static ops.

A shape-polymorphic ``jax.export`` writes three ops that StableHLO lacks as
custom calls whose shape operands are tensors: ``stablehlo.dynamic_reduce_window``
(cumulative sums and pooling over a symbolic axis), ``stablehlo.dynamic_rng_bit_generator``
(the ``rbg`` PRNG of a symbolic shape) and ``stablehlo.dynamic_top_k`` (``top_k``
of a symbolic ``k``). ``stablehlo-refine-shapes`` makes those operands constants
but cannot refine the custom calls' results (jaxlib refines them with patterns
of its own), so everything they feed stayed dynamic.

Here each call whose operands are static and whose shape operands are
constants becomes its static op, with the result type the op's shape rule
gives, converted to the old result type (a ``stablehlo.convert`` between
equal element types, which the canonicalizer removes once static):
``PolymorphicExecutable`` runs ``stablehlo-refine-shapes`` again after this
pass, which refines the converts and what they feed. Calls that stay dynamic are left to
``xhlo-legalize-custom-calls``, which rejects them by name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops
from .legalize_custom_calls import called_function, region_calling

_WINDOW_OPERANDS = ("window_dimensions", "window_strides", "base_dilations", "window_dilations")


def _static_shapes(values: Sequence[ir.Value]) -> list[list[int]] | None:
    types = [v.type for v in values]
    if not all(isinstance(t, ir.RankedTensorType) and t.has_static_shape for t in types):
        return None
    return [list(ir.RankedTensorType(t).shape) for t in types]


def _window_result_shape(shape: list[int], window: dict[str, list[int]], padding: list[int]) -> list[int]:
    """The shape rule of ``reduce_window``: the padded, dilated operand over the dilated window."""
    result = []
    for d, size in enumerate(shape):
        dilated = 0 if size == 0 else (size - 1) * window["base_dilations"][d] + 1
        padded = padding[2 * d] + dilated + padding[2 * d + 1]
        extent = window["window_dimensions"][d]
        span = 0 if extent == 0 else (extent - 1) * window["window_dilations"][d] + 1
        result.append(0 if padded < span else (padded - span) // window["window_strides"][d] + 1)
    return result


def _reduce_window(op: ir.Operation) -> list[ir.Value] | None:
    count = (len(op.operands) - 5) // 2
    operands = list(op.operands)
    shapes = _static_shapes(operands[:count])
    constants = [sh.constant_integers(v) for v in operands[2 * count:]]
    if shapes is None or None in constants:
        return None
    window = dict(zip(_WINDOW_OPERANDS, constants[:4]))
    padding = constants[4]
    result_shape = _window_result_shape(shapes[0], window, padding)
    result_types = [sh.tensor_type(result_shape, sh.element_type(v)) for v in operands[:count]]
    attributes = {name: sh.dense_i64(values) for name, values in window.items()}
    attributes["padding"] = ir.DenseElementsAttr.get(
        np.asarray(padding, np.int64).reshape(-1, 2), type=sh.tensor_type([len(padding) // 2, 2], sh.i64()))
    window_op = sh.create("stablehlo.reduce_window", operands[:2 * count], result_types, attributes, regions=1)
    scalar_types = [sh.tensor_type([], sh.element_type(v)) for v in operands[:count]]
    region_calling(window_op.regions[0], scalar_types * 2, called_function(op), scalar_types)
    return list(window_op.results)


def _rng_bit_generator(op: ir.Operation) -> list[ir.Value] | None:
    state, output_shape = op.operands
    shape = sh.constant_integers(output_shape)
    if shape is None or _static_shapes([state]) is None:
        return None
    output = sh.tensor_type(shape, ir.RankedTensorType(op.results[1].type).element_type)
    generator = sh.create("stablehlo.rng_bit_generator", [state], [state.type, output],
                          {"rng_algorithm": op.attributes["rng_algorithm"]})
    return list(generator.results)


def _top_k(op: ir.Operation) -> list[ir.Value] | None:
    operand, k = op.operands
    shapes, ks = _static_shapes([operand]), sh.constant_integers(k)
    if shapes is None or ks is None:
        return None
    shape = shapes[0][:-1] + ks
    result_types = [sh.tensor_type(shape, ir.RankedTensorType(r.type).element_type) for r in op.results]
    return list(sh.create("chlo.top_k", [operand], result_types, {"k": ir.IntegerAttr.get(sh.i64(), ks[0])}).results)


STATIC_FORMS = {
    "stablehlo.dynamic_reduce_window": _reduce_window,
    "stablehlo.dynamic_rng_bit_generator": _rng_bit_generator,
    "stablehlo.dynamic_top_k": _top_k,
}


@dataclasses.dataclass(frozen=True)
class LegalizeDynamicCustomCalls(ModulePass):
    """Rewrite JAX's dynamic_reduce_window/dynamic_rng_bit_generator/dynamic_top_k custom
    calls with constant shape operands into static StableHLO ops."""

    NAME = "xhlo-legalize-dynamic-custom-calls"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.custom_call"):
            static_form = STATIC_FORMS.get(ir.StringAttr(op.attributes["call_target_name"]).value)
            if static_form is None:
                continue
            with ir.InsertionPoint(op), op.location:
                results = static_form(op)
            if results is None:
                continue
            for old, new in zip(op.results, results):
                if new.type != old.type:  # refine-shapes refines the convert and its users
                    with ir.InsertionPoint(op), op.location:
                        new = sh.create("stablehlo.convert", [new], [old.type]).result
                old.replace_all_uses_with(new)
            op.erase()

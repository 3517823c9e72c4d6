"""xhlo-legalize-custom-calls: resolve the custom calls xhlo knows, reject the rest.

An unknown ``stablehlo.custom_call`` cannot be compiled; failing here, with the
target's name and location, beats a "failed to legalize" from deep in the
linalg lowering. What xhlo knows:

* identity-like targets (``Sharding`` and the SPMD shape markers on one device)
  and ``stablehlo.optimization_barrier`` are forwarded; a marker that changes
  the shape belongs to a program partitioned over several devices (shard_map),
  which xhlo does not partition, and is an error;
* ``shape_assertion`` (JAX's shape-polymorphism guards): after shape
  refinement its predicate is a constant; true is dropped, false is a compile
  error with JAX's message (``{0}``, ``{1}``... are the dimension operands);
* ``ApproxTopK`` (``lax.approx_max_k``/``approx_min_k``) is computed exactly, as
  XLA's CPU fallback does: a stable ``stablehlo.sort`` with the called
  comparator along ``reduction_dim``, sliced to the result size.

JAX's dynamic ops (``stablehlo.dynamic_reduce_window``, ...) become static ops
in ``xhlo-legalize-dynamic-custom-calls`` while a shape-polymorphic export is
refined; one that is still here is an error that says so.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops

# Targets that return their operands unchanged when the program runs on one device.
IDENTITY_TARGETS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")


def _forward(op: ir.Operation) -> None:
    for result, operand in zip(op.results, op.operands):
        result.replace_all_uses_with(operand)
    op.erase()


def _target(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["call_target_name"]).value


def _forward_identity(op: ir.Operation, target: str) -> None:
    for operand, result in zip(op.operands, op.results):
        if operand.type != result.type:
            raise PassError(
                op,
                f"'{target}' changes {operand.type} into {result.type}: the program is "
                "partitioned over several devices, and xhlo does not partition programs",
            )
    _forward(op)


# -- shape_assertion -------------------------------------------------------------------------


def _check_shape_assertion(op: ir.Operation) -> None:
    message = (
        ir.StringAttr(op.attributes["error_message"]).value
        if "error_message" in op.attributes
        else ""
    )
    predicate = sh.splat_integer(op.operands[0])
    if predicate is None:
        raise PassError(
            op,
            "shape_assertion on a value unknown at compile time: compile for concrete input shapes",
        )
    if bool(predicate):
        op.erase()
        return
    dims = [sh.splat_integer(v) for v in list(op.operands)[1:]]
    try:
        message = message.format(*["?" if d is None else d for d in dims])
    except (IndexError, KeyError, ValueError):
        pass
    raise PassError(op, f"shape assertion failed: {message}")


# -- ApproxTopK --------------------------------------------------------------------------------


def _int_config(op: ir.Operation, name: str) -> int:
    config = ir.DictAttr(op.attributes["mhlo.backend_config"])
    return ir.IntegerAttr(config[name]).value


def called_function(op: ir.Operation) -> str:
    """The name of the op's called computation; it is made private so the inliner drops it
    once inlined."""
    callees = ir.ArrayAttr(op.attributes["called_computations"])
    name = ir.FlatSymbolRefAttr(callees[0]).value
    module = op
    while module.parent is not None:
        module = module.parent
    for candidate in module.regions[0].blocks[0].operations:
        attrs = candidate.operation.attributes
        if "sym_name" in attrs and ir.StringAttr(attrs["sym_name"]).value == name:
            attrs["sym_visibility"] = ir.StringAttr.get("private")
    return name


def region_calling(region: ir.Region, arg_types: list[ir.Type], callee: str, result_types: list[ir.Type]) -> None:
    """Fill ``region`` with a block that returns what ``callee`` returns for its arguments."""

    def call(*args):
        return list(sh.create("func.call", list(args), result_types,
                              {"callee": ir.FlatSymbolRefAttr.get(callee)}).results)

    sh.build_region(region, arg_types, call)


def _approx_top_k(op: ir.Operation) -> None:
    """Exact top-k: sort with the comparator, keep the first entries along the dimension."""
    if "mhlo.backend_config" not in op.attributes or "called_computations" not in op.attributes:
        raise PassError(op, "'ApproxTopK' without mhlo.backend_config or comparator")
    count = len(op.operands) // 2
    inputs = list(op.operands)[:count]
    dimension = _int_config(op, "reduction_dim")
    comparator = called_function(op)
    scalar_types = [sh.tensor_type([], sh.element_type(v)) for v in inputs]
    with ir.InsertionPoint(op), op.location:
        sort = sh.create(
            "stablehlo.sort",
            inputs,
            [v.type for v in inputs],
            {
                "dimension": ir.IntegerAttr.get(sh.i64(), dimension),
                "is_stable": ir.BoolAttr.get(True),
            },
            regions=1,
        )
        arg_types = [t for t in scalar_types for _ in range(2)]
        region_calling(sort.regions[0], arg_types, comparator, [sh.tensor_type([], sh.i1())])
        for sorted_value, result in zip(sort.results, op.results):
            shape = sh.shape_of(sorted_value)
            limit = list(ir.RankedTensorType(result.type).shape)
            if list(shape) != limit:
                sorted_value = sh.slice(sorted_value, [0] * len(shape), limit)
            result.replace_all_uses_with(sorted_value)
    op.erase()


@dataclasses.dataclass(frozen=True)
class LegalizeCustomCalls(ModulePass):
    """Forward identity custom calls and optimization barriers; reject unknown targets."""

    NAME = "xhlo-legalize-custom-calls"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.optimization_barrier"):
            _forward(op)
        for op in walk_ops(module, "stablehlo.custom_call"):
            target = _target(op)
            if target in IDENTITY_TARGETS and len(op.operands) == len(op.results):
                _forward_identity(op, target)
            elif target == "shape_assertion":
                _check_shape_assertion(op)
            elif target == "ApproxTopK":
                _approx_top_k(op)
            elif target.startswith("xhlo.runtime."):
                continue  # collective runtime calls, lowered by xhlo-lower-runtime-calls
            elif target.startswith("stablehlo.dynamic_"):
                raise PassError(op, f"'{target}' whose shape operands are not constants: compile for "
                                "concrete input shapes (a shape-polymorphic export is refined per call)")
            elif target.startswith("check."):
                raise PassError(op, f"'{target}' outside the entry function cannot be evaluated")
            else:
                raise PassError(
                    op,
                    f"unsupported custom call target '{target}' (register a Python function "
                    "for it with xhlo.register_custom_call_target)",
                )

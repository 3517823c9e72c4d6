"""xhlo-expose-checks: turn ``check.*`` ops of the entry function into extra results.

Conformance programs compare values with ``stablehlo.custom_call @check.*`` (or
the check dialect's generic ops). xhlo evaluates those comparisons in numpy
after the call, with the exact tolerances of StableHLO's reference runner, so
the pass removes each check, returns its operands as extra results and records
what to compare in the ``xhlo.checks`` attribute of the function.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.check_syntax import balanced

from .base import ModulePass, PassError

CHECK_KINDS = (
    "expect_eq",
    "expect_close",
    "expect_almost_eq",
    "eq",
    "expect_eq_const",
    "expect_almost_eq_const",
)


def check_kind(op: ir.Operation) -> str | None:
    """The check's kind (``expect_eq``...) or None for any other op."""
    if op.name == "stablehlo.custom_call":
        target = ir.StringAttr(op.attributes["call_target_name"]).value
        if target.startswith("check."):
            return target[len("check.") :]
        return None
    if op.name.startswith("check."):
        return op.name[len("check.") :]
    return None


def find_function(module: ir.Operation, name: str) -> ir.Operation | None:
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op.operation
    return None


def _attr_value(op: ir.Operation, name: str, default: float) -> float:
    if name not in op.attributes:
        return default
    attr = op.attributes[name]
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    raise PassError(op, f"attribute '{name}' must be a number, got {attr}")


def _materialize_value_attr(op: ir.Operation) -> ir.Value:
    """A stablehlo.constant holding ``op``'s ``value`` attribute, placed before ``op``.

    Goes through the attribute's text: the bindings cannot hand out complex
    dense attributes as Python objects.
    """
    asm = op.get_asm(print_generic_op_form=True)
    start = asm.index("value = ") + len("value = ")
    end_dense = balanced(asm, asm.index("<", start))
    type_start = asm.index("tensor<", end_dense)
    end = balanced(asm, type_start + len("tensor"))
    const = ir.Operation.parse(f'"stablehlo.constant"() <{{value = {asm[start:end]}}}> : () -> {asm[type_start:end]}')
    ir.InsertionPoint(op).insert(const)
    return const.results[0]


def _append_results(func_op: ir.Operation, values: list[ir.Value]) -> None:
    block = func_op.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    with ir.InsertionPoint(ret), ret.location:
        ir.Operation.create(ret.name, operands=[*ret.operands, *values])
    ret.erase()
    ftype = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
    new_results = [*ftype.results, *[v.type for v in values]]
    func_op.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(ftype.inputs, new_results)
    )
    if "res_attrs" in func_op.attributes:
        old = list(ir.ArrayAttr(func_op.attributes["res_attrs"]))
        empty = ir.DictAttr.get({})
        func_op.attributes["res_attrs"] = ir.ArrayAttr.get(old + [empty] * len(values))


@dataclasses.dataclass(frozen=True)
class ExposeChecks(ModulePass):
    """Return check.* operands as extra results and describe them in xhlo.checks."""

    NAME = "xhlo-expose-checks"
    entry: str = "main"

    def run(self, module: ir.Operation) -> None:
        func_op = find_function(module, self.entry)
        if func_op is None:
            raise PassError(module, f"no function named '{self.entry}'")
        ftype = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
        next_index = len(ftype.results)
        exposed: list[ir.Value] = []
        records: list[ir.Attribute] = []
        checks = []
        for op in func_op.regions[0].blocks[0].operations:
            if check_kind(op.operation) is not None:
                checks.append(op.operation)
        for op in checks:
            kind = check_kind(op)
            if kind not in CHECK_KINDS and kind != "expect_close":
                raise PassError(op, f"unknown check 'check.{kind}'")
            operands = list(op.operands)
            if kind.endswith("_const"):
                if "value" not in op.attributes:
                    raise PassError(op, "needs a 'value' attribute")
                operands.append(_materialize_value_attr(op))
                kind = kind[: -len("_const")]
            if len(operands) != 2:
                raise PassError(op, f"check.{kind} takes 2 operands, got {len(operands)}")
            record = {
                "kind": ir.StringAttr.get(kind),
                "actual": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), next_index),
                "expected": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), next_index + 1),
                "location": ir.StringAttr.get(str(op.location)),
            }
            f64 = ir.F64Type.get()
            if kind == "expect_close":
                record["max_ulp"] = ir.FloatAttr.get(f64, _attr_value(op, "max_ulp_difference", 3 if op.name == "stablehlo.custom_call" else 1))
                record["min_ulp"] = ir.FloatAttr.get(f64, _attr_value(op, "min_ulp_difference", 0))
            elif kind == "expect_almost_eq":
                record["tolerance"] = ir.FloatAttr.get(
                    f64, _attr_value(op, "tolerance", 1e-3 if op.name == "stablehlo.custom_call" else 1e-4)
                )
            elif kind == "eq":
                record["tolerance"] = ir.FloatAttr.get(f64, 1e-4)
            records.append(ir.DictAttr.get(record))
            exposed.extend(operands)
            next_index += 2
            for result in op.results:  # check.eq's verdict: a mismatch fails the run anyway
                with ir.InsertionPoint(op), op.location:
                    true = ir.Operation.create(
                        "stablehlo.constant",
                        results=[result.type],
                        attributes={"value": ir.DenseElementsAttr.get_splat(result.type, ir.BoolAttr.get(True))},
                    )
                result.replace_all_uses_with(true.result)
            op.erase()
        if exposed:
            _append_results(func_op, exposed)
        func_op.attributes["xhlo.checks"] = ir.ArrayAttr.get(records)

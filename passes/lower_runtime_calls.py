"""xhlo-lower-runtime-calls: ``@xhlo.runtime.*`` custom calls become external function calls.

``xhlo-lower-collectives`` leaves the communication of each collective as a
``stablehlo.custom_call @xhlo.runtime.<primitive>``, which no linalg pattern
lowers. This pass, run before the linalg lowering, turns call site ``k`` into

    %in  = bufferization.to_buffer %operand read_only     (one per operand)
    %out = memref.alloc()                                 (one per result)
    func.call @xhlo_rt_op<k>(%in..., %out...)
    %res = bufferization.to_tensor %out restrict writable

with ``func.func private @xhlo_rt_op<k>(memref...) attributes
{llvm.emit_c_interface}`` declared in the module, each argument marked
``bufferization.access = "read"`` (operands) or ``"write"`` (results). The JIT resolves
``_mlir_ciface_xhlo_rt_op<k>`` to the Python runtime (``xhlo.runtime``), which
receives one memref descriptor per buffer. One-shot bufferization keeps the
``to_buffer``/``to_tensor`` pairs consistent, and since the callee is an
opaque external call, buffers stay alive across it and nothing moves it.

Everything the runtime must know about call ``k`` (primitive, device groups,
byte sizes, the original op and its location) is collected in the module
attribute ``xhlo.runtime_calls``: an array whose entry ``k`` describes
``@xhlo_rt_op<k>``. Unsigned element types cross the call as signless
integers of the same width (bitcasts), so the later signless conversion has
nothing to rewrite in the declarations.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops
from .lower_collectives import RUNTIME_TARGET_PREFIX, element_bytes

RUNTIME_CALLS_ATTR = "xhlo.runtime_calls"
SYMBOL_PREFIX = "xhlo_rt_op"
ACCESS_ATTR = "bufferization.access"  # on each argument of the declarations: "read" | "write"
BUFFER_ALIGNMENT = 64


def _signless(t: ir.RankedTensorType) -> ir.RankedTensorType:
    elem = t.element_type
    if sh.is_unsigned(elem):
        return sh.tensor_type(t.shape, ir.IntegerType.get_signless(ir.IntegerType(elem).width))
    return t


def _memref_type(t: ir.RankedTensorType) -> ir.MemRefType:
    return ir.MemRefType.get(list(t.shape), t.element_type)


def _num_elements(t: ir.RankedTensorType) -> int:
    count = 1
    for size in t.shape:
        count *= size
    return count


def to_buffer(value: ir.Value) -> ir.Value:
    t = ir.RankedTensorType(value.type)
    if _signless(t) != t:
        value = sh.bitcast_convert(value, _signless(t).element_type)
        t = _signless(t)
    return sh.create(
        "bufferization.to_buffer", [value], [_memref_type(t)], {"read_only": ir.UnitAttr.get()}
    ).result


def alloc_buffer(t: ir.RankedTensorType) -> ir.Value:
    attrs = {
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0]),
        "alignment": ir.IntegerAttr.get(sh.i64(), BUFFER_ALIGNMENT),
    }
    return sh.create("memref.alloc", [], [_memref_type(_signless(t))], attrs).result


def to_tensor(buffer: ir.Value, t: ir.RankedTensorType) -> ir.Value:
    attrs = {"restrict": ir.UnitAttr.get(), "writable": ir.UnitAttr.get()}
    value = sh.create("bufferization.to_tensor", [buffer], [_signless(t)], attrs).result
    return sh.bitcast_convert(value, t.element_type) if _signless(t) != t else value


def _declare(module: ir.Operation, name: str, inputs: list[ir.Type], outputs: list[ir.Type]) -> None:
    """``func.func private @name(inputs..., outputs...)``, each argument marked with the
    upstream ``bufferization.access`` ("read": operands, "write": results) for the
    passes that reason about buffers after bufferization."""
    body = module.regions[0].blocks[0]
    access = [ir.DictAttr.get({ACCESS_ATTR: ir.StringAttr.get(kind)}) for kind in ("read", "write")]
    with ir.InsertionPoint.at_block_begin(body), module.location:
        sh.create(
            "func.func",
            [],
            [],
            {
                "sym_name": ir.StringAttr.get(name),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get(inputs + outputs, [])),
                "sym_visibility": ir.StringAttr.get("private"),
                "arg_attrs": ir.ArrayAttr.get([access[0]] * len(inputs) + [access[1]] * len(outputs)),
                "llvm.emit_c_interface": ir.UnitAttr.get(),
            },
            regions=1,
        )


def _byte_sizes(types: list[ir.RankedTensorType]) -> tuple[list[int], list[int]]:
    items = [element_bytes(t.element_type) for t in types]
    return [_num_elements(t) * item for t, item in zip(types, items)], items


def _types_text(types: list[ir.RankedTensorType]) -> str:
    """``2x3xf32;ui8``: shape and element type of each buffer, for host-side numpy views."""
    return ";".join("x".join([*(str(d) for d in t.shape), str(t.element_type)]) for t in types)


def _describe(op: ir.Operation, index: int, primitive: str) -> ir.Attribute:
    """The ``xhlo.runtime_calls`` entry of call ``index``: config + buffer sizes + origin."""
    entries = {a.name: a.attr for a in ir.DictAttr(op.attributes["backend_config"])}
    operand_types = [ir.RankedTensorType(v.type) for v in op.operands]
    result_types = [ir.RankedTensorType(r.type) for r in op.results]
    operand_bytes, operand_items = _byte_sizes(operand_types)
    result_bytes, result_items = _byte_sizes(result_types)
    entries.update(
        {
            "operand_types": ir.StringAttr.get(_types_text(operand_types)),
            "result_types": ir.StringAttr.get(_types_text(result_types)),
            "index": ir.IntegerAttr.get(sh.i64(), index),
            "primitive": ir.StringAttr.get(primitive),
            "location": ir.StringAttr.get(str(op.location)),
            "operand_bytes": sh.dense_i64(operand_bytes),
            "operand_itemsize": sh.dense_i64(operand_items),
            "result_bytes": sh.dense_i64(result_bytes),
            "result_itemsize": sh.dense_i64(result_items),
        }
    )
    return ir.DictAttr.get(entries)


def read_arguments(module: ir.Operation) -> dict[str, frozenset[int]]:
    """Per external function (a declaration), the arguments it declares only read
    (``bufferization.access = "read"``): what buffer passes may rely on at its calls."""
    found = {}
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "func.func" or len(op.regions[0].blocks) or "arg_attrs" not in op.attributes:
            continue
        found[ir.StringAttr(op.attributes["sym_name"]).value] = frozenset(
            index
            for index, attrs in enumerate(ir.ArrayAttr(op.attributes["arg_attrs"]))
            if ACCESS_ATTR in ir.DictAttr(attrs)
            and ir.StringAttr(ir.DictAttr(attrs)[ACCESS_ATTR]).value == "read"
        )
    return found


def runtime_calls(module: ir.Operation) -> list[ir.Attribute]:
    attrs = module.attributes
    return list(ir.ArrayAttr(attrs[RUNTIME_CALLS_ATTR])) if RUNTIME_CALLS_ATTR in attrs else []


@dataclasses.dataclass(frozen=True)
class LowerRuntimeCalls(ModulePass):
    """Turn @xhlo.runtime.* custom calls into calls of external @xhlo_rt_op<k> functions."""

    NAME = "xhlo-lower-runtime-calls"

    def run(self, module: ir.Operation) -> None:
        table = runtime_calls(module)
        for op in walk_ops(module, "stablehlo.custom_call"):
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if not target.startswith(RUNTIME_TARGET_PREFIX):
                continue
            table.append(self._lower(module, op, len(table), target[len(RUNTIME_TARGET_PREFIX) :]))
        if table:
            module.attributes[RUNTIME_CALLS_ATTR] = ir.ArrayAttr.get(table)

    def _lower(
        self, module: ir.Operation, op: ir.Operation, index: int, primitive: str
    ) -> ir.Attribute:
        for value in [*op.operands, *op.results]:
            t = value.type
            if (
                not isinstance(t, ir.RankedTensorType)
                or not ir.RankedTensorType(t).has_static_shape
            ):
                raise PassError(
                    op, f"runtime call operands must be statically shaped tensors, got {t}"
                )
        description = _describe(op, index, primitive)
        name = f"{SYMBOL_PREFIX}{index}"
        with ir.InsertionPoint(op), op.location:
            inputs = [to_buffer(v) for v in op.operands]
            outputs = [alloc_buffer(ir.RankedTensorType(r.type)) for r in op.results]
            buffers = inputs + outputs
            sh.create("func.call", buffers, [], {"callee": ir.FlatSymbolRefAttr.get(name)})
            results = [
                to_tensor(b, ir.RankedTensorType(r.type)) for b, r in zip(outputs, op.results)
            ]
        _declare(module, name, [b.type for b in inputs], [b.type for b in outputs])
        for old, new in zip(op.results, results):
            old.replace_all_uses_with(new)
        op.erase()
        return description

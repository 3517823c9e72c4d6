"""xhlo-localize-shard-map: a JAX ``shard_map`` export becomes the program of one device.

``jax.export`` of a ``shard_map`` gives a ``@main`` over *global* arrays whose
body is one ``sdy.manual_computation``: its region is the per-device program
on *local* shards, with the collectives between devices. xhlo runs programs
per device (``Executable.run_replicated``, MPI ranks), so when the manual
computation covers every device (its manual axes span the whole mesh, whose
size is ``num_replicas x num_partitions``) the region simply becomes the body
of ``@main``:

* ``@main`` takes and returns the local shard types;
* how each argument and result is split over the mesh is kept in the module
  attribute ``xhlo.shard_map`` (mesh axes and, per value and dimension, the
  mesh axes it is split over), which ``xhlo.runtime.sharding`` uses to cut
  global arrays into per-device shards and to put results back together.

Device ``d`` is the mesh position of partition id ``d`` (row-major over the
mesh axes, the default device order). Programs with global computation
around the manual computation, partially manual meshes, sub-axes or explicit
device orders are left to ``xhlo-legalize-shardy``, which rejects them.
"""

from __future__ import annotations

import dataclasses
import re

from xhlo._mlir import ir

from .base import ModulePass, PassError, walk_ops

SHARD_MAP_ATTR = "xhlo.shard_map"
FORWARDING_OPS = ("sdy.sharding_constraint", "sdy.reshard", "sdy.propagation_barrier")

_AXIS = re.compile(r'"([^"]+)"\s*=\s*(\d+)')
_VALUE = re.compile(r"<@[\w.$-]+\s*,\s*\[")


def parse_mesh(text: str) -> list[tuple[str, int]]:
    """``#sdy.mesh<["x"=2, "y"=2]>`` -> [("x", 2), ("y", 2)]."""
    if "device_ids" in text:
        raise ValueError(f"meshes with an explicit device order are not supported: {text}")
    return [(name, int(size)) for name, size in _AXIS.findall(text)]


def parse_shardings(text: str) -> list[list[list[str]]]:
    """Per value, per dimension, the mesh axes it is split over (major to minor).

    Reads ``#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, ...]>`` or a single
    ``#sdy.sharding<@mesh, [...]>``.
    """
    values = []
    for match in _VALUE.finditer(text):
        depth, end = 1, match.end()
        while depth:
            depth += {"[": 1, "]": -1}.get(text[end], 0)
            end += 1
        dims_text = text[match.end() : end - 1]
        dims = []
        for dim in re.findall(r"\{([^}]*)\}", dims_text):
            if ":(" in dim:
                raise ValueError(f"sharding over sub-axes is not supported: {{{dim}}}")
            dims.append(re.findall(r'"([^"]+)"', dim))
        values.append(dims)
    return values


def _source(value: ir.Value) -> ir.Value:
    """``value`` seen through sharding constraints and reshards."""
    while isinstance(value, ir.OpResult) and value.owner.name in FORWARDING_OPS:
        value = value.owner.operands[0]
    return value


def _erase_unused(block: ir.Block, names: tuple[str, ...]) -> None:
    """Erase the ops named ``names`` in ``block`` once nothing uses them (chains included)."""
    pending = [op.operation for op in block.operations if op.operation.name in names]
    while pending:
        unused = [op for op in pending if all(not list(r.uses) for r in op.results)]
        if not unused:
            raise ValueError(f"cannot remove {[op.name for op in pending]}: still in use")
        for op in unused:
            op.erase()
            pending.remove(op)


def _string_list(items) -> ir.Attribute:
    return ir.ArrayAttr.get([ir.StringAttr.get(i) for i in items])


def _layout_attr(values: list[list[list[str]]]) -> ir.Attribute:
    return ir.ArrayAttr.get([ir.ArrayAttr.get([_string_list(axes) for axes in dims]) for dims in values])


def _module_mesh(module: ir.Operation, name: str) -> list[tuple[str, int]] | None:
    for op in walk_ops(module, "sdy.mesh"):
        if ir.StringAttr(op.attributes["sym_name"]).value == name:
            return parse_mesh(str(op.attributes["mesh"]))
    return None


def _device_count(module: ir.Operation) -> int:
    count = 1
    for name in ("mhlo.num_replicas", "mhlo.num_partitions"):
        if name in module.attributes:
            count *= ir.IntegerAttr(module.attributes[name]).value
    return count


def _localizable(func_op: ir.Operation) -> ir.Operation | None:
    """The function's manual computation if the body is nothing else (plus forwarding and return)."""
    block = func_op.regions[0].blocks[0]
    manual = [op.operation for op in block.operations if op.operation.name == "sdy.manual_computation"]
    others = [
        op.operation.name
        for op in block.operations
        if op.operation.name not in ("sdy.manual_computation", "func.return", *FORWARDING_OPS)
    ]
    if len(manual) != 1 or others:
        return None
    return manual[0]


@dataclasses.dataclass(frozen=True)
class LocalizeShardMap(ModulePass):
    """Turn a @main that is one manual computation over all devices into the per-device program."""

    NAME = "xhlo-localize-shard-map"

    def run(self, module: ir.Operation) -> None:
        devices = _device_count(module)
        if devices == 1:
            return
        for func_op in walk_ops(module, "func.func"):
            if len(func_op.regions[0].blocks) == 0:
                continue
            manual = _localizable(func_op)
            if manual is None:
                continue
            layout = self._layout(module, manual, devices)
            if layout is not None:
                self._localize(module, func_op, manual, layout)

    def _layout(self, module: ir.Operation, manual: ir.Operation, devices: int):
        in_text = str(manual.attributes["in_shardings"])
        out_text = str(manual.attributes["out_shardings"])
        mesh_name = re.search(r"<@([\w.$-]+)", in_text + out_text)
        try:
            mesh = _module_mesh(module, mesh_name.group(1)) if mesh_name else []
            ins, outs = parse_shardings(in_text), parse_shardings(out_text)
        except ValueError as err:
            raise PassError(manual, str(err)) from None
        if mesh is None:
            raise PassError(manual, f"no sdy.mesh named '{mesh_name.group(1)}'")
        manual_axes = set(re.findall(r'"([^"]+)"', str(manual.attributes["manual_axes"])))
        size = 1
        for name, axis_size in mesh:
            if axis_size > 1 and name not in manual_axes:
                return None  # partially manual: the body is still partitioned over this axis
            size *= axis_size
        if size != devices:
            raise PassError(
                manual, f"the mesh {mesh} has {size} devices but the program runs on {devices}"
            )
        return mesh, ins, outs

    def _localize(self, module: ir.Operation, func_op: ir.Operation, manual: ir.Operation, layout) -> None:
        mesh, ins, outs = layout
        block = func_op.regions[0].blocks[0]
        body = manual.regions[0].blocks[0]
        arguments = list(block.arguments)
        arg_layout: list[list[list[str]] | None] = [None] * len(arguments)
        for operand, inner, dims in zip(manual.operands, body.arguments, ins):
            source = _source(operand)
            if not isinstance(source, ir.BlockArgument) or source.owner != block:
                raise PassError(manual, "a shard_map operand is not an argument of the function")
            index = source.arg_number
            if arg_layout[index] is not None and (arg_layout[index] != dims or source.type != inner.type):
                raise PassError(manual, f"argument {index} enters the shard_map with two different shardings")
            arg_layout[index] = dims
            inner.replace_all_uses_with(source)
            source.set_type(inner.type)
        terminator = body.operations[len(body.operations) - 1]
        local_results = list(terminator.operands)
        for op in list(body.operations)[:-1]:
            op.operation.move_before(manual)
        func_return = block.operations[len(block.operations) - 1]
        result_layout = []
        for i, value in enumerate(func_return.operands):
            source = _source(value)
            if not isinstance(source, ir.OpResult) or source.owner != manual:
                raise PassError(func_return, f"result {i} of the function is not a shard_map result")
            index = source.result_number
            func_return.operands[i] = local_results[index]
            result_layout.append(outs[index])
        terminator.erase()
        _erase_unused(block, ("sdy.manual_computation", *FORWARDING_OPS))
        func_op.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], [v.type for v in func_return.operands])
        )
        module.attributes[SHARD_MAP_ATTR] = ir.DictAttr.get(
            {
                "function": func_op.attributes["sym_name"],
                "mesh": ir.ArrayAttr.get(
                    [ir.ArrayAttr.get([ir.StringAttr.get(n), ir.IntegerAttr.get(ir.IntegerType.get_signless(64), s)]) for n, s in mesh]
                ),
                "arguments": _layout_attr([dims if dims is not None else [] for dims in arg_layout]),
                "results": _layout_attr(result_layout),
            }
        )

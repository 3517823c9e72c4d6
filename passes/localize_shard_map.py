"""xhlo-localize-shard-map: a JAX ``shard_map`` export becomes the program of one device.

``jax.export`` of a ``shard_map`` gives a ``@main`` over *global* arrays around
a per-device program on *local* shards (with the collectives between
devices). xhlo runs programs per device (``Executable.run_replicated``, MPI
ranks), so when that per-device program covers every device, it simply
becomes ``@main``, taking and returning local shards. Both export forms are
recognized:

* Shardy: the body of ``@main`` is one ``sdy.manual_computation`` whose manual
  axes span the whole mesh; its region becomes the body. Device ``d`` is the
  row-major position ``d`` of the mesh (the default device order).
* GSPMD: every argument enters through ``custom_call @Sharding`` +
  ``@SPMDFullToShardShape`` and every result leaves through ``@Sharding`` +
  ``@SPMDShardToFullShape``; those boundary calls go and what is between them
  stays. The ``mhlo.sharding`` strings (``{devices=[2,2]<=[4]}``,
  ``last_tile_dim_replicate``, explicit device lists, ``{replicated}``) say
  which tile each device holds. An argument that enters twice (``g(x, x)``)
  through identical chains enters once.

A shard_map in a private function (JAX keeps an inner ``jit``, ``xhlo.jit``'s
among them, as one) is first inlined into its callers.

How each argument and result is cut is kept in the module attribute
``xhlo.shard_map``: per value, the number of blocks per dimension and, per
device, the block it holds. ``xhlo.runtime.sharding`` uses it to cut global
arrays into shards and to reassemble results. Programs that compute on global
arrays outside the per-device part are left alone (and rejected later by
``xhlo-legalize-shardy`` / ``xhlo-legalize-custom-calls``).
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, functions, walk_ops

SHARD_MAP_ATTR = "xhlo.shard_map"
FORWARDING_OPS = ("sdy.sharding_constraint", "sdy.reshard", "sdy.propagation_barrier")


@dataclasses.dataclass(frozen=True)
class Tiling:
    """How one value is cut: blocks per dimension, and the block of every device."""

    counts: tuple[int, ...]
    blocks: np.ndarray  # [num_devices, rank] block index per dimension

    @staticmethod
    def whole(rank: int, devices: int) -> Tiling:
        return Tiling((1,) * rank, np.zeros((devices, rank), np.int64))

    def attr(self) -> ir.Attribute:
        i64 = ir.IntegerType.get_signless(64)
        blocks = self.blocks.astype(np.int64).reshape(self.blocks.shape[0], -1)
        if blocks.shape[1] == 0:  # a 0-d value: no dimension to cut
            blocks = np.zeros((blocks.shape[0], 1), np.int64)
        return ir.DictAttr.get(
            {
                "counts": ir.DenseI64ArrayAttr.get(list(self.counts)),
                "blocks": ir.DenseIntElementsAttr.get(blocks, type=i64),
            }
        )


# -- Shardy ------------------------------------------------------------------------------


def parse_mesh(text: str) -> list[tuple[str, int]]:
    """``#sdy.mesh<["x"=2, "y"=2]>`` -> [("x", 2), ("y", 2)]."""
    if "device_ids" in text:
        raise ValueError(f"meshes with an explicit device order are not supported: {text}")
    return [(name, int(size)) for name, size in re.findall(r'"([^"]+)"\s*=\s*(\d+)', text)]


def parse_shardings(text: str) -> list[list[list[str]]]:
    """Per value, per dimension, the mesh axes it is split over (major to minor).

    Reads ``#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, ...]>``.
    """
    values = []
    for match in re.finditer(r"<@[\w.$-]+\s*,\s*\[", text):
        depth, end = 1, match.end()
        while depth:
            depth += {"[": 1, "]": -1}.get(text[end], 0)
            end += 1
        dims = []
        for dim in re.findall(r"\{([^}]*)\}", text[match.end() : end - 1]):
            if ":(" in dim:
                raise ValueError(f"sharding over sub-axes is not supported: {{{dim}}}")
            dims.append(re.findall(r'"([^"]+)"', dim))
        values.append(dims)
    return values


def mesh_tiling(mesh: list[tuple[str, int]], dims: list[list[str]], rank: int) -> Tiling:
    sizes = dict(mesh)
    devices = math.prod(sizes.values())
    coords = (
        np.stack(np.unravel_index(np.arange(devices), [s for _, s in mesh]), axis=1)
        if mesh
        else np.zeros((1, 0))
    )
    position = {name: i for i, (name, _) in enumerate(mesh)}
    dims = list(dims) + [[]] * (rank - len(dims))
    counts, blocks = [], np.zeros((devices, rank), np.int64)
    for axis, axes in enumerate(dims):
        count = 1
        for name in axes:
            blocks[:, axis] = blocks[:, axis] * sizes[name] + coords[:, position[name]]
            count *= sizes[name]
        counts.append(count)
    return Tiling(tuple(counts), blocks)


# -- GSPMD -------------------------------------------------------------------------------


def hlo_tiling(text: str, rank: int, devices: int) -> Tiling:
    """The tiling an ``mhlo.sharding`` string gives a value of ``rank`` on ``devices``."""
    text = text.strip()
    if text in ("{replicated}", "{manual}") or text.startswith("{replicated"):
        return Tiling.whole(rank, devices)
    match = re.fullmatch(
        r"\{devices=\[([\d,]+)\]\s*(.*?)\s*((?:last_tile_dim_replicate|last_tile_dims=\{[^}]*\})?)\s*\}",
        text,
    )
    if not match:
        raise ValueError(f"unsupported mhlo.sharding '{text}'")
    shape = [int(v) for v in match.group(1).split(",")]
    try:
        assignment = _tile_assignment(match.group(2), shape)
    except ValueError as err:  # numpy's and int()'s reasons, without the string
        raise ValueError(f"mhlo.sharding '{text}' has a device list that does not fit {shape}: {err}") from None
    if len(shape) < rank or (len(shape) > rank and not match.group(3)):
        raise ValueError(f"mhlo.sharding '{text}' does not fit a rank-{rank} value")
    if assignment.size != devices or sorted(assignment.reshape(-1)) != list(range(devices)):
        raise ValueError(f"mhlo.sharding '{text}' does not assign the {devices} devices")
    blocks = np.zeros((devices, rank), np.int64)
    for position in np.ndindex(*shape):
        blocks[assignment[position]] = position[:rank]
    return Tiling(tuple(shape[:rank]), blocks)


def _tile_assignment(text: str, shape: list[int]) -> np.ndarray:
    """``<=[4]``, ``<=[2,2]T(1,0)`` (iota, reshaped, transposed) or ``0,2,1,3`` -> array of ``shape``."""
    iota = re.fullmatch(r"<=\[([\d,]+)\](?:T\(([\d,]+)\))?", text)
    if iota:
        dims = [int(v) for v in iota.group(1).split(",")]
        devices = np.arange(math.prod(dims)).reshape(dims)
        if iota.group(2):
            devices = devices.transpose([int(v) for v in iota.group(2).split(",")])
        return devices.reshape(shape)
    return np.array([int(v) for v in text.split(",")]).reshape(shape)


def _sharding_string(op: ir.Operation) -> str:
    return (
        ir.StringAttr(op.attributes["mhlo.sharding"]).value
        if "mhlo.sharding" in op.attributes
        else ""
    )


def _custom_call_target(op: ir.Operation | None) -> str | None:
    if op is None or op.name != "stablehlo.custom_call":
        return None
    return ir.StringAttr(op.attributes["call_target_name"]).value


def _only_user(value: ir.Value) -> ir.Operation | None:
    users = [use.owner for use in value.uses]
    return users[0] if len(users) == 1 else None


# -- rewriting --------------------------------------------------------------------------------


def _source(value: ir.Value) -> ir.Value:
    """``value`` seen through sharding constraints and reshards."""
    while isinstance(value, ir.OpResult) and value.owner.name in FORWARDING_OPS:
        value = value.owner.operands[0]
    return value


def _holds_shard_map(func_op: ir.Operation) -> bool:
    return len(func_op.regions[0].blocks) > 0 and any(
        op.operation.name == "sdy.manual_computation" or _custom_call_target(op.operation) == "SPMDFullToShardShape"
        for op in func_op.regions[0].blocks[0].operations)


def _inline_shard_map_callees(module: ir.Operation) -> None:
    """Calls of private functions that hold a shard_map (JAX keeps an inner ``jit`` as one)
    take their bodies: localizing a function changes its signature, which its callers
    would not follow."""
    while True:
        holders = {ir.StringAttr(f.attributes["sym_name"]).value: f for f in functions(module)
                   if "sym_visibility" in f.attributes
                   and ir.StringAttr(f.attributes["sym_visibility"]).value == "private" and _holds_shard_map(f)}
        calls = [call for call in walk_ops(module, "func.call")
                 if ir.FlatSymbolRefAttr(call.attributes["callee"]).value in holders]
        if not calls:
            return
        for call in calls:
            callee = holders[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
            with ir.InsertionPoint(call), call.location:
                results = sh.inline_region(callee.regions[0], list(call.operands))
            for old, new in zip(call.results, results):
                old.replace_all_uses_with(new)
            call.erase()
        for callee in holders.values():
            callee.erase()


def _merge_entries(arg: ir.Value) -> None:
    """One Sharding/FullToShard chain for an argument that enters the shard_map several
    times (``g(x, x)``) through identical chains: the others' uses move to the first."""
    chains = []
    for use in arg.uses:
        sharding = use.owner
        to_shard = _only_user(sharding.results[0]) if _custom_call_target(sharding) == "Sharding" else None
        if _custom_call_target(to_shard) != "SPMDFullToShardShape":
            return
        chains.append((sharding, to_shard))
    if len(chains) < 2:
        return
    first_sharding, first = chains[0]
    for sharding, to_shard in chains[1:]:
        same = (_sharding_string(sharding), _sharding_string(to_shard), to_shard.results[0].type) == (
            _sharding_string(first_sharding), _sharding_string(first), first.results[0].type)
        if not same:
            return
    for sharding, to_shard in chains[1:]:
        to_shard.results[0].replace_all_uses_with(first.results[0])
        to_shard.erase()
        sharding.erase()


def _erase_unused(ops: list[ir.Operation]) -> None:
    """Erase ``ops`` once nothing uses them (chains in any order; an op listed twice, as the
    one ShardToFull of a result returned twice, once)."""
    pending = []
    for op in ops:
        if all(op != seen for seen in pending):
            pending.append(op)
    while pending:
        unused = [op for op in pending if all(not list(r.uses) for r in op.results)]
        if not unused:
            raise ValueError(f"cannot remove {[op.name for op in pending]}: still in use")
        pending = [op for op in pending if all(op != u for u in unused)]
        for op in unused:
            op.erase()


def _device_count(module: ir.Operation) -> int:
    count = 1
    for name in ("mhlo.num_replicas", "mhlo.num_partitions"):
        if name in module.attributes:
            count *= ir.IntegerAttr(module.attributes[name]).value
    return count


def _set_signature(func_op: ir.Operation) -> None:
    block = func_op.regions[0].blocks[0]
    terminator = block.operations[len(block.operations) - 1]
    func_op.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(
            [a.type for a in block.arguments], [v.type for v in terminator.operands]
        )
    )


def _record(
    module: ir.Operation, func_op: ir.Operation, arguments: list[Tiling], results: list[Tiling]
) -> None:
    module.attributes[SHARD_MAP_ATTR] = ir.DictAttr.get(
        {
            "function": func_op.attributes["sym_name"],
            "arguments": ir.ArrayAttr.get([t.attr() for t in arguments]),
            "results": ir.ArrayAttr.get([t.attr() for t in results]),
        }
    )


def _rank(t: ir.Type) -> int:
    return len(ir.RankedTensorType(t).shape)


@dataclasses.dataclass(frozen=True)
class LocalizeShardMap(ModulePass):
    """Make the per-device part of a shard_map export over all devices the body of @main."""

    NAME = "xhlo-localize-shard-map"

    def run(self, module: ir.Operation) -> None:
        devices = _device_count(module)
        if devices == 1:
            return
        _inline_shard_map_callees(module)
        for func_op in functions(module):
            if len(func_op.regions[0].blocks) == 0:
                continue
            block = func_op.regions[0].blocks[0]
            manual = [
                op.operation
                for op in block.operations
                if op.operation.name == "sdy.manual_computation"
            ]
            if manual:
                self._shardy(module, func_op, manual, devices)
            elif any(
                _custom_call_target(op.operation) == "SPMDFullToShardShape"
                for op in block.operations
            ):
                self._gspmd(module, func_op, devices)

    # Shardy ---------------------------------------------------------------------------------

    def _shardy(
        self, module: ir.Operation, func_op: ir.Operation, manual: list[ir.Operation], devices: int
    ) -> None:
        block = func_op.regions[0].blocks[0]
        allowed = ("sdy.manual_computation", "func.return", *FORWARDING_OPS)
        if len(manual) != 1 or any(op.operation.name not in allowed for op in block.operations):
            return
        manual = manual[0]
        tilings = self._mesh_tilings(module, manual, devices)
        if tilings is None:
            return
        ins, outs = tilings
        body = manual.regions[0].blocks[0]
        arguments = [Tiling.whole(_rank(a.type), devices) for a in block.arguments]
        seen: dict[int, ir.Type] = {}
        for operand, inner, tiling in zip(manual.operands, body.arguments, ins):
            source = _source(operand)
            if not isinstance(source, ir.BlockArgument) or source.owner != block:
                raise PassError(manual, "a shard_map operand is not an argument of the function")
            index = source.arg_number
            if seen.setdefault(index, inner.type) != inner.type:
                raise PassError(
                    manual, f"argument {index} enters the shard_map as two different shards"
                )
            arguments[index] = tiling
            inner.replace_all_uses_with(source)
            source.set_type(inner.type)
        terminator = body.operations[len(body.operations) - 1]
        local_results = list(terminator.operands)
        for op in list(body.operations)[:-1]:
            op.operation.move_before(manual)
        func_return = block.operations[len(block.operations) - 1]
        results = []
        for i, value in enumerate(func_return.operands):
            source = _source(value)
            if not isinstance(source, ir.OpResult) or source.owner != manual:
                raise PassError(
                    func_return, f"result {i} of the function is not a shard_map result"
                )
            func_return.operands[i] = local_results[source.result_number]
            results.append(outs[source.result_number])
        terminator.erase()
        _erase_unused(
            [
                op.operation
                for op in block.operations
                if op.operation.name in allowed[:1] + FORWARDING_OPS
            ]
        )
        _set_signature(func_op)
        _record(module, func_op, arguments, results)

    def _mesh_tilings(self, module: ir.Operation, manual: ir.Operation, devices: int):
        in_text = str(manual.attributes["in_shardings"])
        out_text = str(manual.attributes["out_shardings"])
        name = re.search(r"<@([\w.$-]+)", in_text + out_text)
        meshes = {
            ir.StringAttr(op.attributes["sym_name"]).value: str(op.attributes["mesh"])
            for op in walk_ops(module, "sdy.mesh")
        }
        if name is None or name.group(1) not in meshes:
            raise PassError(manual, "the shard_map names no sdy.mesh of the module")
        try:
            mesh = parse_mesh(meshes[name.group(1)])
            ins, outs = parse_shardings(in_text), parse_shardings(out_text)
        except ValueError as err:
            raise PassError(manual, str(err)) from None
        manual_axes = set(re.findall(r'"([^"]+)"', str(manual.attributes["manual_axes"])))
        if any(size > 1 and axis not in manual_axes for axis, size in mesh):
            return None  # partially manual: the body is still partitioned over the other axes
        if math.prod(size for _, size in mesh) != devices:
            raise PassError(
                manual, f"the mesh {mesh} does not have the program's {devices} devices"
            )
        body = manual.regions[0].blocks[0]
        result_types = [r.type for r in manual.results]
        return (
            [mesh_tiling(mesh, dims, _rank(a.type)) for dims, a in zip(ins, body.arguments)],
            [mesh_tiling(mesh, dims, _rank(t)) for dims, t in zip(outs, result_types)],
        )

    # GSPMD ----------------------------------------------------------------------------------

    def _gspmd(self, module: ir.Operation, func_op: ir.Operation, devices: int) -> None:
        block = func_op.regions[0].blocks[0]
        for arg in block.arguments:
            _merge_entries(arg)
        func_return = block.operations[len(block.operations) - 1]
        entries = []  # (argument, its Sharding call, its FullToShard call)
        for arg in block.arguments:
            sharding = _only_user(arg)
            to_shard = (
                _only_user(sharding.results[0])
                if sharding is not None and sharding.results
                else None
            )
            if sharding is None and not list(arg.uses):
                entries.append((arg, None, None))
                continue
            if (
                _custom_call_target(sharding) != "Sharding"
                or _custom_call_target(to_shard) != "SPMDFullToShardShape"
            ):
                return  # the argument is used globally: not a per-device program
            entries.append((arg, sharding, to_shard))
        exits = []  # (result position, its ShardToFull call, the local value)
        for i, value in enumerate(func_return.operands):
            to_full = value.owner if isinstance(value, ir.OpResult) else None
            if _custom_call_target(to_full) != "SPMDShardToFullShape":
                return
            inner = to_full.operands[0]
            if isinstance(inner, ir.OpResult) and _custom_call_target(inner.owner) == "Sharding":
                inner = inner.owner.operands[0]
            exits.append((i, to_full, inner))
        try:
            arguments = [
                hlo_tiling(_sharding_string(sharding), _rank(arg.type), devices)
                if sharding
                else Tiling.whole(_rank(arg.type), devices)
                for arg, sharding, _ in entries
            ]
            results = [
                hlo_tiling(_sharding_string(to_full), _rank(to_full.results[0].type), devices)
                for _, to_full, _ in exits
            ]
        except ValueError as err:
            raise PassError(func_op, str(err)) from None
        boundary = []
        for arg, sharding, to_shard in entries:
            if to_shard is not None:
                to_shard.results[0].replace_all_uses_with(arg)
                arg.set_type(to_shard.results[0].type)
                boundary += [to_shard, sharding]
        for i, to_full, inner in exits:
            func_return.operands[i] = inner
            boundary.append(to_full)
            if to_full.operands[0] != inner:
                boundary.append(to_full.operands[0].owner)
        _erase_unused(boundary)
        _set_signature(func_op)
        _record(module, func_op, arguments, results)

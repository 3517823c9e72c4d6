"""xhlo-lower-collectives: collectives become byte-moving runtime calls plus compiled math.

The linalg lowering has no patterns for communication, and the runtime that
moves data between devices should not have to know element types or
reduction regions. So each collective is split in two:

* a ``stablehlo.custom_call @xhlo.runtime.<primitive>`` (side-effecting, so it
  is never reordered, merged or dropped) that only moves bytes between the
  devices of a group and synchronizes them. Its ``backend_config`` carries the
  resolved device groups (global ids, see ``process_groups``) and a signature
  of the original op, with which the runtime detects devices that disagree;
* ordinary StableHLO around it that does all typed work: reductions with the
  op's own region in group order, block layout for all-to-all, concatenation,
  zero fill for devices that receive nothing.

Primitives (results are in group order, "member j" is the j-th id of the group):

=====================  ============================================================
``all_gather``         x -> [G, *x]: entry j is member j's x
``all_to_all``         x: [G, *block] -> [G, *block]: entry j is member j's block for me
``all_reduce``         x: [G * n] -> y: [G * n]: block j of y is the ``fold`` kernel applied
                       to block j of every member's x (the runtime calls the kernel)
``collective_permute`` x -> (y, received: i1): y = x of my source pair, if any
``collective_broadcast`` x -> (y, received: i1): y = x of my group's first member
``ragged_all_to_all``  the six operands of the op -> output with the rows placed
``send`` / ``recv``    point-to-point over a channel (recv: payloads + received)
``device_id``          () -> [replica_id, partition_id] as tensor<2xi64>
=====================  ============================================================

So all_reduce = all_gather + a fold (large operands: the ``all_reduce``
primitive with a fold kernel this pass adds as a public function, which also
applies the elementwise ops with constant operands that follow the op, such as
pmean's scale),
reduce_scatter = all_to_all of the scatter blocks + a fold, all_to_all =
block layout + all_to_all + concat.
``xhlo-lower-runtime-calls`` later turns the custom calls into calls of
external functions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from xhlo._mlir import ir, stablehlo_api
from xhlo.dialects import stablehlo as sh

from . import process_groups as pg
from .base import ModulePass, PassError, op_name, walk_ops

RUNTIME_TARGET_PREFIX = "xhlo.runtime."
# public functions this pass adds: the runtime calls them on buffers of several devices
FOLD_KERNEL_PREFIX = "xhlo_all_reduce_fold_"
RAGGED_ALL_TO_ALL_TARGET = "ragged_all_to_all"

_COLLECTIVE_OPS = (
    "stablehlo.all_reduce",
    "stablehlo.cross-replica-sum",
    "stablehlo.all_gather",
    "stablehlo.all_to_all",
    "stablehlo.reduce_scatter",
    "stablehlo.collective_permute",
    "stablehlo.collective_broadcast",
    "stablehlo.collective_reduce",
    "stablehlo.replica_id",
    "stablehlo.partition_id",
    "stablehlo.send",
    "stablehlo.recv",
    "stablehlo.custom_call",
)


# -- reading attributes ---------------------------------------------------------------


def _int_matrix(attr: ir.Attribute) -> list[list[int]]:
    """A 2-D dense integer attribute as lists (negative ids are padding and dropped)."""
    dense = ir.DenseIntElementsAttr(attr)
    shape = ir.RankedTensorType(dense.type).shape
    if len(shape) != 2:
        raise ValueError(f"expected a 2-D tensor of ids, got {dense.type}")
    if shape[0] * shape[1] == 0:
        return []
    values = np.full(shape, dense[0]) if dense.is_splat else np.array(dense).reshape(shape)
    return [[int(v) for v in row if v >= 0] for row in values]


def _channel_id(op: ir.Operation) -> int:
    if "channel_handle" not in op.attributes:
        return 0
    return stablehlo_api.ChannelHandle(op.attributes["channel_handle"]).handle


def _use_global_device_ids(op: ir.Operation) -> bool:
    return "use_global_device_ids" in op.attributes


def _int_attr(op: ir.Operation, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def _groups_attr(op: ir.Operation, name: str = "replica_groups") -> list[list[int]]:
    return _int_matrix(op.attributes[name]) if name in op.attributes else []


def signature(op: ir.Operation) -> str:
    """What every device must agree on: op, types, attributes and region body."""
    operands = ", ".join(str(v.type) for v in op.operands)
    results = ", ".join(str(r.type) for r in op.results)
    attrs = ", ".join(sorted(f"{name} = {op.attributes[name]}" for name in op.attributes))
    text = f"{op.name}({operands}) -> ({results}) {{{attrs}}}"
    bodies = [
        " ".join(inner.operation.name for inner in region.blocks[0].operations)
        for region in op.regions
        if len(region.blocks)
    ]
    return text + (f" region({'; '.join(bodies)})" if bodies else "")


def element_bytes(elem: ir.Type) -> int:
    """Bytes one element occupies in a memref (LLVM store size)."""
    if isinstance(elem, ir.ComplexType):
        return 2 * element_bytes(ir.ComplexType(elem).element_type)
    if isinstance(elem, ir.IntegerType):
        width = ir.IntegerType(elem).width
    elif isinstance(elem, ir.FloatType):
        width = ir.FloatType(elem).width
    elif isinstance(elem, ir.IndexType):
        width = 64
    else:
        raise TypeError(f"no memory layout known for element type {elem}")
    return max(1, 1 << max(0, (width - 1).bit_length() - 3))


def _num_elements(value: ir.Value) -> int:
    return int(np.prod(sh.shape_of(value), dtype=np.int64))


# -- building -------------------------------------------------------------------------


def _dense_ids(rows: list[tuple[int, ...]], width: int | None = None) -> ir.Attribute:
    width = width if width is not None else (len(rows[0]) if rows else 0)
    array = np.array(rows, dtype=np.int64).reshape(len(rows), width)
    return ir.DenseIntElementsAttr.get(array)


def runtime_call(
    primitive: str,
    operands: list[ir.Value],
    result_types: list[ir.Type],
    config: dict[str, ir.Attribute],
) -> list[ir.Value]:
    """A side-effecting ``@xhlo.runtime.<primitive>`` custom call at the insertion point."""
    op = sh.create(
        "stablehlo.custom_call",
        operands,
        result_types,
        {
            "call_target_name": ir.StringAttr.get(RUNTIME_TARGET_PREFIX + primitive),
            "has_side_effect": ir.BoolAttr.get(True),
            "api_version": ir.IntegerAttr.get(sh.i32(), 4),
            "backend_config": ir.DictAttr.get(config),
        },
    )
    return list(op.results)


def runtime_config(
    op: ir.Operation, groups: list[tuple[int, ...]], **extra: ir.Attribute
) -> dict[str, ir.Attribute]:
    """The ``backend_config`` of a runtime call standing for ``op``: what it is, its
    signature (devices compare them) and its device groups."""
    name = op.name
    if name == "stablehlo.custom_call":
        name += " @" + ir.StringAttr(op.attributes["call_target_name"]).value
    config = {
        "op": ir.StringAttr.get(name),
        "signature": ir.StringAttr.get(signature(op)),
        "groups": _dense_ids(groups),
    }
    config.update(extra)
    return config


def _i64(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(sh.i64(), value)


def _stacked_type(value: ir.Value, count: int) -> ir.Type:
    return sh.tensor_type([count, *sh.shape_of(value)], sh.element_type(value))


def _part(stacked: ir.Value, index: int) -> ir.Value:
    """Entry ``index`` of a [G, ...] tensor, without the leading dimension."""
    shape = list(sh.shape_of(stacked))
    start = [index] + [0] * (len(shape) - 1)
    limit = [index + 1] + shape[1:]
    return sh.reshape(sh.slice(stacked, start, limit), shape[1:])


def _in_region_type(region: ir.Region, stacked: ir.Value) -> ir.Value:
    """``stacked`` converted to the element type the reduction body takes."""
    elem = ir.RankedTensorType(region.blocks[0].arguments[0].type).element_type
    return stacked if sh.element_type(stacked) == elem else sh.convert(stacked, elem)


def _fold(region: ir.Region, stacked: ir.Value, count: int, epilogue: Sequence[_Step] = ()) -> ir.Value:
    """region(...region(region(x0, x1), x2)..., x{G-1}) elementwise: one order, every device."""
    stacked = _in_region_type(region, stacked)
    return _fold_parts(region, [_part(stacked, index) for index in range(count)], epilogue)


def _fold_parts(region: ir.Region, parts: list[ir.Value], epilogue: Sequence[_Step] = ()) -> ir.Value:
    """The G ``parts`` folded with ``region`` in order, then the ``epilogue`` applied: one
    ``stablehlo.map`` whose body applies the region G-1 times, so the fold is a single pass
    without intermediate tensors."""
    if len(parts) == 1 and not epilogue:
        return parts[0]
    scalar = region.blocks[0].arguments[0].type
    shape = sh.shape_of(parts[0])
    op = sh.create(
        "stablehlo.map",
        parts,
        [sh.tensor_type(shape, ir.RankedTensorType(scalar).element_type)],
        {"dimensions": sh.dense_i64(range(len(shape)))},
        regions=1,
    )

    def body(*values):
        acc = values[0]
        for value in values[1:]:
            (acc,) = sh.inline_region(region, [acc, value])
        for step in epilogue:
            acc = step.apply(acc)
        return [acc]

    sh.build_region(op.regions[0], [scalar] * len(parts), body)
    return op.result


# -- the elementwise ops after an all_reduce, fused into its fold kernel ----------------

# ``psum(x) * (1 / n)`` (pmean) and the like: the fold kernel applies these to the block it
# folds, so no separate pass over the whole result reads and writes it again
_EPILOGUE_OPS = frozenset(
    f"stablehlo.{name}"
    for name in (
        "add", "subtract", "multiply", "divide", "maximum", "minimum", "negate", "abs",
        "sqrt", "rsqrt", "exponential", "log", "tanh", "logistic", "floor", "ceil", "sign",
    )
)


@dataclasses.dataclass(frozen=True)
class _Step:
    """One elementwise op of an epilogue: its name, attributes and operands, each either the
    running value (None) or the attribute of a splat constant."""

    name: str
    attributes: dict[str, ir.Attribute]
    operands: tuple[ir.Attribute | None, ...]

    def apply(self, acc: ir.Value) -> ir.Value:
        scalar = acc.type
        operands = [
            acc if splat is None else sh.create(
                "stablehlo.constant", [], [scalar], {"value": ir.DenseElementsAttr.get_splat(scalar, splat)}
            ).result
            for splat in self.operands
        ]
        return sh.create(self.name, operands, [scalar], self.attributes).result


def _epilogue(op: ir.Operation) -> tuple[list[_Step], list[ir.Operation]]:
    """The chain of elementwise ops that follows the only result of ``op``: each the only
    user of the previous value, of the same type, with splat constants as other operands."""
    steps: list[_Step] = []
    chain: list[ir.Operation] = []
    value = op.results[0] if len(op.results) == 1 else None
    while value is not None:
        uses = list(value.uses)
        user = uses[0].owner if len(uses) == 1 else None
        if user is None or op_name(user) not in _EPILOGUE_OPS or user.results[0].type != value.type:
            break
        operands = tuple(None if v == value else sh.splat_element(v) for v in user.operands)
        if any(splat is None for v, splat in zip(user.operands, operands) if v != value):
            break
        steps.append(_Step(op_name(user), {name: user.attributes[name] for name in user.attributes}, operands))
        chain.append(user)
        value = user.results[0]
    return steps, chain


def _fold_kernel(
    op: ir.Operation, blocks: list[ir.Type], count: int, name: str, epilogue: Sequence[_Step] = ()
) -> None:
    """``func.func @name(G blocks of each operand...) -> (G copies of each folded block)``,
    public, for the runtime to call on its peers' memory (see ``FOLD_KERNEL_PREFIX``): the
    member that folds a block writes it into every member's result at once
    (``xhlo-fan-out-repeated-results`` makes the copies one loop's stores), so no member
    reads it back to copy it."""
    module = op.parent
    while module.name != "builtin.module":
        module = module.parent
    per_member = [t for t in blocks for _ in range(count)]  # the inputs, and the outputs
    with ir.InsertionPoint(module.regions[0].blocks[0]), op.location:
        func = sh.create(
            "func.func",
            [],
            [],
            {
                "sym_name": ir.StringAttr.get(name),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get(per_member, per_member)),
            },
            regions=1,
        )
        entry = func.regions[0].blocks.append(*per_member)
        with ir.InsertionPoint(entry):
            args = list(entry.arguments)
            folded = [
                _fold_parts(op.regions[0], args[i * count : (i + 1) * count], epilogue)
                for i in range(len(blocks))
            ]
            sh.create("func.return", [f for f in folded for _ in range(count)], [])


def _concat_leading(stacked: ir.Value, dimension: int) -> ir.Value:
    """[G, s0, ..., sn] -> the G entries concatenated along ``dimension``."""
    shape = list(sh.shape_of(stacked))
    count, inner = shape[0], shape[1:]
    if dimension:
        stacked = sh.transpose(
            stacked, [*range(1, dimension + 1), 0, *range(dimension + 1, len(shape))]
        )
    inner[dimension] *= count
    return sh.reshape(stacked, inner)


def _split_leading(value: ir.Value, dimension: int, count: int) -> ir.Value:
    """x -> [G, block]: x split into ``count`` blocks along ``dimension``, stacked."""
    shape = list(sh.shape_of(value))
    blocked = sh.reshape(
        value, [*shape[:dimension], count, shape[dimension] // count, *shape[dimension + 1 :]]
    )
    rank = len(shape) + 1
    if dimension:
        blocked = sh.transpose(blocked, [dimension, *range(dimension), *range(dimension + 1, rank)])
    return blocked


def _zeros_unless(received: ir.Value, value: ir.Value) -> ir.Value:
    """``value`` where the runtime delivered data, zeros of its type otherwise."""
    return sh.select(received, value, sh.constant(0, value.type))


def _replace(op: ir.Operation, values: list[ir.Value]) -> None:
    for result, value in zip(op.results, values):
        result.replace_all_uses_with(value)
    op.erase()


# -- the lowering of each op ----------------------------------------------------------


class _Symbols:
    """Fresh function names in a module."""

    def __init__(self, module: ir.Operation):
        self.taken = {
            ir.StringAttr(op.operation.attributes["sym_name"]).value
            for op in module.regions[0].blocks[0].operations
            if "sym_name" in op.operation.attributes
        }

    def fresh(self, prefix: str) -> str:
        index = 0
        while f"{prefix}{index}" in self.taken:
            index += 1
        self.taken.add(f"{prefix}{index}")
        return f"{prefix}{index}"


@dataclasses.dataclass(frozen=True)
class _Lowering:
    grid: pg.DeviceGrid
    split_reduction_bytes: int
    in_place_reduction_bytes: int
    symbols: _Symbols

    def groups(
        self, op: ir.Operation, mode: str, raw: list[list[int]], *, cover: bool
    ) -> list[tuple[int, ...]]:
        problem = pg.check_ids(self.grid, mode, raw, cover=cover)
        if problem:
            raise PassError(op, problem)
        return pg.process_groups(self.grid, mode, raw)

    def reduction_groups(self, op: ir.Operation, *, uneven: bool = False) -> list[tuple[int, ...]]:
        """The op's groups of global ids; of one size unless ``uneven`` (all_reduce)."""
        mode = pg.reduction_mode(_channel_id(op), _use_global_device_ids(op))
        if _use_global_device_ids(op) and _channel_id(op) <= 0:
            raise PassError(op, "use_global_device_ids needs a channel_handle with a positive id")
        groups = self.groups(op, mode, _groups_attr(op), cover=True)
        return groups if uneven else self.equal_groups(op, groups)

    def equal_groups(
        self, op: ir.Operation, groups: list[tuple[int, ...]]
    ) -> list[tuple[int, ...]]:
        if pg.group_size(groups) is None:
            raise PassError(
                op,
                f"replica groups of different sizes are not supported: {[list(g) for g in groups]}",
            )
        return groups

    # all_gather, all_reduce, reduce_scatter, all_to_all -------------------------------

    def all_gather(self, op: ir.Operation) -> None:
        groups = self.reduction_groups(op)
        count = len(groups[0])
        dimension = _int_attr(op, "all_gather_dim")
        for x, r in zip(op.operands, op.results):
            expected = list(sh.shape_of(x))
            expected[dimension] *= count
            if list(ir.RankedTensorType(r.type).shape) != expected:
                raise PassError(
                    op,
                    f"result {r.type} is not {count} operands {x.type} concatenated along {dimension}",
                )
        xs = list(op.operands)
        stacked = runtime_call(
            "all_gather", xs, [_stacked_type(x, count) for x in xs], runtime_config(op, groups)
        )
        _replace(op, [_concat_leading(s, dimension) for s in stacked])

    def all_reduce(self, op: ir.Operation) -> None:
        groups = self.reduction_groups(op, uneven=True)
        count = pg.group_size(groups) or 0  # 0: groups of different sizes, gathered and folded
        xs = list(op.operands)
        in_place = count > 1 and self.split_reduction(op, xs, count, self.in_place_reduction_bytes)
        if in_place or (count > 1 and self.split_reduction(op, xs, count, self.split_reduction_bytes)):
            # each member folds one block: the ops after the op apply there, to 1/G of it
            steps, chain = _epilogue(op)
            lowering = self.in_place_all_reduce if in_place else self.reduce_scatter_gather
            reduced = lowering(op, groups, xs, steps)
            if chain:
                chain[-1].results[0].replace_all_uses_with(reduced[0])
                for fused in reversed(chain):
                    fused.erase()
            _replace(op, reduced)
            return
        _replace(op, self.gather_and_fold(op, groups))

    def gather_and_fold(self, op: ir.Operation, groups: list[tuple[int, ...]]) -> list[ir.Value]:
        """Every member gathers its group's operands and folds them in group order."""
        if pg.group_size(groups) is None:
            return self.gather_and_fold_uneven(op, groups)
        count = len(groups[0])
        xs = list(op.operands)
        stacked = runtime_call(
            "all_gather", xs, [_stacked_type(x, count) for x in xs], runtime_config(op, groups)
        )
        return [_fold(op.regions[0], s, count) for s in stacked]

    def gather_and_fold_uneven(self, op: ir.Operation, groups: list[tuple[int, ...]]) -> list[ir.Value]:
        """Groups of different sizes: every device gathers every operand, folds each group's
        members in group order and keeps its own group's fold (the runtime moves one shape
        per call; such groups are rare, so the G-fold work is too)."""
        everyone = tuple(range(self.grid.num_devices))
        xs = list(op.operands)
        stacked = runtime_call(
            "all_gather", xs, [_stacked_type(x, len(everyone)) for x in xs], runtime_config(op, [everyone])
        )
        group_of = np.zeros(len(everyone), dtype=np.int32)
        for index, group in enumerate(groups):
            group_of[list(group)] = index
        mine = self.on_this_device(op, group_of)
        results = []
        for s in stacked:
            s = _in_region_type(op.regions[0], s)
            folds = [_fold_parts(op.regions[0], [_part(s, d) for d in group]) for group in groups]
            shape = sh.shape_of(folds[0])
            table = sh.concatenate([sh.reshape(f, [1, *shape]) for f in folds], 0)
            zeros = [sh.index_scalar(0)] * len(shape)
            results.append(sh.reshape(sh.dynamic_slice(table, [mine, *zeros], [1, *shape]), shape))
        return results

    def split_reduction(self, op: ir.Operation, xs: list[ir.Value], count: int, threshold: int) -> bool:
        """Operands of at least ``threshold`` bytes that split evenly, reduced in their own
        element type: each member reduces one slice (bandwidth-optimal)."""
        if threshold <= 0:
            return False
        region_type = ir.RankedTensorType(op.regions[0].blocks[0].arguments[0].type).element_type
        return all(
            sh.element_type(x) == region_type == sh.element_type(r) for x, r in zip(xs, op.results)
        ) and all(
            _num_elements(x) % count == 0
            and _num_elements(x) * element_bytes(sh.element_type(x)) >= threshold
            for x in xs
        )

    def reduce_scatter_gather(
        self, op: ir.Operation, groups, xs: list[ir.Value], epilogue: Sequence[_Step] = ()
    ) -> list[ir.Value]:
        """Member j folds slice j of everyone's operand, in group order (then applies the
        ``epilogue``); then all gather the slices.

        Every element is still reduced in group order by exactly one member, so all
        members get the same values as with a gather-and-fold, with 1/G of the fold
        work and of the buffers.
        """
        count = len(groups[0])
        blocks = [sh.reshape(x, [count, _num_elements(x) // count]) for x in xs]
        received = runtime_call("all_to_all", blocks, [b.type for b in blocks], runtime_config(op, groups))
        slices = [_fold(op.regions[0], r, count, epilogue) for r in received]
        gathered = runtime_call(
            "all_gather", slices, [_stacked_type(s, count) for s in slices], runtime_config(op, groups)
        )
        return [sh.reshape(g, sh.shape_of(x)) for g, x in zip(gathered, xs)]

    def in_place_all_reduce(
        self, op: ir.Operation, groups, xs: list[ir.Value], epilogue: Sequence[_Step] = ()
    ) -> list[ir.Value]:
        """Member j folds block j of every member's operand where it lies and everyone copies
        the folded blocks: a ``@xhlo.runtime.all_reduce`` whose ``fold`` kernel (compiled
        code, typed math, then the ``epilogue``) the runtime calls between its barriers.

        Every element is still reduced in group order by exactly one member, so all
        members get the same values as with a gather-and-fold, with 1/G of the fold
        work and no staging copies.
        """
        count = len(groups[0])
        flat = [sh.reshape(x, [_num_elements(x)]) for x in xs]
        blocks = [sh.tensor_type([_num_elements(x) // count], sh.element_type(x)) for x in xs]
        name = self.symbols.fresh(FOLD_KERNEL_PREFIX)
        _fold_kernel(op, blocks, count, name, epilogue)
        config = runtime_config(op, groups, fold=ir.StringAttr.get(name))
        reduced = runtime_call("all_reduce", flat, [f.type for f in flat], config)
        return [sh.reshape(r, sh.shape_of(x)) for r, x in zip(reduced, xs)]

    def cross_replica_sum(self, op: ir.Operation) -> None:
        groups = self.equal_groups(
            op, self.groups(op, pg.CROSS_REPLICA, _groups_attr(op), cover=True)
        )
        count = len(groups[0])
        x = op.operands[0]
        (stacked,) = runtime_call("all_gather", [x], [_stacked_type(x, count)], runtime_config(op, groups))
        total = _part(stacked, 0)
        for index in range(1, count):
            total = sh.add(total, _part(stacked, index))
        _replace(op, [total])

    def reduce_scatter(self, op: ir.Operation) -> None:
        groups = self.reduction_groups(op)
        count = len(groups[0])
        dimension = _int_attr(op, "scatter_dimension")
        x = op.operands[0]
        if sh.shape_of(x)[dimension] % count:
            raise PassError(
                op, f"scatter dimension {dimension} of {x.type} does not split into {count} blocks"
            )
        blocks = _split_leading(x, dimension, count)
        (received,) = runtime_call("all_to_all", [blocks], [blocks.type], runtime_config(op, groups))
        _replace(op, [_fold(op.regions[0], received, count)])

    def all_to_all(self, op: ir.Operation) -> None:
        mode = pg.channel_mode(_channel_id(op))
        groups = self.equal_groups(op, self.groups(op, mode, _groups_attr(op), cover=True))
        count = len(groups[0])
        split, concat = _int_attr(op, "split_dimension"), _int_attr(op, "concat_dimension")
        if _int_attr(op, "split_count") != count:
            raise PassError(
                op,
                f"split_count {_int_attr(op, 'split_count')} differs from the group size {count}",
            )
        blocks = []
        for x in op.operands:
            if sh.shape_of(x)[split] % count:
                raise PassError(
                    op, f"split dimension {split} of {x.type} does not split into {count} blocks"
                )
            blocks.append(_split_leading(x, split, count))
        received = runtime_call("all_to_all", blocks, [b.type for b in blocks], runtime_config(op, groups))
        _replace(op, [_concat_leading(r, concat) for r in received])

    # permute, broadcast --------------------------------------------------------------

    def pairs(
        self, op: ir.Operation, mode: str
    ) -> tuple[list[tuple[int, ...]], list[tuple[int, int]]]:
        """The mode's groups (covering every device) and the pairs as global ids."""
        raw = _int_matrix(op.attributes["source_target_pairs"])
        problem = pg.check_ids(self.grid, mode, [[s] for s, _ in raw], cover=False) or pg.check_ids(
            self.grid, mode, [[t] for _, t in raw], cover=False
        )
        if problem:
            raise PassError(op, problem.replace("replica_groups", "source_target_pairs"))
        groups = pg.process_groups(self.grid, mode, [])
        pairs = [(g[s], g[t]) for g in groups for s, t in raw]
        return groups, pairs

    def collective_permute(self, op: ir.Operation) -> None:
        groups, pairs = self.pairs(op, pg.channel_mode(_channel_id(op)))
        x = op.operands[0]
        config = runtime_config(op, groups, pairs=_dense_ids(pairs, 2))
        y, received = runtime_call(
            "collective_permute", [x], [x.type, sh.tensor_type([], sh.i1())], config
        )
        # a ring (every device some pair's target) has no zeros to fill: no pass over y
        every_device_receives = {t for _, t in pairs} == {d for g in groups for d in g}
        _replace(op, [y if every_device_receives else _zeros_unless(received, y)])

    def collective_broadcast(self, op: ir.Operation) -> None:
        mode = pg.channel_mode(_channel_id(op))
        groups = self.groups(op, mode, _groups_attr(op), cover=False)
        x = op.operands[0]
        y, received = runtime_call(
            "collective_broadcast", [x], [x.type, sh.tensor_type([], sh.i1())], runtime_config(op, groups)
        )
        _replace(op, [_zeros_unless(received, y)])

    def collective_reduce(self, op: ir.Operation) -> None:
        """A reduction kept only by the first member of each group, the others get zeros:
        gathered and folded in group order (as a small all_reduce, groups of any sizes),
        then selected by the device's global id."""
        groups = self.groups(op, pg.channel_mode(_channel_id(op)), _groups_attr(op), cover=True)
        reduced = self.gather_and_fold(op, groups)
        roots = np.zeros(self.grid.num_devices, dtype=bool)
        roots[[group[0] for group in groups]] = True
        is_root = self.on_this_device(op, roots)
        _replace(op, [sh.select(is_root, value, sh.constant(0, r.type)) for value, r in zip(reduced, op.results)])

    # ids -------------------------------------------------------------------------------

    def device_ids(self, op: ir.Operation) -> ir.Value:
        """This device's ``[replica_id, partition_id]`` (i64)."""
        (ids,) = runtime_call("device_id", [], [sh.tensor_type([2], sh.i64())], runtime_config(op, []))
        return ids

    def global_id(self, op: ir.Operation) -> ir.Value:
        """This device's global id, replica_id * num_partitions + partition_id (0-d i64)."""
        ids = self.device_ids(op)
        replica, partition = (sh.reshape(sh.slice(ids, [i], [i + 1]), []) for i in (0, 1))
        return sh.add(sh.multiply(replica, sh.constant(self.grid.partitions, replica.type)), partition)

    def on_this_device(self, op: ir.Operation, per_device: np.ndarray) -> ir.Value:
        """The entry of ``per_device`` (one per global id) for the device running (0-d)."""
        return sh.reshape(sh.dynamic_slice(sh.constant_array(per_device), [self.global_id(op)], [1]), [])

    def device_id(self, op: ir.Operation) -> None:
        ids = self.device_ids(op)
        index = 0 if op.name == "stablehlo.replica_id" else 1
        part = sh.reshape(sh.slice(ids, [index], [index + 1]), [])
        result_elem = ir.RankedTensorType(op.results[0].type).element_type
        _replace(op, [sh.convert(part, result_elem)])

    # ragged all-to-all -------------------------------------------------------------------

    def ragged_all_to_all(self, op: ir.Operation) -> None:
        try:
            config = ir.DictAttr(op.attributes["backend_config"])
        except (KeyError, ValueError, TypeError):
            raise PassError(
                op, "ragged_all_to_all needs a backend_config dictionary with replica_groups"
            ) from None
        channel = ir.IntegerAttr(config["channel_id"]).value if "channel_id" in config else 0
        raw = _int_matrix(config["replica_groups"]) if "replica_groups" in config else []
        mode = pg.channel_mode(channel)
        groups = self.equal_groups(op, self.groups(op, mode, raw, cover=True))
        count = len(groups[0])
        if len(op.operands) != 6 or len(op.results) != 1:
            raise PassError(
                op,
                "ragged_all_to_all takes (input, output, input_offsets, send_sizes, "
                "output_offsets, recv_sizes) and returns the output",
            )
        data, output, *metadata = op.operands
        if sh.shape_of(data)[1:] != sh.shape_of(output)[1:] or sh.element_type(
            data
        ) != sh.element_type(output):
            raise PassError(op, f"input {data.type} and output {output.type} rows differ")
        sizes = {int(np.prod(sh.shape_of(m))) for m in metadata}
        if (
            len(sizes) != 1
            or sizes.pop() % count
            or not all(sh.is_integer(sh.element_type(m)) for m in metadata)
        ):
            raise PassError(
                op,
                f"offsets and sizes must be integer tensors of equal size, a multiple of {count}",
            )
        updates = int(np.prod(sh.shape_of(metadata[0]))) // count
        extra = {
            "num_updates": _i64(updates),
            "input_rows": _i64(sh.shape_of(data)[0]),
            "output_rows": _i64(sh.shape_of(output)[0]),
            "channel": _i64(channel),
        }
        (result,) = runtime_call(
            "ragged_all_to_all", list(op.operands), [output.type], runtime_config(op, groups, **extra)
        )
        _replace(op, [result])

    # send / recv --------------------------------------------------------------------------

    def point_to_point(self, op: ir.Operation) -> tuple[dict[str, ir.Attribute], ir.Value]:
        if (
            "is_host_transfer" in op.attributes
            and ir.BoolAttr(op.attributes["is_host_transfer"]).value
        ):
            raise PassError(op, f"'{op.name}' to or from the host is not supported")
        if "source_target_pairs" not in op.attributes or not _int_matrix(
            op.attributes["source_target_pairs"]
        ):
            raise PassError(op, f"'{op.name}' between devices needs source_target_pairs")
        # channel ids are positive here, so the spec's mode choice says nothing: pairs name
        # partitions when the program has several, replicas otherwise
        mode = pg.CROSS_PARTITION if self.grid.partitions > 1 else pg.CROSS_REPLICA
        groups, pairs = self.pairs(op, mode)
        config = runtime_config(op, groups, pairs=_dense_ids(pairs, 2), channel=_i64(_channel_id(op)))
        token = op.operands[len(op.operands) - 1]
        return config, token

    def send(self, op: ir.Operation) -> None:
        config, token = self.point_to_point(op)
        payload = list(op.operands)[:-1]
        runtime_call("send", payload, [], config)
        _replace(op, [token])

    def recv(self, op: ir.Operation) -> None:
        config, token = self.point_to_point(op)
        payload_types = [r.type for r in op.results][:-1]
        *payload, received = runtime_call(
            "recv", [], [*payload_types, sh.tensor_type([], sh.i1())], config
        )
        _replace(op, [*(_zeros_unless(received, p) for p in payload), token])


def device_grid(module: ir.Operation) -> pg.DeviceGrid:
    """The replica x partition grid from the module's ``mhlo.num_replicas/num_partitions``."""

    def count(name: str) -> int:
        attrs = module.attributes
        return ir.IntegerAttr(attrs[name]).value if name in attrs else 1

    return pg.DeviceGrid(count("mhlo.num_replicas"), count("mhlo.num_partitions"))


@dataclasses.dataclass(frozen=True)
class LowerCollectives(ModulePass):
    """Split collectives into @xhlo.runtime.* custom calls (bytes) and StableHLO (math)."""

    NAME = "xhlo-lower-collectives"
    # all_reduce operands of at least this many bytes are reduced slice-wise
    # (reduce-scatter + all-gather); 0 keeps gather-and-fold for all sizes
    split_reduction_bytes: int = 128 * 1024
    # ... and from this many bytes in place (the runtime calls the fold kernel: no
    # staging copies, but a Python call per collective); 0: never
    in_place_reduction_bytes: int = 1024 * 1024

    def run(self, module: ir.Operation) -> None:
        lowering = _Lowering(
            device_grid(module), self.split_reduction_bytes, self.in_place_reduction_bytes, _Symbols(module)
        )
        handlers = {
            "stablehlo.all_reduce": lowering.all_reduce,
            "stablehlo.cross-replica-sum": lowering.cross_replica_sum,
            "stablehlo.all_gather": lowering.all_gather,
            "stablehlo.all_to_all": lowering.all_to_all,
            "stablehlo.reduce_scatter": lowering.reduce_scatter,
            "stablehlo.collective_permute": lowering.collective_permute,
            "stablehlo.collective_broadcast": lowering.collective_broadcast,
            "stablehlo.collective_reduce": lowering.collective_reduce,
            "stablehlo.replica_id": lowering.device_id,
            "stablehlo.partition_id": lowering.device_id,
            "stablehlo.send": lowering.send,
            "stablehlo.recv": lowering.recv,
        }
        for op in walk_ops(module, _COLLECTIVE_OPS):
            if op.name == "stablehlo.custom_call":
                target = ir.StringAttr(op.attributes["call_target_name"]).value
                if target != RAGGED_ALL_TO_ALL_TARGET:
                    continue
                handler = lowering.ragged_all_to_all
            else:
                handler = handlers[op.name]
            with ir.InsertionPoint(op), op.location:
                handler(op)

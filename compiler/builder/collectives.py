"""Cross-replica ops: ReplicaId/PartitionId and the collectives.

Part of ``xb.ops``. They emit the StableHLO collectives (and RaggedAllToAll as
the ``custom_call @ragged_all_to_all`` form jax uses); running them needs the
collective runtime. ``replica_groups`` is a list of id lists (empty = one group
of all replicas); ``channel_id`` an int or an object with ``handle``.
``layout``/``shape_with_layout`` only describe the exchanged buffers on
devices that have layouts and are checked but not otherwise used on the CPU.
"""

from __future__ import annotations

from collections.abc import Sequence

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from . import shape as shp
from ._support import (
    accepts_builder,
    array,
    check_dimensions,
    dense_i64_matrix,
    i32_attr,
    i64_attr,
    resolve_builder,
    scalar_shape,
    single_op,
    structured,
)
from .builder import XlaOp, as_computation, flatten
from .shape import Layout, Shape

__all__ = [
    "AllGather",
    "AllReduce",
    "AllToAll",
    "CollectiveBroadcast",
    "CollectivePermute",
    "CrossReplicaSum",
    "PartitionID",
    "PartitionId",
    "RaggedAllToAll",
    "ReduceScatter",
    "ReplicaId",
]


def _groups(op_name: str, replica_groups) -> list[list[int]]:
    groups = []
    for g in replica_groups or ():
        ids = getattr(g, "replica_ids", g)
        groups.append([int(i) for i in ids])
    seen = [i for g in groups for i in g]
    if len(seen) != len(set(seen)) or any(i < 0 for i in seen):
        raise ValueError(f"{op_name}: replica_groups {groups} must list every id at most once")
    return groups


def _groups_attr(groups: list[list[int]]) -> ir.Attribute:
    width = max((len(g) for g in groups), default=0)
    return dense_i64_matrix([g + [-1] * (width - len(g)) for g in groups], width)


def channel_number(channel_id) -> int | None:
    """The channel of an int or a ``ChannelHandle``-like object with ``handle``."""
    if channel_id is None:
        return None
    return int(getattr(channel_id, "handle", channel_id))


def channel_handle_attr(channel: int) -> ir.Attribute:
    """A device-to-device (type 1) ``#stablehlo.channel_handle``."""
    return ir.Attribute.parse(f"#stablehlo.channel_handle<handle = {channel}, type = 1>")


def _common_attrs(groups, channel, use_global_device_ids=None) -> dict:
    attrs = {"replica_groups": _groups_attr(groups)}
    if channel is not None:
        attrs["channel_handle"] = channel_handle_attr(channel)
    if use_global_device_ids:
        attrs["use_global_device_ids"] = ir.UnitAttr.get()
    return attrs


def _check_layout(op_name: str, layout, shape: Shape) -> None:
    if layout is None:
        return
    if isinstance(layout, Shape):
        if not layout.equal_ignoring_layout(shape):
            raise ValueError(f"{op_name}: shape_with_layout {layout} does not match {shape}")
        return
    (layout if isinstance(layout, Layout) else Layout(layout)).validate(shape.dimensions())


def _explicit_groups(groups: list[list[int]], count: int) -> list[list[int]]:
    """Empty groups mean one group of all replicas; spell it out (the StableHLO
    verifier needs the group size of shape-changing collectives)."""
    return groups or [list(range(count))]


def _group_size(op_name: str, groups, count, what: str) -> int:
    if groups:
        sizes = {len(g) for g in groups}
        if len(sizes) != 1:
            raise ValueError(f"{op_name}: replica groups must all have the same size, got {groups}")
        size = sizes.pop()
        if count is not None and int(count) != size:
            raise ValueError(f"{op_name}: {what} {count} must equal the replica group size {size}")
        return size
    if count is None or int(count) < 1:
        raise ValueError(f"{op_name}: {what} is needed (>= 1) when replica_groups is empty")
    return int(count)


@accepts_builder
def ReplicaId() -> XlaOp:
    """The id (u32 scalar) of the running replica."""
    builder = resolve_builder("ReplicaId")
    return single_op("ReplicaId", "stablehlo.replica_id", scalar_shape("u32"), [], builder=builder)


@accepts_builder
def PartitionId(shape: Shape | None = None) -> XlaOp:
    """The id (u32 scalar) of the running partition."""
    builder = resolve_builder("PartitionId")
    if shape is not None and not shape.equal_ignoring_layout(scalar_shape("u32")):
        raise ValueError(f"PartitionId: the shape must be u32[], got {shape}")
    return single_op(
        "PartitionId", "stablehlo.partition_id", scalar_shape("u32"), [], builder=builder
    )


PartitionID = PartitionId  # the seed's spelling


def _reduction(op_name: str, operand, computation) -> tuple[list[Shape], object]:
    if not isinstance(operand, XlaOp):
        raise TypeError(f"{op_name}: operand must be an XlaOp, got {type(operand).__name__}")
    leaves = operand.shape.leaves()
    types = {s.element_type() for s in leaves}
    if len(types) != 1:
        raise TypeError(
            f"{op_name}: tuple elements must share one element type for one computation, got {operand.shape}"
        )
    scalar = scalar_shape(types.pop())
    comp = as_computation(computation, [scalar, scalar], op_name)
    if not comp.result_shape().equal_ignoring_layout(scalar):
        raise TypeError(
            f"{op_name}: computation {comp.name()!r} returns {comp.result_shape()}, expected {scalar}"
        )
    return leaves, comp


def AllReduce(
    operand,
    computation,
    replica_groups=(),
    channel_id=None,
    shape_with_layout=None,
    use_global_device_ids=None,
) -> XlaOp:
    """Reduce ``operand`` (an array or a tuple, element-wise) across the replicas of each group."""
    _, comp = _reduction("AllReduce", operand, computation)
    groups, channel = _groups("AllReduce", replica_groups), channel_number(channel_id)
    if not operand.shape.is_tuple():
        _check_layout("AllReduce", shape_with_layout, operand.shape)
    out = operand.shape.without_layout()

    def emit(em, value):
        flat = flatten(value)
        op = sh.create(
            "stablehlo.all_reduce",
            flat,
            [v.type for v in flat],
            _common_attrs(groups, channel, use_global_device_ids),
            regions=1,
        )
        em.region(op.regions[0], comp)
        return structured(out, op.results)

    return operand.builder.add_op("AllReduce", out, [operand], emit)


def CrossReplicaSum(operand, replica_groups=()) -> XlaOp:
    """AllReduce with addition."""
    from .ops import Add

    op = AllReduce(operand, lambda a, b: Add(a, b), replica_groups)
    op.op_name = "CrossReplicaSum"
    return op


def AllGather(
    operand,
    all_gather_dimension: int,
    shard_count: int | None = None,
    replica_groups=(),
    channel_id=None,
    layout=None,
    use_global_device_ids=None,
) -> XlaOp:
    """Concatenate the operands of each group (in group order) along ``all_gather_dimension``."""
    shape = array("AllGather", operand)
    (d,) = check_dimensions(
        "AllGather", [all_gather_dimension], shape.rank(), "all_gather_dimension", shape
    )
    groups, channel = _groups("AllGather", replica_groups), channel_number(channel_id)
    count = _group_size("AllGather", groups, shard_count, "shard_count")
    groups = _explicit_groups(groups, count)
    dims = list(shape.dimensions())
    dims[d] *= count
    out = Shape(shape.element_type(), dims)
    _check_layout("AllGather", layout, out)
    return single_op(
        "AllGather",
        "stablehlo.all_gather",
        out,
        [operand],
        lambda: {
            "all_gather_dim": i64_attr(d),
            **_common_attrs(groups, channel, use_global_device_ids),
        },
    )


def AllToAll(
    operand,
    split_dimension: int,
    concat_dimension: int,
    split_count: int | None = None,
    replica_groups=(),
    layout=None,
    channel_id=None,
) -> XlaOp:
    """Split along ``split_dimension`` into ``split_count`` blocks, send block i to
    the i-th member of the group, concatenate what arrives along ``concat_dimension``."""
    shape = array("AllToAll", operand)
    (split,) = check_dimensions(
        "AllToAll", [split_dimension], shape.rank(), "split_dimension", shape
    )
    (concat,) = check_dimensions(
        "AllToAll", [concat_dimension], shape.rank(), "concat_dimension", shape
    )
    groups, channel = _groups("AllToAll", replica_groups), channel_number(channel_id)
    count = _group_size("AllToAll", groups, split_count, "split_count")
    groups = _explicit_groups(groups, count)
    dims = list(shape.dimensions())
    if dims[split] % count:
        raise ValueError(
            f"AllToAll: split dimension {split} of {shape} is not divisible by split_count {count}"
        )
    dims[split] //= count
    dims[concat] *= count
    out = Shape(shape.element_type(), dims)
    _check_layout("AllToAll", layout, out)

    def attrs():
        a = {
            "split_dimension": i64_attr(split),
            "concat_dimension": i64_attr(concat),
            "split_count": i64_attr(count),
            "replica_groups": _groups_attr(groups),
        }
        if channel is not None:
            a["channel_handle"] = channel_handle_attr(channel)
        return a

    return single_op("AllToAll", "stablehlo.all_to_all", out, [operand], attrs)


def ReduceScatter(
    operand,
    computation,
    scatter_dimension: int,
    shard_count: int | None = None,
    replica_groups=(),
    channel_id=None,
    layout=None,
    use_global_device_ids=None,
) -> XlaOp:
    """AllReduce, then the k-th member of each group keeps block k of ``scatter_dimension``."""
    shape = array("ReduceScatter", operand)
    _, comp = _reduction("ReduceScatter", operand, computation)
    (d,) = check_dimensions(
        "ReduceScatter", [scatter_dimension], shape.rank(), "scatter_dimension", shape
    )
    groups, channel = _groups("ReduceScatter", replica_groups), channel_number(channel_id)
    count = _group_size("ReduceScatter", groups, shard_count, "shard_count")
    groups = _explicit_groups(groups, count)
    dims = list(shape.dimensions())
    if dims[d] % count:
        raise ValueError(
            f"ReduceScatter: dimension {d} of {shape} is not divisible by shard_count {count}"
        )
    dims[d] //= count
    out = Shape(shape.element_type(), dims)
    _check_layout("ReduceScatter", layout, out)

    def emit(em, value):
        attrs = {
            "scatter_dimension": i64_attr(d),
            **_common_attrs(groups, channel, use_global_device_ids),
        }
        op = sh.create("stablehlo.reduce_scatter", [value], [em.tensor_type(out)], attrs, regions=1)
        em.region(op.regions[0], comp)
        return op.result

    return operand.builder.add_op("ReduceScatter", out, [operand], emit)


def CollectivePermute(
    operand, source_target_pairs: Sequence[tuple[int, int]], channel_id=None, inplace: bool = False
) -> XlaOp:
    """For each (source, target) pair, the target receives the source's operand
    (replicas that are no target get zeros). ``inplace`` has no StableHLO form."""
    shape = array("CollectivePermute", operand)
    pairs = [(int(s), int(t)) for s, t in source_target_pairs]
    sources, targets = [s for s, _ in pairs], [t for _, t in pairs]
    if len(set(sources)) != len(sources) or len(set(targets)) != len(targets):
        raise ValueError(f"CollectivePermute: pairs {pairs} repeat a source or a target")
    channel = channel_number(channel_id)

    def attrs():
        a = {"source_target_pairs": dense_i64_matrix(pairs, 2)}
        if channel is not None:
            a["channel_handle"] = channel_handle_attr(channel)
        return a

    return single_op(
        "CollectivePermute",
        "stablehlo.collective_permute",
        shape.without_layout(),
        [operand],
        attrs,
    )


def CollectiveBroadcast(operand, replica_groups, channel_id=None) -> XlaOp:
    """Each group's first id sends its operand to the group; ids in no group get zeros."""
    shape = array("CollectiveBroadcast", operand)
    groups, channel = _groups("CollectiveBroadcast", replica_groups), channel_number(channel_id)
    return single_op(
        "CollectiveBroadcast",
        "stablehlo.collective_broadcast",
        shape.without_layout(),
        [operand],
        lambda: _common_attrs(groups, channel),
    )


def RaggedAllToAll(
    input,
    input_offsets,
    send_sizes,
    output,
    output_offsets,
    recv_sizes,
    replica_groups=(),
    channel_id=None,
) -> XlaOp:
    """All-to-all of ragged rows: rows ``input[input_offsets[j] : +send_sizes[j]]`` go
    to peer j, written at ``output_offsets[j]`` (receiver coordinates) of its ``output``.
    Emitted as ``stablehlo.custom_call @ragged_all_to_all`` (SEMANTICS 1/5.4)."""
    ins = array("RaggedAllToAll", input, "input")
    outs = array("RaggedAllToAll", output, "output")
    if ins.element_type() != outs.element_type() or ins.rank() != outs.rank() or ins.rank() == 0:
        raise ValueError(
            f"RaggedAllToAll: input {ins} and output {outs} need one element type and rank >= 1"
        )
    if ins.dimensions()[1:] != outs.dimensions()[1:]:
        raise ValueError(
            f"RaggedAllToAll: input {ins} and output {outs} must agree outside the ragged (first) dimension"
        )
    meta = [input_offsets, send_sizes, output_offsets, recv_sizes]
    names = ["input_offsets", "send_sizes", "output_offsets", "recv_sizes"]
    mshapes = [array("RaggedAllToAll", m, n) for m, n in zip(meta, names)]
    for n, s in zip(names, mshapes):
        if not shp.is_integer(s.element_type()) or not s.equal_ignoring_layout(mshapes[0]):
            raise ValueError(
                f"RaggedAllToAll: offsets and sizes must be integer arrays of one shape, got {n} {s} and {mshapes[0]}"
            )
    groups, channel = _groups("RaggedAllToAll", replica_groups), channel_number(channel_id)
    out = outs.without_layout()

    def attrs():
        config = {"replica_groups": _groups_attr(groups)}
        if channel is not None:
            config["channel_id"] = i64_attr(channel)
        return {
            "call_target_name": ir.StringAttr.get("ragged_all_to_all"),
            "api_version": i32_attr(4),
            "backend_config": ir.DictAttr.get(config),
        }

    operands = [input, output, input_offsets, send_sizes, output_offsets, recv_sizes]
    return single_op("RaggedAllToAll", "stablehlo.custom_call", out, operands, attrs)

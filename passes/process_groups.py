"""Which devices a collective connects: StableHLO's process-group modes, resolved.

A program runs on ``num_replicas x num_partitions`` devices; device
``replica * num_partitions + partition`` is the *global id* the runtime uses.
A collective's ``replica_groups``, ``channel_handle`` and
``use_global_device_ids`` select one of four modes (StableHLO spec, "Parallel
execution"), and each mode turns the groups into lists of global ids. Doing it
at compile time leaves the runtime nothing to interpret: it receives the final
device groups, in the order that fixes concatenation and routing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

CROSS_REPLICA = "cross_replica"
CROSS_PARTITION = "cross_partition"
CROSS_REPLICA_AND_PARTITION = "cross_replica_and_partition"
FLATTENED_IDS = "flattened_ids"


@dataclasses.dataclass(frozen=True)
class DeviceGrid:
    replicas: int
    partitions: int

    @property
    def num_devices(self) -> int:
        return self.replicas * self.partitions

    def device(self, replica: int, partition: int) -> int:
        return replica * self.partitions + partition

    def id_range(self, mode: str) -> int:
        """How many ids the groups of ``mode`` name (replicas, partitions or devices)."""
        return {
            CROSS_REPLICA: self.replicas,
            CROSS_REPLICA_AND_PARTITION: self.replicas,
            CROSS_PARTITION: self.partitions,
            FLATTENED_IDS: self.num_devices,
        }[mode]


def reduction_mode(channel_id: int, use_global_device_ids: bool) -> str:
    """The mode of all_gather / all_reduce / reduce_scatter."""
    if use_global_device_ids:
        return FLATTENED_IDS
    return CROSS_REPLICA_AND_PARTITION if channel_id > 0 else CROSS_REPLICA


def channel_mode(channel_id: int) -> str:
    """The mode of all_to_all, collective_permute, collective_broadcast, ragged all-to-all."""
    return CROSS_PARTITION if channel_id > 0 else CROSS_REPLICA


def process_groups(
    grid: DeviceGrid, mode: str, groups: Sequence[Sequence[int]]
) -> list[tuple[int, ...]]:
    """Global-id groups of ``mode``; empty ``groups`` means one group of every id."""
    groups = [list(g) for g in groups] or [list(range(grid.id_range(mode)))]
    R, P = range(grid.replicas), range(grid.partitions)
    if mode == CROSS_REPLICA:
        return [tuple(grid.device(r, p) for r in g) for g in groups for p in P]
    if mode == CROSS_PARTITION:
        return [tuple(grid.device(r, p) for p in g) for g in groups for r in R]
    if mode == CROSS_REPLICA_AND_PARTITION:
        return [tuple(grid.device(r, p) for p in P for r in g) for g in groups]
    if mode == FLATTENED_IDS:
        return [tuple(g) for g in groups]
    raise ValueError(f"unknown process group mode '{mode}'")


def check_ids(
    grid: DeviceGrid, mode: str, groups: Sequence[Sequence[int]], *, cover: bool
) -> str | None:
    """Why ``groups`` (as written in the op) are invalid for ``mode``, or None."""
    limit = grid.id_range(mode)
    seen: list[int] = [i for g in groups for i in g]
    for i in seen:
        if not 0 <= i < limit:
            what = (
                "partition"
                if mode == CROSS_PARTITION
                else "device"
                if mode == FLATTENED_IDS
                else "replica"
            )
            return f"{what} id {i} is out of range: the program has {limit} {what}s ({mode})"
    if len(set(seen)) != len(seen):
        return f"an id appears twice in replica_groups {[list(g) for g in groups]}"
    if cover and groups and len(seen) != limit:
        return f"replica_groups {[list(g) for g in groups]} do not cover all {limit} ids ({mode})"
    return None


def group_size(groups: Sequence[Sequence[int]]) -> int | None:
    """The common size of ``groups`` (None when sizes differ)."""
    sizes = {len(g) for g in groups}
    return sizes.pop() if len(sizes) == 1 else None

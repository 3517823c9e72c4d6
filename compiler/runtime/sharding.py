"""Global arrays in, global arrays out, for programs exported from a JAX ``shard_map``.

``xhlo-localize-shard-map`` compiles such a program as the program of one
device and records how each argument and result is split over the device
mesh (module attribute ``xhlo.shard_map``). ``ShardLayout`` cuts global
arguments into the shards of every device and reassembles the per-device
results, so ``run_sharded(exe, *global_args)`` behaves like calling the JAX
function.

Device ``d`` sits at the row-major position ``d`` of the mesh. A dimension
split over axes ``(a, b)`` is cut into ``size(a) * size(b)`` blocks, and the
device at coordinates ``(i_a, i_b)`` holds block ``i_a * size(b) + i_b``.
Dimensions split over no axis are whole on every device.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from .._mlir import ir

SHARD_MAP_ATTR = "xhlo.shard_map"

DimAxes = list[list[str]]  # per dimension, the mesh axes it is split over


@dataclasses.dataclass(frozen=True)
class ShardLayout:
    mesh: tuple[tuple[str, int], ...]
    arguments: tuple[DimAxes, ...]
    results: tuple[DimAxes, ...]

    @property
    def num_devices(self) -> int:
        return math.prod(size for _, size in self.mesh)

    def coordinates(self, device: int) -> dict[str, int]:
        sizes = [size for _, size in self.mesh]
        return dict(zip((name for name, _ in self.mesh), np.unravel_index(device, sizes) if sizes else ()))

    def _blocks(self, axes: Sequence[str], device: int) -> tuple[int, int]:
        """(number of blocks, this device's block) of a dimension split over ``axes``."""
        sizes = dict(self.mesh)
        coords = self.coordinates(device)
        count, index = 1, 0
        for axis in axes:
            count *= sizes[axis]
            index = index * sizes[axis] + int(coords[axis])
        return count, index

    def shard(self, array: np.ndarray, dims: DimAxes, device: int) -> np.ndarray:
        """Device ``device``'s shard of a global array."""
        index = []
        for size, axes in zip(array.shape, list(dims) + [[]] * (array.ndim - len(dims))):
            count, block = self._blocks(axes, device)
            if size % count:
                raise ValueError(f"dimension of size {size} does not split into {count} shards")
            step = size // count
            index.append(slice(block * step, (block + 1) * step))
        return np.ascontiguousarray(array[tuple(index)])

    def split(self, global_args: Sequence) -> list[tuple[np.ndarray, ...]]:
        """Per device, the shards of every argument."""
        if len(global_args) != len(self.arguments):
            raise ValueError(f"the program takes {len(self.arguments)} arguments, got {len(global_args)}")
        arrays = [np.asarray(a) for a in global_args]
        return [
            tuple(self.shard(a, dims, d) for a, dims in zip(arrays, self.arguments))
            for d in range(self.num_devices)
        ]

    def assemble(self, per_device: Sequence[Sequence[np.ndarray]]) -> tuple[np.ndarray, ...]:
        """The global results from every device's local results."""
        out = []
        for j, dims in enumerate(self.results):
            local = per_device[0][j]
            dims = list(dims) + [[]] * (local.ndim - len(dims))
            counts = [self._blocks(axes, 0)[0] for axes in dims]
            result = np.empty([n * c for n, c in zip(local.shape, counts)], local.dtype)
            for d, results in enumerate(per_device):
                index = []
                for size, axes in zip(local.shape, dims):
                    _, block = self._blocks(axes, d)
                    index.append(slice(block * size, (block + 1) * size))
                result[tuple(index)] = results[j]
            out.append(result)
        return tuple(out)


def _axes_lists(attr: ir.Attribute) -> tuple[DimAxes, ...]:
    return tuple(
        [[ir.StringAttr(a).value for a in ir.ArrayAttr(dim)] for dim in ir.ArrayAttr(value)]
        for value in ir.ArrayAttr(attr)
    )


def layout_from_module(module: ir.Module) -> ShardLayout | None:
    attrs = module.operation.attributes
    if SHARD_MAP_ATTR not in attrs:
        return None
    d = ir.DictAttr(attrs[SHARD_MAP_ATTR])
    mesh = tuple(
        (ir.StringAttr(ir.ArrayAttr(axis)[0]).value, ir.IntegerAttr(ir.ArrayAttr(axis)[1]).value)
        for axis in ir.ArrayAttr(d["mesh"])
    )
    return ShardLayout(mesh, _axes_lists(d["arguments"]), _axes_lists(d["results"]))


def run_sharded(exe, *global_args, timeout: float | None = None) -> tuple[np.ndarray, ...]:
    """Run a localized ``shard_map`` program on global arrays, one thread per device."""
    layout = getattr(getattr(exe, "_runtime", None), "layout", None)
    if layout is None:
        raise ValueError("the program was not compiled from a shard_map over every device")
    results = exe.run_replicated(layout.split(global_args), timeout=timeout)
    return layout.assemble(results)

"""Global arrays in, global arrays out, for programs exported from a JAX ``shard_map``.

``xhlo-localize-shard-map`` compiles such a program as the program of one
device and records how each argument and result is cut over the devices
(module attribute ``xhlo.shard_map``: per value, blocks per dimension and the
block each device holds). ``ShardLayout`` cuts global arguments into every
device's shards and reassembles the per-device results, so
``run_sharded(exe, *global_args)`` behaves like calling the JAX function.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .._mlir import ir

SHARD_MAP_ATTR = "xhlo.shard_map"


@dataclasses.dataclass(frozen=True)
class Tiling:
    counts: tuple[int, ...]  # blocks per dimension
    blocks: np.ndarray  # [num_devices, rank]: the block each device holds

    def window(self, local_shape: Sequence[int], device: int) -> tuple[slice, ...]:
        """Where device ``device``'s shard sits in the global array."""
        return tuple(slice(b * n, (b + 1) * n) for b, n in zip(self.blocks[device], local_shape))


@dataclasses.dataclass(frozen=True)
class ShardLayout:
    arguments: tuple[Tiling, ...]
    results: tuple[Tiling, ...]

    @property
    def num_devices(self) -> int:
        values = self.arguments + self.results
        return values[0].blocks.shape[0] if values else 1

    def split(self, signature, global_args: Sequence) -> list[tuple[np.ndarray, ...]]:
        """Per device, its shards of every argument; each global array must have the shape
        its shards make and the program's dtype (one ValueError in global terms, not the
        same error once per device)."""
        if len(global_args) != len(self.arguments):
            raise ValueError(
                f"the program takes {len(self.arguments)} arguments, got {len(global_args)}"
            )
        per_device: list[list[np.ndarray]] = [[] for _ in range(self.num_devices)]
        for i, (arg, spec, tiling) in enumerate(zip(global_args, signature.inputs, self.arguments)):
            array = _global_array(signature.name, i, arg, spec, tiling, self.num_devices)
            for d in range(self.num_devices):  # a copy of each shard (0-d ones stay 0-d)
                per_device[d].append(np.array(array[tiling.window(spec.shape, d)], order="C"))
        return [tuple(args) for args in per_device]

    def assemble(self, per_device: Sequence[Sequence[np.ndarray]]) -> tuple[np.ndarray, ...]:
        """The global results; of blocks several devices hold, the lowest device's is taken."""
        out = []
        for j, tiling in enumerate(self.results):
            local = per_device[0][j]
            result = np.empty([n * c for n, c in zip(local.shape, tiling.counts)], local.dtype)
            for d in reversed(range(len(per_device))):
                result[tiling.window(local.shape, d)] = per_device[d][j]
            out.append(result)
        return tuple(out)


def _tiling(attr: ir.Attribute) -> Tiling:
    d = ir.DictAttr(attr)
    counts = tuple(ir.DenseI64ArrayAttr(d["counts"]))
    dense = ir.DenseIntElementsAttr(d["blocks"])
    shape = ir.RankedTensorType(dense.type).shape
    blocks = np.full(shape, dense[0]) if dense.is_splat else np.array(dense).reshape(shape)
    return Tiling(counts, blocks[:, : len(counts)].astype(np.int64))


def layout_from_module(module: ir.Module) -> ShardLayout | None:
    attrs = module.operation.attributes
    if SHARD_MAP_ATTR not in attrs:
        return None
    d = ir.DictAttr(attrs[SHARD_MAP_ATTR])
    return ShardLayout(
        tuple(_tiling(a) for a in ir.ArrayAttr(d["arguments"])),
        tuple(_tiling(a) for a in ir.ArrayAttr(d["results"])),
    )


def run_sharded(exe, *global_args, timeout: float | None = None) -> tuple[np.ndarray, ...]:
    """Run a localized ``shard_map`` program on global arrays, one thread per device."""
    layout = getattr(getattr(exe, "_runtime", None), "layout", None)
    if layout is None:
        raise ValueError("the program was not compiled from a shard_map over every device")
    results = exe.run_replicated(layout.split(exe.signature, global_args), timeout=timeout)
    return layout.assemble(results)


def _global_array(function: str, i: int, arg, spec, tiling: Tiling, devices: int) -> np.ndarray:
    """Argument ``i`` as a global array of ``spec``'s dtype and the shape its shards make."""
    if isinstance(arg, (bool, int, float, complex)):  # as a single device's call converts them
        from ..executable import scalar_argument

        array = scalar_argument(arg, spec.dtype, f"argument {i} of {function}")
    else:
        array = np.asarray(arg)
    want = tuple(n * c for n, c in zip(spec.shape, tiling.counts))
    if array.shape != want:
        raise ValueError(f"argument {i} of {function}: expected global shape {want} (shards of "
                         f"{spec.shape} on {devices} devices), got {array.shape}")
    if array.dtype != spec.dtype:
        raise ValueError(f"argument {i} of {function}: expected dtype {spec.dtype}, got {array.dtype}")
    return array

"""xhlo-lower-scatter: stablehlo.scatter -> a stablehlo.while over the update windows.

The upstream ``stablehlo-legalize-to-linalg`` in the pinned wheel has no scatter
pattern. This StableHLO -> StableHLO rewrite turns every scatter into ops the
rest of the pipeline lowers: the index vectors and update windows laid out as
rows once (reshapes and transposes of whole tensors), then one loop iteration
per scatter index vector that converts its index to i64, tests that its window
fits, reads the operand window (dynamic_slice), combines it with the update
window through the scatter's region and writes it back (dynamic_update_slice,
in place after bufferization), so an iteration costs the window, not the
operand, and no i64 copy or mask of all the indices is written and read back.
Updates that broadcast one scalar (a histogram's ones) are one window made
before the loop. Windows are applied one after another in row-major order of
the update scatter dims, so duplicate indices give a deterministic result.

Out-of-bounds windows follow XLA (whose results JAX records): a window whose
full start index does not fit the operand (``start < 0`` or ``start + size >
dim`` on any operand dim) is skipped as a whole, by a stablehlo.if around the
read-combine-write (the StableHLO spec would drop single elements instead).
A scatter into an operand without elements (every window out of bounds) or of
updates without elements is its operands.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from xhlo._mlir import ir, stablehlo_api
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, defining_op, walk_ops
from .fold_empty_tensors import has_no_elements


@dataclasses.dataclass(frozen=True)
class _Geometry:
    """Static facts of one scatter, computed from its types and dimension numbers."""

    operand_shape: tuple[int, ...]
    indices_shape: tuple[int, ...]  # with the implicit trailing 1 made explicit
    update_shape: tuple[int, ...]
    index_vector_dim: int
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    input_batching_dims: tuple[int, ...]
    scatter_indices_batching_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]

    @property
    def index_scatter_dims(self) -> list[int]:
        """Dims of the indices that enumerate index vectors (all but index_vector_dim)."""
        return [d for d in range(len(self.indices_shape)) if d != self.index_vector_dim]

    @property
    def update_scatter_dims(self) -> list[int]:
        return [d for d in range(len(self.update_shape)) if d not in self.update_window_dims]

    @property
    def num_windows(self) -> int:
        return math.prod(self.indices_shape[d] for d in self.index_scatter_dims)

    @property
    def window_operand_dims(self) -> list[int]:
        """Operand dims covered by update_window_dims, in increasing order."""
        skipped = set(self.inserted_window_dims) | set(self.input_batching_dims)
        return [d for d in range(len(self.operand_shape)) if d not in skipped]

    @property
    def window_shape(self) -> list[int]:
        """The update window as a slice of the operand (size 1 at inserted/batching dims)."""
        shape = [1] * len(self.operand_shape)
        for update_dim, operand_dim in zip(self.update_window_dims, self.window_operand_dims):
            shape[operand_dim] = self.update_shape[update_dim]
        return shape


def _geometry(op: ir.Operation) -> _Geometry:
    n = len(op.results)
    types = [op.operands[i].type for i in (0, n, n + 1)]
    for t in types:
        if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
            raise PassError(op, "only statically shaped scatter is supported")
    numbers = stablehlo_api.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    indices_shape = tuple(ir.RankedTensorType(types[1]).shape)
    if numbers.index_vector_dim == len(indices_shape):
        indices_shape += (1,)
    return _Geometry(
        operand_shape=tuple(ir.RankedTensorType(types[0]).shape),
        indices_shape=indices_shape,
        update_shape=tuple(ir.RankedTensorType(types[2]).shape),
        index_vector_dim=numbers.index_vector_dim,
        update_window_dims=tuple(numbers.update_window_dims),
        inserted_window_dims=tuple(numbers.inserted_window_dims),
        input_batching_dims=tuple(numbers.input_batching_dims),
        scatter_indices_batching_dims=tuple(numbers.scatter_indices_batching_dims),
        scatter_dims_to_operand_dims=tuple(numbers.scattered_dims_to_operand_dims),
    )


# -- whole-tensor preparation (once, before the loop) -----------------------------


def _transpose_if_needed(x: ir.Value, permutation: Sequence[int]) -> ir.Value:
    if list(permutation) == list(range(len(permutation))):
        return x
    return sh.transpose(x, permutation)


def _reshape_if_needed(x: ir.Value, shape: Sequence[int]) -> ir.Value:
    return x if sh.shape_of(x) == tuple(shape) else sh.reshape(x, shape)


def _index_matrix(indices: ir.Value, geo: _Geometry) -> ir.Value:
    """The index vectors as rows of a [num_windows, K] matrix, in the indices' own
    type: each iteration converts the one it reads (no i64 copy of them all)."""
    indices = _reshape_if_needed(indices, geo.indices_shape)
    indices = _transpose_if_needed(indices, [*geo.index_scatter_dims, geo.index_vector_dim])
    rows = [geo.num_windows, geo.indices_shape[geo.index_vector_dim]]
    return _reshape_if_needed(indices, rows)


def _start_vectors(indices: ir.Value, geo: _Geometry) -> list[ir.Value | None]:
    """Per operand dim, the [num_windows] window starts (None: always 0)."""
    matrix = _index_matrix(indices, geo)
    starts: list[ir.Value | None] = [None] * len(geo.operand_shape)
    columns = len(geo.scatter_dims_to_operand_dims)
    for column, operand_dim in enumerate(geo.scatter_dims_to_operand_dims):
        piece = matrix
        if columns > 1:
            piece = sh.slice(matrix, [0, column], [geo.num_windows, column + 1])
        starts[operand_dim] = sh.reshape(piece, [geo.num_windows])
    scatter_shape = [geo.indices_shape[d] for d in geo.index_scatter_dims]
    batching = zip(geo.input_batching_dims, geo.scatter_indices_batching_dims)
    for operand_dim, indices_dim in batching:
        position = geo.index_scatter_dims.index(indices_dim)
        coordinate = sh.iota(scatter_shape, position, sh.i64())
        starts[operand_dim] = sh.reshape(coordinate, [geo.num_windows])
    return starts


def _window_fits(start_k: list[ir.Value], windows: _Windows) -> ir.Value | None:
    """i1: window k lies inside the operand, from its i64 starts (None: always)."""
    fits = None
    geo = windows.geo
    window = geo.window_shape
    for dim, start in enumerate(start_k):
        if windows.starts[dim] is None or dim in geo.input_batching_dims:
            continue  # batching coordinates are in range by construction
        last = sh.constant(geo.operand_shape[dim] - window[dim], start.type)
        low = sh.compare("GE", start, sh.constant(0, start.type), "SIGNED")
        both = sh.and_(low, sh.compare("LE", start, last, "SIGNED"))
        fits = both if fits is None else sh.and_(fits, both)
    return fits


def _update_rows(update: ir.Value, geo: _Geometry, elem: ir.Type) -> _Updates:
    """Updates as [num_windows, window dims...] rows (row k is the k-th update
    window), in the region's element type; a broadcast scalar is one window for all."""
    broadcast = defining_op(update, "stablehlo.broadcast_in_dim")
    if broadcast is not None and not sh.shape_of(broadcast.operands[0]):
        scalar = _convert_if_needed(broadcast.operands[0], elem)
        return _Updates(None, sh.broadcast_in_dim(scalar, geo.window_shape, []))
    update = _transpose_if_needed(update, [*geo.update_scatter_dims, *geo.update_window_dims])
    window = [geo.update_shape[d] for d in geo.update_window_dims]
    return _Updates(_convert_if_needed(_reshape_if_needed(update, [geo.num_windows, *window]), elem), None)


@dataclasses.dataclass(frozen=True)
class _Updates:
    """One update operand: rows to read window k from, or one window for all
    (a broadcast scalar, made once before the loop: inside it, a buffer per step)."""

    rows: ir.Value | None
    window: ir.Value | None


@dataclasses.dataclass(frozen=True)
class _Windows:
    """Loop-invariant values: what every iteration reads its window from."""

    geo: _Geometry
    region: ir.Region
    starts: list[ir.Value | None]  # per operand dim, [num_windows] (None: always 0)
    updates: list[_Updates]


# -- one window (the loop body) ------------------------------------------------------


def _element_at(vector: ir.Value, k: ir.Value) -> ir.Value:
    return sh.reshape(sh.dynamic_slice(vector, [k], [1]), [])


def _update_window(updates: _Updates, k: ir.Value, window: list[int]) -> ir.Value:
    if updates.window is not None:
        return updates.window
    row_shape = sh.shape_of(updates.rows)
    row_start = [k] + [sh.constant(0, sh.i64())] * (len(row_shape) - 1)
    return _reshape_if_needed(sh.dynamic_slice(updates.rows, row_start, [1, *row_shape[1:]]), window)


def _apply_window(
    k: ir.Value, outputs: list[ir.Value], start_k: list[ir.Value], windows: _Windows
) -> list[ir.Value]:
    """Outputs with window ``k`` combined in (its start must fit)."""
    window = windows.geo.window_shape
    updates = [_update_window(u, k, window) for u in windows.updates]
    current = [sh.dynamic_slice(out, start_k, window) for out in outputs]
    combined = sh.apply_region_elementwise(windows.region, current, updates)
    return [sh.dynamic_update_slice(out, new, start_k) for out, new in zip(outputs, combined)]


def _scatter_window(k: ir.Value, outputs: list[ir.Value], windows: _Windows) -> list[ir.Value]:
    """Outputs after applying window ``k`` (unchanged if it does not fit).

    Unsigned indices are zero-extended to i64 (ui64 values past the i64 range
    wrap negative), so large unsigned indices stay out of bounds.
    """
    zero = sh.constant(0, sh.i64())
    start_k = [zero if s is None else _convert_if_needed(_element_at(s, k), sh.i64()) for s in windows.starts]
    fits_k = _window_fits(start_k, windows)
    if fits_k is None:
        return _apply_window(k, outputs, start_k, windows)
    branch = sh.create("stablehlo.if", [fits_k], [o.type for o in outputs], regions=2)
    sh.build_region(branch.regions[0], [], lambda: _apply_window(k, outputs, start_k, windows))
    sh.build_region(branch.regions[1], [], lambda: outputs)
    return list(branch.results)


# -- the rewrite ------------------------------------------------------------------------


def _convert_if_needed(x: ir.Value, elem: ir.Type) -> ir.Value:
    return x if sh.element_type(x) == elem else sh.convert(x, elem)


def _lower_scatter(op: ir.Operation) -> list[ir.Value]:
    """The values replacing ``op``'s results, built before ``op``."""
    n = len(op.results)
    geo = _geometry(op)
    region = op.regions[0]
    # The region may compute in promoted element types (the results' types).
    elems = [ir.RankedTensorType(a.type).element_type for a in region.blocks[0].arguments]
    operands = [_convert_if_needed(x, e) for x, e in zip(op.operands[:n], elems[:n])]
    if geo.num_windows == 0 or math.prod(geo.window_shape) == 0:
        return operands
    starts = _start_vectors(op.operands[n], geo)
    updates = [_update_rows(u, geo, e) for u, e in zip(op.operands[n + 1 :], elems[n:])]
    windows = _Windows(geo, region, starts, updates)
    if geo.num_windows == 1:
        return _scatter_window(sh.constant(0, sh.i64()), operands, windows)

    def cond(k, *outputs):
        return sh.compare("LT", k, sh.constant(geo.num_windows, sh.i64()), "SIGNED")

    def body(k, *outputs):
        return [sh.add(k, sh.constant(1, sh.i64())), *_scatter_window(k, list(outputs), windows)]

    return sh.while_loop([sh.constant(0, sh.i64()), *operands], cond, body)[1:]


@dataclasses.dataclass(frozen=True)
class LowerScatter(ModulePass):
    """Lower stablehlo.scatter to a stablehlo.while over its update windows."""

    NAME = "xhlo-lower-scatter"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.scatter"):
            count = len(op.results)
            inputs, updates = list(op.operands)[:count], list(op.operands)[count + 1:]
            if has_no_elements(inputs[0]) or has_no_elements(updates[0]):
                results = inputs  # nothing to update, or every window out of bounds
            else:
                with ir.InsertionPoint(op), op.location:
                    results = _lower_scatter(op)
            for old, new in zip(op.results, results):
                old.replace_all_uses_with(new)
            op.erase()

"""Gather and Scatter (seed 003 semantics, with StableHLO's batching dimensions).

Part of ``xb.ops`` (re-exported there). Dimension numbers are the classes
below, dicts, or keyword arguments of the op.
"""

from __future__ import annotations

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from . import shape as shp
from ._support import (
    accepts_builder,
    array,
    as_list,
    bool_attr,
    check_dimensions,
    dims_list,
    scalar_shape,
    single_op,
    structured,
)
from .builder import XlaOp, as_computation
from .computations import _check_root, _collate
from .shape import Shape

__all__ = [
    "Gather",
    "GatherDimensionNumbers",
    "Scatter",
    "ScatterDimensionNumbers",
]


# -- gather / scatter --------------------------------------------------------------


class GatherDimensionNumbers:
    def __init__(
        self,
        offset_dims=(),
        collapsed_slice_dims=(),
        start_index_map=(),
        index_vector_dim=None,
        operand_batching_dims=(),
        start_indices_batching_dims=(),
    ):
        self.offset_dims = list(offset_dims)
        self.collapsed_slice_dims = list(collapsed_slice_dims)
        self.start_index_map = list(start_index_map)
        self.index_vector_dim = index_vector_dim
        self.operand_batching_dims = list(operand_batching_dims)
        self.start_indices_batching_dims = list(start_indices_batching_dims)


class ScatterDimensionNumbers:
    def __init__(
        self,
        update_window_dims=(),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=(),
        index_vector_dim=None,
        input_batching_dims=(),
        scatter_indices_batching_dims=(),
    ):
        self.update_window_dims = list(update_window_dims)
        self.inserted_window_dims = list(inserted_window_dims)
        self.scatter_dims_to_operand_dims = list(scatter_dims_to_operand_dims)
        self.index_vector_dim = index_vector_dim
        self.input_batching_dims = list(input_batching_dims)
        self.scatter_indices_batching_dims = list(scatter_indices_batching_dims)


def _sorted(op_name: str, dims: list[int], what: str) -> list[int]:
    if dims != sorted(dims):
        raise ValueError(f"{op_name}: {what} {dims} must be sorted")
    return dims


def _disjoint(op_name: str, a: list[int], what_a: str, b: list[int], what_b: str) -> None:
    common = sorted(set(a) & set(b))
    if common:
        raise ValueError(f"{op_name}: {what_a} {a} and {what_b} {b} share dimension(s) {common}")


def _index_batching_dims(op_name: str, dims, operand_dims: list[int], operand, idims: list[int], ivd: int,
                         indices, what: str) -> list[int]:
    """The index batching dimensions: one per operand batching dimension, of its size, in
    range and not the index vector dimension."""
    dims = check_dimensions(op_name, dims, len(idims), what)
    if len(dims) != len(operand_dims):
        raise ValueError(f"{op_name}: {what} {dims} needs one entry per operand batching dimension {operand_dims}")
    for d, od in zip(dims, operand_dims):
        if d == ivd:
            raise ValueError(f"{op_name}: {what} {dims} include the index_vector_dim {ivd}")
        if idims[d] != operand.dimensions()[od]:
            raise ValueError(f"{op_name}: batching dimension {d} of {indices} ({idims[d]}) and {od} of "
                             f"{operand} ({operand.dimensions()[od]}) differ")
    return dims


def _numbers(cls, value, kwargs):
    if value is None:
        return cls(**kwargs)
    if isinstance(value, dict):
        return cls(**value)
    return value


def Gather(
    operand,
    start_indices,
    dimension_numbers=None,
    slice_sizes=None,
    indices_are_sorted: bool = False,
    **kwargs,
) -> XlaOp:
    """Gather ``slice_sizes`` slices at ``start_indices`` (seed 003 semantics;
    start indices are clamped so slices fit)."""
    shape = array("Gather", operand)
    ishape = array("Gather", start_indices, "start_indices")
    if not shp.is_integer(ishape.element_type()):
        raise TypeError(f"Gather: start_indices must be integers, got {ishape}")
    dn = _numbers(GatherDimensionNumbers, dimension_numbers, kwargs)
    ivd = ishape.rank() - 1 if dn.index_vector_dim is None else int(dn.index_vector_dim)
    sizes = dims_list("Gather", slice_sizes, "slice_sizes")
    rank = shape.rank()
    collapsed = _sorted("Gather", check_dimensions(
        "Gather", dn.collapsed_slice_dims, rank, "collapsed slice dimension"
    ), "collapsed_slice_dims")
    obatch = _sorted("Gather", check_dimensions(
        "Gather", dn.operand_batching_dims, rank, "operand batching dimension"
    ), "operand_batching_dims")
    _disjoint("Gather", collapsed, "collapsed_slice_dims", obatch, "operand_batching_dims")
    smap = check_dimensions("Gather", dn.start_index_map, rank, "start_index_map entry")
    _disjoint("Gather", smap, "start_index_map", obatch, "operand_batching_dims")
    if len(sizes) != rank:
        raise ValueError(f"Gather: slice_sizes {sizes} needs {rank} entries for {shape}")
    for d, (s, n) in enumerate(zip(sizes, shape.dimensions())):
        if not 0 <= s <= n:
            raise ValueError(f"Gather: slice size {s} of dimension {d} does not fit {shape}")
    for d in collapsed + obatch:
        if sizes[d] > 1:
            raise ValueError(
                f"Gather: collapsed/batching dimension {d} must have slice size <= 1, got {sizes[d]}"
            )
    if not 0 <= ivd <= ishape.rank():
        raise ValueError(f"Gather: index_vector_dim {ivd} is out of range for {ishape}")
    idims = list(ishape.dimensions()) + ([1] if ivd == ishape.rank() else [])
    if idims[ivd] != len(smap):
        raise ValueError(
            f"Gather: start_index_map {smap} must have {idims[ivd]} entries (index vector size of {ishape})"
        )
    sbatch = _index_batching_dims("Gather", dn.start_indices_batching_dims, obatch, shape, idims, ivd, ishape,
                                  "start_indices_batching_dims")
    batch_sizes = [n for d, n in enumerate(idims) if d != ivd]
    offset_sizes = [n for d, n in enumerate(sizes) if d not in collapsed and d not in obatch]
    offset_dims = _sorted("Gather", dims_list("Gather", dn.offset_dims, "offset_dims"), "offset_dims")
    if len(offset_dims) != len(offset_sizes):
        raise ValueError(
            f"Gather: {len(offset_dims)} offset_dims for {len(offset_sizes)} offset (uncollapsed) dimensions"
        )
    out_rank = len(batch_sizes) + len(offset_sizes)
    check_dimensions("Gather", offset_dims, out_rank, "offset dimension")
    out_dims, b, o = [], iter(batch_sizes), iter(offset_sizes)
    for d in range(out_rank):
        out_dims.append(next(o) if d in offset_dims else next(b))
    out = Shape(shape.element_type(), out_dims)

    def attrs():
        text = (
            f"#stablehlo.gather<offset_dims = {_t(offset_dims)}, collapsed_slice_dims = {_t(collapsed)}, "
            f"operand_batching_dims = {_t(obatch)}, start_indices_batching_dims = {_t(sbatch)}, "
            f"start_index_map = {_t(smap)}, index_vector_dim = {ivd}>"
        )
        return {
            "dimension_numbers": ir.Attribute.parse(text),
            "slice_sizes": sh.dense_i64(sizes),
            "indices_are_sorted": bool_attr(indices_are_sorted),
        }

    return single_op("Gather", "stablehlo.gather", out, [operand, start_indices], attrs)


def _t(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


@accepts_builder
def Scatter(
    operands,
    scatter_indices,
    updates,
    update_computation,
    dimension_numbers=None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    **kwargs,
) -> XlaOp:
    """Combine ``updates`` into ``operands`` at ``scatter_indices`` with
    ``update_computation(current..., update...)``; out-of-bounds updates are skipped."""
    operands, updates = as_list(operands), as_list(updates)
    if not operands or len(operands) != len(updates):
        raise ValueError(
            f"Scatter: needs N >= 1 operands and as many updates, got {len(operands)} and {len(updates)}"
        )
    shapes = [array("Scatter", x, f"operand {i}") for i, x in enumerate(operands)]
    ushapes = [array("Scatter", u, f"updates {i}") for i, u in enumerate(updates)]
    ishape = array("Scatter", scatter_indices, "scatter_indices")
    if not shp.is_integer(ishape.element_type()):
        raise TypeError(f"Scatter: scatter_indices must be integers, got {ishape}")
    for s, u in zip(shapes, ushapes):
        if (
            s.dimensions() != shapes[0].dimensions()
            or u.dimensions() != ushapes[0].dimensions()
            or s.element_type() != u.element_type()
        ):
            raise ValueError(
                f"Scatter: operands {', '.join(map(str, shapes))} and updates {', '.join(map(str, ushapes))} do not match"
            )
    dn = _numbers(ScatterDimensionNumbers, dimension_numbers, kwargs)
    rank, urank = shapes[0].rank(), ushapes[0].rank()
    ivd = ishape.rank() - 1 if dn.index_vector_dim is None else int(dn.index_vector_dim)
    uwd = _sorted("Scatter", check_dimensions(
        "Scatter", dn.update_window_dims, urank, "update window dimension"), "update_window_dims")
    iwd = _sorted("Scatter", check_dimensions(
        "Scatter", dn.inserted_window_dims, rank, "inserted window dimension"), "inserted_window_dims")
    ibatch = _sorted("Scatter", check_dimensions(
        "Scatter", dn.input_batching_dims, rank, "input batching dimension"), "input_batching_dims")
    _disjoint("Scatter", iwd, "inserted_window_dims", ibatch, "input_batching_dims")
    sdod = check_dimensions(
        "Scatter", dn.scatter_dims_to_operand_dims, rank, "scatter_dims_to_operand_dims entry"
    )
    _disjoint("Scatter", sdod, "scatter_dims_to_operand_dims", ibatch, "input_batching_dims")
    if len(uwd) + len(iwd) + len(ibatch) != rank:
        raise ValueError(
            f"Scatter: rank of {shapes[0]} must equal |update_window_dims| + |inserted_window_dims| "
            f"(+ batching), got {len(uwd)} + {len(iwd)} + {len(ibatch)}"
        )
    if not 0 <= ivd <= ishape.rank():
        raise ValueError(f"Scatter: index_vector_dim {ivd} is out of range for {ishape}")
    idims = list(ishape.dimensions()) + ([1] if ivd == ishape.rank() else [])
    sbatch = _index_batching_dims("Scatter", dn.scatter_indices_batching_dims, ibatch, shapes[0], idims, ivd,
                                  ishape, "scatter_indices_batching_dims")
    if len(sdod) != idims[ivd]:
        raise ValueError(f"Scatter: scatter_dims_to_operand_dims {sdod} needs {idims[ivd]} entries")
    scatter_sizes = [n for d, n in enumerate(idims) if d != ivd]
    if urank != len(uwd) + len(scatter_sizes):
        raise ValueError(
            f"Scatter: updates {ushapes[0]} must have rank {len(uwd) + len(scatter_sizes)}"
        )
    window_bounds = [
        n for d, n in enumerate(shapes[0].dimensions()) if d not in iwd and d not in ibatch
    ]
    scatter_dims = [d for d in range(urank) if d not in uwd]
    for k, d in enumerate(uwd):
        if ushapes[0].dimensions()[d] > window_bounds[k]:
            raise ValueError(
                f"Scatter: update window dimension {d} of {ushapes[0]} exceeds the operand bound {window_bounds[k]}"
            )
    for k, d in enumerate(scatter_dims):
        if ushapes[0].dimensions()[d] != scatter_sizes[k]:
            raise ValueError(
                f"Scatter: update scatter dimension {d} of {ushapes[0]} must be {scatter_sizes[k]} (from {ishape})"
            )
    scalars = [scalar_shape(s.element_type()) for s in shapes]
    comp = as_computation(update_computation, scalars * 2, "Scatter", "update_computation")
    _check_root("Scatter", comp, _collate(scalars))
    out = _collate([s.without_layout() for s in shapes])

    def emit(em, *values):
        text = (
            f"#stablehlo.scatter<update_window_dims = {_t(uwd)}, inserted_window_dims = {_t(iwd)}, "
            f"input_batching_dims = {_t(ibatch)}, scatter_indices_batching_dims = {_t(sbatch)}, "
            f"scatter_dims_to_operand_dims = {_t(sdod)}, index_vector_dim = {ivd}>"
        )
        attrs = {
            "scatter_dimension_numbers": ir.Attribute.parse(text),
            "indices_are_sorted": bool_attr(indices_are_sorted),
            "unique_indices": bool_attr(unique_indices),
        }
        op = sh.create("stablehlo.scatter", values, em.types(out), attrs, regions=1)
        em.region(op.regions[0], comp)
        return structured(out, op.results)

    return operands[0].builder.add_op("Scatter", out, operands + [scatter_indices] + updates, emit)

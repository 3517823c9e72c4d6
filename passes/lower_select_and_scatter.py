"""xhlo-lower-select-and-scatter: expand stablehlo.select_and_scatter into StableHLO.

The upstream linalg lowering has no pattern for select_and_scatter (and the
usual rewrites only cover non-overlapping windows). The expansion follows the
spec directly, vectorized over all window positions at once:

1. *Select.* For each window position the selected in-window offset is found
   by folding ``select(current, candidate)`` over the W window offsets in
   row-major order (``true`` keeps the current selection). Candidate ``k`` of
   every window is one strided slice of the padded operand. Padding positions
   are never selected: an explicit validity mask (the operand's shape padded
   with ``false``) is folded along, so no sentinel value is needed.
2. *Scatter.* The output starts at ``init_value``; for each offset ``k`` the
   source values of the windows that selected ``k`` are placed onto the output
   grid (interior padding by stride - 1, shifted by ``k``) and combined with
   ``scatter(output, source)``. For a fixed output element the windows that
   reach it through offset ``k`` come in reverse row-major order of ``k``, so
   visiting ``k`` from last to first applies ``scatter`` in row-major order of
   the window positions, as the reference interpreter does.

Both folds are unrolled for small windows and become ``stablehlo.while``
loops over ``k`` for larger ones (IR size stays bounded).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops

# An offset is either static (Python ints) or a list of 0-d i32 tensors inside a loop.
Offsets = Sequence[int] | Sequence[ir.Value]


@dataclasses.dataclass(frozen=True)
class WindowGeometry:
    """Window sizes, strides and padding of one select_and_scatter, all static."""

    operand_shape: tuple[int, ...]
    source_shape: tuple[int, ...]
    window: tuple[int, ...]
    strides: tuple[int, ...]
    padding_low: tuple[int, ...]
    padding_high: tuple[int, ...]

    @property
    def padded_shape(self) -> tuple[int, ...]:
        return tuple(
            n + lo + hi
            for n, lo, hi in zip(self.operand_shape, self.padding_low, self.padding_high)
        )

    @property
    def window_size(self) -> int:
        """W: the number of offsets in one window."""
        return math.prod(self.window)

    @property
    def extent(self) -> tuple[int, ...]:
        """Span of the padded operand covered by one offset of all windows."""
        return tuple((o - 1) * s + 1 for o, s in zip(self.source_shape, self.strides))

    @property
    def padded(self) -> bool:
        """Any padding at all (negative padding crops the operand)."""
        return any(self.padding_low) or any(self.padding_high)

    @property
    def has_padding_elements(self) -> bool:
        """Positive padding adds elements that must never be selected."""
        return any(p > 0 for p in self.padding_low + self.padding_high)

    def offset(self, k: int) -> tuple[int, ...]:
        """The ``k``-th window offset in row-major order."""
        return tuple(int(i) for i in np.unravel_index(k, self.window)) if self.window else ()


def _i64_array(op: ir.Operation, name: str, default: Sequence[int]) -> tuple[int, ...]:
    if name not in op.attributes:
        return tuple(default)
    return tuple(ir.DenseI64ArrayAttr(op.attributes[name]))


def _geometry(op: ir.Operation) -> WindowGeometry:
    for value in (op.operands[0], op.operands[1]):
        if not ir.RankedTensorType(value.type).has_static_shape:
            raise PassError(
                op, f"'stablehlo.select_and_scatter' needs static shapes, got {value.type}"
            )
    operand_shape = sh.shape_of(op.operands[0])
    rank = len(operand_shape)
    low, high = [0] * rank, [0] * rank
    if "padding" in op.attributes:
        pairs = np.array(ir.DenseIntElementsAttr(op.attributes["padding"]), dtype=np.int64).reshape(
            rank, 2
        )
        low, high = pairs[:, 0].tolist(), pairs[:, 1].tolist()
    return WindowGeometry(
        operand_shape=operand_shape,
        source_shape=sh.shape_of(op.operands[1]),
        window=_i64_array(op, "window_dimensions", [1] * rank),
        strides=_i64_array(op, "window_strides", [1] * rank),
        padding_low=tuple(low),
        padding_high=tuple(high),
    )


@dataclasses.dataclass
class PaddedOperand:
    """The operand padded to whole windows, with masks of where its real elements are."""

    value: ir.Value
    valid: ir.Value | None  # None: no padding, every element is valid
    invalid: ir.Value | None  # not valid (kept as a tensor of its own to save negations)


@dataclasses.dataclass
class Selection:
    """Per window position: the selected value, its offset index k, whether it is a real element."""

    value: ir.Value
    index: ir.Value
    valid: ir.Value | None

    def flatten(self) -> list[ir.Value]:
        """As loop-carried values (``valid`` only when there is padding)."""
        return [self.value, self.index] + ([self.valid] if self.valid is not None else [])

    @staticmethod
    def unflatten(values: Sequence[ir.Value]) -> Selection:
        return Selection(values[0], values[1], values[2] if len(values) > 2 else None)


class SelectAndScatterExpansion:
    """Builds the expansion of one op at the current insertion point."""

    def __init__(self, op: ir.Operation, geometry: WindowGeometry):
        self.op = op
        self.geo = geometry
        self.operand, self.source, self.init = op.operands
        self.select_region, self.scatter_region = op.regions
        self.elem = sh.element_type(self.operand)
        self.i32 = sh.i32()

    # -- building blocks ---------------------------------------------------------

    def _static(self, offsets: Offsets) -> bool:
        return all(isinstance(o, int) for o in offsets)

    def window_slice(self, x: ir.Value, offsets: Offsets) -> ir.Value:
        """Element ``offsets`` of every window: source-shaped strided slice of padded ``x``."""
        geo = self.geo
        if self._static(offsets):
            limit = [o + e for o, e in zip(offsets, geo.extent)]
            return sh.slice(x, list(offsets), limit, list(geo.strides))
        span = sh.dynamic_slice(x, list(offsets), geo.extent)
        return sh.slice(span, [0] * len(geo.extent), list(geo.extent), list(geo.strides))

    def place(self, x: ir.Value, fill: ir.Value, offsets: Offsets) -> ir.Value:
        """Inverse of window_slice: source-shaped ``x`` on the operand grid, ``fill`` elsewhere."""
        geo = self.geo
        if self._static(offsets):
            # One pad; negative edges cut the parts that fall into the padding.
            low = [o - lo for o, lo in zip(offsets, geo.padding_low)]
            high = [n - lo - e for n, lo, e in zip(geo.operand_shape, low, geo.extent)]
            return sh.pad(x, fill, low, high, [s - 1 for s in geo.strides])
        return self.place_spread(self.spread(x, fill), fill, offsets)

    def spread(self, x: ir.Value, fill: ir.Value) -> ir.Value:
        """Source-shaped ``x`` with stride - 1 ``fill``s between neighbours (extent-shaped)."""
        rank = len(self.geo.window)
        return sh.pad(x, fill, [0] * rank, [0] * rank, [s - 1 for s in self.geo.strides])

    def place_spread(
        self, spread: ir.Value, fill: ir.Value, offsets: Sequence[ir.Value]
    ) -> ir.Value:
        """A spread tensor written at dynamic ``offsets`` of the padded grid, cropped."""
        geo = self.geo
        background = sh.broadcast_in_dim(fill, geo.padded_shape, [])
        on_padded = sh.dynamic_update_slice(background, spread, list(offsets))
        if not geo.padded:
            return on_padded
        uncrop = [0] * len(geo.window)
        return sh.pad(
            on_padded, fill, [-p for p in geo.padding_low], [-p for p in geo.padding_high], uncrop
        )

    def splat_index(self, k: int | ir.Value) -> ir.Value:
        shape = self.geo.source_shape
        if isinstance(k, int):
            return sh.constant(k, sh.tensor_type(shape, self.i32))
        return sh.broadcast_in_dim(k, shape, [])

    def offsets_of(self, k: ir.Value) -> list[ir.Value]:
        """Row-major multi-index of the 0-d i32 offset ``k`` (inside a loop)."""
        offsets = []
        for d, size in enumerate(self.geo.window):
            inner = math.prod(self.geo.window[d + 1 :])
            digit = sh.binary("divide", k, sh.index_scalar(inner)) if inner > 1 else k
            offsets.append(sh.binary("remainder", digit, sh.index_scalar(size)))
        return offsets

    # -- step 1: selection -------------------------------------------------------

    def pad_operand(self) -> PaddedOperand:
        geo = self.geo
        if not geo.padded:
            return PaddedOperand(self.operand, None, None)
        low, high, none = list(geo.padding_low), list(geo.padding_high), [0] * len(geo.window)
        padded = sh.pad(self.operand, self.init, low, high, none)
        if not geo.has_padding_elements:
            return PaddedOperand(padded, None, None)
        mask_type = sh.tensor_type(geo.operand_shape, sh.i1())
        true, false = sh.constant(True, sh.i1()), sh.constant(False, sh.i1())
        return PaddedOperand(
            padded,
            sh.pad(sh.constant(True, mask_type), false, low, high, none),
            sh.pad(sh.constant(False, mask_type), true, low, high, none),
        )

    def first_selection(self, padded: PaddedOperand) -> Selection:
        zero = tuple([0] * len(self.geo.window))
        valid = self.window_slice(padded.valid, zero) if padded.valid is not None else None
        return Selection(self.window_slice(padded.value, zero), self.splat_index(0), valid)

    def select_step(
        self, best: Selection, padded: PaddedOperand, k: int | ir.Value, offsets: Offsets
    ) -> Selection:
        """Fold candidate ``k`` into the selection: it wins where select(best, candidate) is false.

        A padding candidate never wins; a real candidate always beats padding.
        """
        candidate = self.window_slice(padded.value, offsets)
        keep = sh.map_region(self.select_region, [best.value, candidate], sh.i1())
        valid = best.valid
        if padded.valid is not None:
            keep = sh.or_(self.window_slice(padded.invalid, offsets), sh.and_(keep, best.valid))
            valid = sh.or_(best.valid, self.window_slice(padded.valid, offsets))
        return Selection(
            sh.select(keep, best.value, candidate),
            sh.select(keep, best.index, self.splat_index(k)),
            valid,
        )

    def select_all(self, padded: PaddedOperand, unroll: bool) -> ir.Value:
        """The selected offset of every window position; -1 where the window is all padding."""
        best = self.first_selection(padded)
        count = self.geo.window_size
        if unroll:
            for k in range(1, count):
                best = self.select_step(best, padded, k, self.geo.offset(k))
        else:

            def body(k, *state):
                step = self.select_step(Selection.unflatten(state), padded, k, self.offsets_of(k))
                return [sh.add(k, sh.index_scalar(1)), *step.flatten()]

            _, *state = sh.while_loop(
                [sh.index_scalar(1), *best.flatten()],
                lambda k, *_: sh.compare("LT", k, sh.index_scalar(count)),
                body,
            )
            best = Selection.unflatten(state)
        if best.valid is None:
            return best.index
        return sh.select(best.valid, best.index, self.splat_index(-1))

    # -- step 2: scatter ---------------------------------------------------------

    def scatter_step(
        self,
        output: ir.Value,
        selected: ir.Value,
        k: int | ir.Value,
        offsets: Offsets,
        spread_source: ir.Value | None,
    ) -> ir.Value:
        """Combine the source values of the windows that selected offset ``k``."""
        hit = sh.compare("EQ", selected, self.splat_index(k))
        hit_here = self.place(hit, sh.constant(False, sh.i1()), offsets)
        if spread_source is None:
            source_here = self.place(self.source, self.init, offsets)
        else:
            source_here = self.place_spread(spread_source, self.init, offsets)
        combined = sh.map_region(self.scatter_region, [output, source_here], self.elem)
        return sh.select(hit_here, combined, output)

    def scatter_all(self, selected: ir.Value, unroll: bool) -> ir.Value:
        """Visit k from last to first: row-major window order at every output element."""
        output = sh.broadcast_in_dim(self.init, self.geo.operand_shape, [])
        last = self.geo.window_size - 1
        if unroll:
            for k in range(last, -1, -1):
                output = self.scatter_step(output, selected, k, self.geo.offset(k), None)
            return output
        spread_source = self.spread(self.source, self.init)  # loop-invariant

        def body(k, out):
            step = self.scatter_step(out, selected, k, self.offsets_of(k), spread_source)
            return [sh.subtract(k, sh.index_scalar(1)), step]

        _, output = sh.while_loop(
            [sh.index_scalar(last), output],
            lambda k, _: sh.compare("GE", k, sh.index_scalar(0)),
            body,
        )
        return output

    # -- whole op ----------------------------------------------------------------

    def build(self, unroll_limit: int) -> ir.Value:
        geo = self.geo
        if 0 in geo.operand_shape or 0 in geo.source_shape:
            return sh.broadcast_in_dim(self.init, geo.operand_shape, [])
        unroll = geo.window_size <= unroll_limit
        selected = self.select_all(self.pad_operand(), unroll)
        return self.scatter_all(selected, unroll)


@dataclasses.dataclass(frozen=True)
class LowerSelectAndScatter(ModulePass):
    """Expand stablehlo.select_and_scatter into slices, maps, selects and pads."""

    NAME = "xhlo-lower-select-and-scatter"

    unroll_limit: int = 16  # windows with more elements fold in stablehlo.while loops

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.select_and_scatter"):
            expansion = SelectAndScatterExpansion(op, _geometry(op))
            with ir.InsertionPoint(op), op.location:
                result = expansion.build(self.unroll_limit)
            op.results[0].replace_all_uses_with(result)
            op.erase()

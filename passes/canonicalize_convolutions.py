"""xhlo-canonicalize-convolutions: 2-D float convolutions in NHWC/HWIO layout.

The StableHLO linalg lowering makes a named ``linalg.conv_2d_nhwc_hwcf`` only
of a convolution whose operands are laid out ``[b, 0, 1, f] x [0, 1, i, o] ->
[b, 0, 1, f]``; any other layout becomes a seven-loop ``linalg.generic`` that
no matmul or BLAS path recognises. JAX's gradients use other layouts: the input
gradient of a convolution swaps the kernel's feature dimensions
(``[0, 1, o, i]``), the weight gradient convolves the activation with batch and
features swapped. This pass gives such a convolution transposed operands in the
canonical layout and transposes its result back, so it takes
``xhlo-prepare-gemms``'s paths: direct loops over the image (up to 128
channels) or im2col and BLAS. The kernel is small; the
activations' transposes are copies, which the convolution's multiply-adds
outweigh (``min-flops-per-copy``), as in XLA's layout assignment, which gives
convolutions the layout its kernels want.

A transposed convolution (``lhs_dilation``: the input gradient of a strided
convolution) has no named op either. With unit window strides and no kernel
dilation it is split by output phase (sub-pixel convolution): of the outputs
``o = q * s + r`` only the kernel taps ``k = (lo - r) mod s`` apart by ``s``
meet input elements, so each residue ``r`` (per spatial dimension) is an
ordinary convolution of the undilated input with those taps, and the results
interleave into the output. Each multiply-add is one the convolution needs;
the dilated input's zeros (3/4 of its elements at stride 2) are never
multiplied. A transposed convolution is rewritten whatever the copies cost:
as written it would become a generic loop nest. Otherwise (strided or
kernel-dilated) the input gets its zeros made explicit (a
``stablehlo.pad`` with interior padding) and the named convolution multiplies
them too.

A 1-D convolution (sequence models' ``NWC x WIO``) first becomes a 2-D one
with a unit spatial dimension inserted before the one it has, in every
operand (a reshape, no copy): ``NWC`` is then ``N1WC``, which is already
canonical, and it takes the same paths (8x4096x64 channels, 5 taps: 9.5 ms
as a generic loop nest, 3.4-3.8 ms now, XLA 3.8-4.5).

A grouped convolution (``feature_group_count`` G, ResNeXt's blocks) has no
named op either and became a generic loop nest (G = 4 over 8x56x56x64: 40-56
ms, XLA 37-39). With at least ``MIN_GROUP_CHANNELS`` input channels per group
it is split into G convolutions, each of one group's slice of the input
features and of the kernel's output features, concatenated along the output
features; each then takes the path above. Depthwise convolutions (one channel
per group) keep their vectorized loop.

Left alone: batch groups, reversed windows and element types other than f32
and f64 (neither path takes them).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from xhlo._mlir import ir, stablehlo_api
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops
from .prepare_gemms import BLAS_FLOATS

MIN_GROUP_CHANNELS = 8  # input channels per group from which groups become separate convolutions


def _is_one(op: ir.Operation, name: str) -> bool:
    """The integer attribute ``name`` is absent or 1."""
    return name not in op.attributes or ir.IntegerAttr(op.attributes[name]).value == 1


@dataclasses.dataclass(frozen=True)
class CanonicalizeConvolutions(ModulePass):
    """Transpose the operands of 2-D float convolutions into NHWC/HWIO (result back)."""

    NAME = "xhlo-canonicalize-convolutions"
    # multiply-adds the convolution must do per activation element copied
    min_flops_per_copy: int = 8

    def run(self, module: ir.Operation) -> None:
        for grouped in walk_ops(module, "stablehlo.convolution"):
            for op in _split_groups(grouped) if _splits_into_groups(grouped) else [grouped]:
                if not _canonicalizable(op):
                    continue
                if len(stablehlo_api.ConvDimensionNumbers(op.attributes["dimension_numbers"]).input_spatial_dimensions) == 1:
                    op = _as_2d(op)
                self._canonicalize(op)

    def _canonicalize(self, op: ir.Operation) -> None:
        numbers = stablehlo_api.ConvDimensionNumbers(op.attributes["dimension_numbers"])
        if len(numbers.input_spatial_dimensions) != 2:
            return
        x, k = op.operands[0], op.operands[1]
        x_order = [numbers.input_batch_dimension, *numbers.input_spatial_dimensions, numbers.input_feature_dimension]
        k_order = [*numbers.kernel_spatial_dimensions, numbers.kernel_input_feature_dimension,
                   numbers.kernel_output_feature_dimension]
        y_order = [numbers.output_batch_dimension, *numbers.output_spatial_dimensions, numbers.output_feature_dimension]
        dilation = _window(op, "lhs_dilation")
        identity = [0, 1, 2, 3]
        if x_order == identity and k_order == identity and y_order == identity and dilation == [1, 1]:
            return
        by_phase = dilation != [1, 1] and _window(op, "window_strides") == _window(op, "rhs_dilation") == [1, 1]
        padded = dilation != [1, 1] and not by_phase
        # Layout transposes must pay for their copies; a transposed convolution is
        # rewritten whatever they cost: as written it becomes a generic loop nest.
        copied = math.prod(sh.shape_of(x)) if x_order != identity else 0
        copied += math.prod(sh.shape_of(op.results[0])) if y_order != identity else 0
        flops = math.prod(sh.shape_of(op.results[0])) * math.prod(sh.shape_of(k)) // sh.shape_of(k)[k_order[3]]
        if dilation == [1, 1] and flops < copied * self.min_flops_per_copy:
            return
        with ir.InsertionPoint(op), op.location:
            if padded:  # the input's zeros made explicit
                interior = [0] * 4
                for d, factor in zip(numbers.input_spatial_dimensions, dilation):
                    interior[d] = factor - 1
                x = sh.pad(x, sh.constant(0.0, sh.element_type(x)), [0] * 4, [0] * 4, interior)
            if x_order != identity:
                x = sh.transpose(x, x_order)
            if k_order != identity:
                k = sh.transpose(k, k_order)
            # the result keeps its element type (a preferred type may differ from the operands')
            y_type = sh.tensor_type([sh.shape_of(op.results[0])[d] for d in y_order], sh.element_type(op.results[0]))
            attributes = {name: op.attributes[name] for name in op.attributes if name != "lhs_dilation"}
            attributes["dimension_numbers"] = stablehlo_api.ConvDimensionNumbers.get(
                0, 3, [1, 2], 2, 3, [0, 1], 0, 3, [1, 2]
            )
            if by_phase:
                y = _by_phase(x, k, y_type, dilation, _padding(op), attributes)
            else:
                y = _convolution(x, k, y_type, attributes)
            if y_order != identity:  # the result's dim y_order[j] is the canonical result's dim j
                y = sh.transpose(y, [y_order.index(d) for d in range(4)])
        op.results[0].replace_all_uses_with(y)
        op.erase()


def _group_count(op: ir.Operation) -> int:
    return ir.IntegerAttr(op.attributes["feature_group_count"]).value if "feature_group_count" in op.attributes else 1


def _splits_into_groups(op: ir.Operation) -> bool:
    """A float convolution of feature groups, each of at least MIN_GROUP_CHANNELS input channels."""
    groups = _group_count(op)
    if groups == 1 or str(sh.element_type(op.results[0])) not in BLAS_FLOATS or _reverses(op) \
            or not _is_one(op, "batch_group_count") or not ir.RankedTensorType(op.operands[0].type).has_static_shape:
        return False
    numbers = stablehlo_api.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    return sh.shape_of(op.operands[0])[numbers.input_feature_dimension] // groups >= MIN_GROUP_CHANNELS


def _split_groups(op: ir.Operation) -> list[ir.Operation]:
    """The grouped convolution ``op`` as one convolution per group, their results
    concatenated along the output features; returns the new convolutions."""
    numbers = stablehlo_api.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    groups = _group_count(op)
    x, k = op.operands[0], op.operands[1]
    channels = sh.shape_of(x)[numbers.input_feature_dimension] // groups
    features = sh.shape_of(k)[numbers.kernel_output_feature_dimension] // groups
    attributes = {name: op.attributes[name] for name in op.attributes}
    attributes["feature_group_count"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1)
    y_shape = list(sh.shape_of(op.results[0]))
    y_shape[numbers.output_feature_dimension] = features
    convolutions = []
    with ir.InsertionPoint(op), op.location:
        y_type = sh.tensor_type(y_shape, sh.element_type(op.results[0]))
        for g in range(groups):
            xg = sh.slice_along(x, numbers.input_feature_dimension, g * channels, (g + 1) * channels)
            kg = sh.slice_along(k, numbers.kernel_output_feature_dimension, g * features, (g + 1) * features)
            convolutions.append(sh.create("stablehlo.convolution", [xg, kg], [y_type], attributes).operation)
        y = sh.concatenate([c.result for c in convolutions], numbers.output_feature_dimension)
    op.results[0].replace_all_uses_with(y)
    op.erase()
    return convolutions


def _canonicalizable(op: ir.Operation) -> bool:
    """A float convolution the canonical paths take: no feature or batch groups, no
    reversed window."""
    return (str(sh.element_type(op.results[0])) in BLAS_FLOATS and not _reverses(op)
            and all(_is_one(op, a) for a in ("feature_group_count", "batch_group_count")))


def _with_unit(value: ir.Value, position: int) -> ir.Value:
    """``value`` reshaped with a dimension of extent 1 inserted at ``position``."""
    shape = list(sh.shape_of(value))
    return sh.reshape(value, shape[:position] + [1] + shape[position:])


def _as_2d(op: ir.Operation) -> ir.Operation:
    """The 1-D convolution ``op`` as a 2-D one whose first spatial dimension is a unit
    dimension inserted before the spatial dimension of each operand; returns the new op."""
    n = stablehlo_api.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    (xs,), (ks,), (ys,) = n.input_spatial_dimensions, n.kernel_spatial_dimensions, n.output_spatial_dimensions

    def after(d: int, spatial: int) -> int:  # where dimension d lands once a unit is inserted at spatial
        return d + 1 if d >= spatial else d

    attributes = {name: op.attributes[name] for name in op.attributes}
    attributes["dimension_numbers"] = stablehlo_api.ConvDimensionNumbers.get(
        after(n.input_batch_dimension, xs), after(n.input_feature_dimension, xs), [xs, xs + 1],
        after(n.kernel_input_feature_dimension, ks), after(n.kernel_output_feature_dimension, ks), [ks, ks + 1],
        after(n.output_batch_dimension, ys), after(n.output_feature_dimension, ys), [ys, ys + 1])
    for name in ("window_strides", "lhs_dilation", "rhs_dilation"):
        attributes[name] = ir.DenseI64ArrayAttr.get([1, *_window(op, name)[:1]])
    (low, high), _ = _padding(op)
    attributes["padding"] = ir.DenseElementsAttr.get(np.array([[0, 0], [low, high]], dtype=np.int64))
    attributes.pop("window_reversal", None)  # none reversed (_canonicalizable)
    y_shape = list(sh.shape_of(op.results[0]))
    with ir.InsertionPoint(op), op.location:
        y_type = sh.tensor_type(y_shape[:ys] + [1] + y_shape[ys:], sh.element_type(op.results[0]))
        conv = sh.create("stablehlo.convolution", [_with_unit(op.operands[0], xs), _with_unit(op.operands[1], ks)],
                         [y_type], attributes)
        y = sh.reshape(conv.result, y_shape)
    op.results[0].replace_all_uses_with(y)
    op.erase()
    return conv.operation


def _convolution(x: ir.Value, k: ir.Value, y_type: ir.RankedTensorType, attributes: dict) -> ir.Value:
    return sh.create("stablehlo.convolution", [x, k], [y_type], attributes).result


@dataclasses.dataclass(frozen=True)
class _Phase:
    """The outputs ``q * stride + r`` of one spatial dimension of a transposed convolution."""

    first_tap: int  # the kernel taps first_tap, first_tap + stride, ... meet input elements
    taps: int
    low: int  # the undilated input's padding for them (negative: cut)
    high: int
    count: int  # how many outputs have this residue


def _phases(size: int, kernel: int, out: int, stride: int, low: int) -> list[_Phase]:
    phases = []
    for r in range(stride):
        first = (low - r) % stride
        taps = max(0, -(-(kernel - first) // stride))
        count = max(0, -(-(out - r) // stride))
        offset = (r + first - low) // stride  # output q of this residue starts at input q + offset
        phases.append(_Phase(first, taps, -offset, count - 1 + taps - size + offset, count))
    return phases


def _by_phase(x: ir.Value, k: ir.Value, y_type: ir.RankedTensorType, stride: list[int],
              padding: list[tuple[int, int]], attributes: dict) -> ir.Value:
    """The NHWC/HWIO transposed convolution as one convolution per output phase, interleaved."""
    y_shape, y_elem = list(y_type.shape), y_type.element_type
    n, height, width, _ = sh.shape_of(x)
    kh, kw, _, features = sh.shape_of(k)
    rows, cols = (_phases(size, taps, out, s, lo) for size, taps, out, s, (lo, _) in
                  zip((height, width), (kh, kw), y_shape[1:3], stride, padding))
    tiles = [-(-out // s) for out, s in zip(y_shape[1:3], stride)]  # outputs per phase, rounded up
    zero = sh.constant(0.0, y_elem)
    blocks = []
    for row in rows:
        line = []
        for col in cols:
            if row.taps and col.taps and row.count and col.count:
                block_type = sh.tensor_type([n, row.count, col.count, features], y_elem)
                block = _phase_convolution(x, k, stride, (row, col), block_type, attributes)
                if (row.count, col.count) != tuple(tiles):  # a shorter phase: rounded up with zeros
                    block = sh.pad(block, zero, [0] * 4, [0, tiles[0] - row.count, tiles[1] - col.count, 0], [0] * 4)
            else:
                block = sh.broadcast_in_dim(zero, [n, *tiles, features], [])
            line.append(sh.reshape(block, [n, tiles[0], tiles[1], 1, features]))
        line = sh.concatenate(line, 3)  # [n, th, tw, sw, f]: column phases side by side
        blocks.append(sh.reshape(line, [n, tiles[0], 1, tiles[1] * stride[1], features]))
    y = sh.reshape(sh.concatenate(blocks, 2), [n, tiles[0] * stride[0], tiles[1] * stride[1], features])
    return y if list(sh.shape_of(y)) == list(y_shape) else sh.slice(y, [0, 0, 0, 0], y_shape)


def _phase_convolution(x: ir.Value, k: ir.Value, stride: list[int], phase: tuple[_Phase, _Phase],
                       y_type: ir.RankedTensorType, attributes: dict) -> ir.Value:
    *_, channels, features = sh.shape_of(k)
    row, col = phase
    taps = sh.slice(k, [row.first_tap, col.first_tap, 0, 0],
                    [row.first_tap + (row.taps - 1) * stride[0] + 1, col.first_tap + (col.taps - 1) * stride[1] + 1,
                     channels, features], [stride[0], stride[1], 1, 1])
    shape = sh.shape_of(x)
    cut_low = [0, max(0, -row.low), max(0, -col.low), 0]
    cut_high = [0, max(0, -row.high), max(0, -col.high), 0]
    if any(cut_low) or any(cut_high):
        x = sh.slice(x, cut_low, [size - cut for size, cut in zip(shape, cut_high)])
    padding = [[max(0, row.low), max(0, row.high)], [max(0, col.low), max(0, col.high)]]
    attributes = {name: value for name, value in attributes.items()
                  if name not in ("window_strides", "rhs_dilation", "padding", "window_reversal")}
    attributes["padding"] = ir.DenseElementsAttr.get(np.array(padding, dtype=np.int64))
    return _convolution(x, taps, y_type, attributes)


def _padding(op: ir.Operation) -> list[tuple[int, int]]:
    """(low, high) per spatial dimension, two of them (the second (0, 0) for a 1-D op)."""
    if "padding" not in op.attributes:
        return [(0, 0), (0, 0)]
    values = [int(v) for v in ir.DenseIntElementsAttr(op.attributes["padding"])] + [0, 0]
    return [(values[0], values[1]), (values[2], values[3])]


def _window(op: ir.Operation, name: str) -> list[int]:
    """A per-spatial-dimension attribute (strides, dilations); absent means ones."""
    if name not in op.attributes:
        return [1, 1]
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _reverses(op: ir.Operation) -> bool:
    """Some window dimension is reversed (``window_reversal``)."""
    if "window_reversal" not in op.attributes:
        return False
    return any(ir.DenseBoolArrayAttr(op.attributes["window_reversal"]))

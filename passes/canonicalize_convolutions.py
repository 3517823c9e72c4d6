"""xhlo-canonicalize-convolutions: 2-D float convolutions in NHWC/HWIO layout.

The StableHLO linalg lowering makes a named ``linalg.conv_2d_nhwc_hwcf`` only
of a convolution whose operands are laid out ``[b, 0, 1, f] x [0, 1, i, o] ->
[b, 0, 1, f]``; any other layout becomes a seven-loop ``linalg.generic`` that
no matmul or BLAS path recognises. JAX's gradients use other layouts: the input
gradient of a convolution swaps the kernel's feature dimensions
(``[0, 1, o, i]``), the weight gradient convolves the activation with batch and
features swapped. This pass gives such a convolution transposed operands in the
canonical layout and transposes its result back, so it takes
``xhlo-prepare-gemms``'s im2col and BLAS path. The kernel is small; the
activations' transposes are copies, which the convolution's multiply-adds
outweigh (``min-flops-per-copy``), as in XLA's layout assignment, which gives
convolutions the layout its kernels want.

A transposed convolution (``lhs_dilation``: the input gradient of a strided
convolution) has no named op either: its input gets its zeros made explicit
first (a ``stablehlo.pad`` with interior padding). The named convolution then
multiplies those zeros too (4x the multiply-adds at stride 2), through BLAS,
which was still ~100x faster here than the generic loop nest.

Left alone: grouped convolutions, reversed windows and element types other
than f32 and f64 (no BLAS).
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import ir, stablehlo_api
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops
from .prepare_gemms import BLAS_FLOATS


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
        for op in walk_ops(module, "stablehlo.convolution"):
            self._canonicalize(op)

    def _canonicalize(self, op: ir.Operation) -> None:
        numbers = stablehlo_api.ConvDimensionNumbers(op.attributes["dimension_numbers"])
        if len(numbers.input_spatial_dimensions) != 2 or str(sh.element_type(op.results[0])) not in BLAS_FLOATS:
            return
        if not all(_is_one(op, a) for a in ("feature_group_count", "batch_group_count")) or _reverses(op):
            return
        x, k = op.operands[0], op.operands[1]
        x_order = [numbers.input_batch_dimension, *numbers.input_spatial_dimensions, numbers.input_feature_dimension]
        k_order = [*numbers.kernel_spatial_dimensions, numbers.kernel_input_feature_dimension,
                   numbers.kernel_output_feature_dimension]
        y_order = [numbers.output_batch_dimension, *numbers.output_spatial_dimensions, numbers.output_feature_dimension]
        dilation = _lhs_dilation(op)
        identity = [0, 1, 2, 3]
        if x_order == identity and k_order == identity and y_order == identity and dilation == [1, 1]:
            return
        interior = [0] * 4
        for d, factor in zip(numbers.input_spatial_dimensions, dilation):
            interior[d] = factor - 1
        dilated = [n + (n - 1) * i for n, i in zip(sh.shape_of(x), interior)]
        copied = math.prod(dilated) if x_order != identity or dilation != [1, 1] else 0
        copied += math.prod(sh.shape_of(op.results[0])) if y_order != identity else 0
        flops = math.prod(sh.shape_of(op.results[0])) * math.prod(sh.shape_of(k)) // sh.shape_of(k)[k_order[3]]
        if flops < copied * self.min_flops_per_copy:
            return
        with ir.InsertionPoint(op), op.location:
            if dilation != [1, 1]:  # a transposed convolution: its input's zeros made explicit
                x = sh.pad(x, sh.constant(0.0, sh.element_type(x)), [0] * 4, [0] * 4, interior)
            if x_order != identity:
                x = sh.transpose(x, x_order)
            if k_order != identity:
                k = sh.transpose(k, k_order)
            y_shape = [sh.shape_of(op.results[0])[d] for d in y_order]
            attributes = {name: op.attributes[name] for name in op.attributes if name != "lhs_dilation"}
            attributes["dimension_numbers"] = stablehlo_api.ConvDimensionNumbers.get(
                0, 3, [1, 2], 2, 3, [0, 1], 0, 3, [1, 2]
            )
            y = sh.create("stablehlo.convolution", [x, k], [sh.tensor_type(y_shape, sh.element_type(x))],
                          attributes).result
            if y_order != identity:  # the result's dim y_order[j] is the canonical result's dim j
                y = sh.transpose(y, [y_order.index(d) for d in range(4)])
        op.results[0].replace_all_uses_with(y)
        op.erase()


def _lhs_dilation(op: ir.Operation) -> list[int]:
    if "lhs_dilation" not in op.attributes:
        return [1, 1]
    return list(ir.DenseI64ArrayAttr(op.attributes["lhs_dilation"]))


def _reverses(op: ir.Operation) -> bool:
    """Some window dimension is reversed (``window_reversal``)."""
    if "window_reversal" not in op.attributes:
        return False
    return any(ir.DenseBoolArrayAttr(op.attributes["window_reversal"]))

"""xhlo-lower-direct-convolutions: convolutions of few input channels read the image in place.

A convolution becomes an im2col matrix times the filter for BLAS
(``xhlo-prepare-gemms``). With few input channels that matrix is many times
the image (the 7x7 stride-2 stem convolution of 8 RGB images of 224x224:
59 MB of patches from 5 MB), and a product of 147 columns by 64 runs BLAS
below speed: xhlo took 1.3-1.4x XLA's time there. ``xhlo-prepare-gemms`` tags
such NHWC x HWCF f32 convolutions ``xhlo.direct_conv`` instead, and this pass
computes them, on buffers, as register-blocked vector loops:

* a loop over output rows (image, output row), marked ``xhlo.parallel_loop``
  (each writes its own row), so ``xhlo-parallelize-loops`` spreads it;
* per row, blocks of up to ``accumulators`` // V (at most ``max-pixels``)
  output pixels by V vectors of features (V <= 4, 64 f32 features) keep their
  sums in vector registers over the whole window: each filter tap loads V
  vectors of the filter once and, for each pixel of the block, broadcasts one
  image element and issues V fused multiply-adds. Nothing is copied; the image
  is read where it lies. A row's last partial block overlaps the one before
  when the output starts at zero, so the kernel is emitted once.

A tagged +0.0 fill of the output before the convolution is dropped (the sums
start at zero); otherwise they start from the output.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import arith, ir, memref, scf, vector

from .base import ModulePass, walk_ops
from .gemm_to_blas import index_constant, zero_fill_before
from .prepare_gemms import DIRECT_CONV_TAG, _pair
from .vectorize import PARALLEL_LOOP

_LANES = 16  # f32 lanes of a 512-bit vector


def _unit_stride_rows(value: ir.Value) -> bool:
    """The buffer's innermost dim is contiguous (vector loads and stores need it)."""
    strides, _ = ir.MemRefType(value.type).get_strides_and_offset()
    return strides[-1] == 1


@dataclasses.dataclass(frozen=True)
class _Conv:
    """One convolution's buffers and sizes (NHWC image and output, HWCF filter)."""

    image: ir.Value
    filt: ir.Value
    out: ir.Value
    out_shape: tuple[int, int, int, int]  # n, oh, ow, f
    window: tuple[int, int, int]  # kh, kw, c
    strides: tuple[int, int]
    dilations: tuple[int, int]
    zero_start: bool


def _add(*values: ir.Value) -> ir.Value:
    total = values[0]
    for value in values[1:]:
        total = arith.addi(total, value)
    return total


def _mul(value: ir.Value, factor: int) -> ir.Value:
    return value if factor == 1 else arith.muli(value, index_constant(factor))


class _Emitter:
    """The loops of one convolution."""

    def __init__(self, conv: _Conv, accumulators: int, max_pixels: int):
        self.conv, self.accumulators, self.max_pixels = conv, accumulators, max_pixels
        self.vector_type = ir.VectorType.get([_LANES], ir.F32Type.get())

    def emit(self) -> None:
        c = self.conv
        n, oh, ow, f = c.out_shape
        rows = scf.ForOp(index_constant(0), index_constant(n * oh), index_constant(1))
        rows.operation.attributes[PARALLEL_LOOP] = ir.UnitAttr.get()
        with ir.InsertionPoint(rows.body):
            image_index = arith.divui(rows.induction_variable, index_constant(oh))
            out_row = arith.remui(rows.induction_variable, index_constant(oh))
            for first_feature in range(0, f, 4 * _LANES):
                vectors = min(4, (f - first_feature) // _LANES)
                block = min(ow, self.max_pixels, max(1, self.accumulators // vectors))
                full, tail = divmod(ow, block)
                # a last partial block of a zero-started output overlaps the one before (its
                # pixels are computed twice, stored alike): one copy of the kernel, not two
                overlap = bool(tail) and c.zero_start
                blocks = scf.ForOp(index_constant(0), index_constant(full + overlap), index_constant(1))
                with ir.InsertionPoint(blocks.body):
                    first_pixel = _mul(blocks.induction_variable, block)
                    if overlap:
                        first_pixel = arith.minui(first_pixel, index_constant(ow - block))
                    self._block(image_index, out_row, first_pixel, block, first_feature, vectors)
                    scf.yield_([])
                if tail and not overlap:
                    self._block(image_index, out_row, index_constant(full * block), tail, first_feature, vectors)
            scf.yield_([])

    def _block(self, image_index, out_row, first_pixel, pixels: int, first_feature: int, vectors: int) -> None:
        """``pixels`` x ``vectors`` sums over the window, then stored."""
        c = self.conv
        kh, kw, channels = c.window
        (sh, sw), (dh, dw) = c.strides, c.dilations
        features = [index_constant(first_feature + v * _LANES) for v in range(vectors)]
        outs = [(_add(first_pixel, index_constant(p)) if p else first_pixel) for p in range(pixels)]
        if c.zero_start:
            zero = arith.constant(self.vector_type, ir.DenseElementsAttr.get_splat(
                self.vector_type, ir.FloatAttr.get(ir.F32Type.get(), 0.0)))
            start = [zero] * (pixels * vectors)
        else:
            start = [vector.load(self.vector_type, c.out, [image_index, out_row, o, fv])
                     for o in outs for fv in features]
        tap_rows = scf.ForOp(index_constant(0), index_constant(kh), index_constant(1), start)
        with ir.InsertionPoint(tap_rows.body):
            in_row = _add(_mul(out_row, sh), _mul(tap_rows.induction_variable, dh))
            taps = scf.ForOp(index_constant(0), index_constant(kw), index_constant(1),
                             list(tap_rows.inner_iter_args))
            with ir.InsertionPoint(taps.body):
                sums = list(taps.inner_iter_args)
                in_first = _add(_mul(first_pixel, sw), _mul(taps.induction_variable, dw))
                for channel in range(channels):
                    ci = index_constant(channel)
                    weights = [vector.load(self.vector_type, c.filt,
                                           [tap_rows.induction_variable, taps.induction_variable, ci, fv])
                               for fv in features]
                    for p in range(pixels):
                        column = _add(in_first, index_constant(p * sw)) if p else in_first
                        pixel = memref.load(c.image, [image_index, in_row, column, ci])
                        spread = vector.broadcast(self.vector_type, pixel)
                        for v in range(vectors):
                            sums[p * vectors + v] = vector.fma(spread, weights[v], sums[p * vectors + v])
                scf.yield_(sums)
            scf.yield_(list(taps.results))
        for p, o in enumerate(outs):
            for v, fv in enumerate(features):
                vector.store(tap_rows.results[p * vectors + v], c.out, [image_index, out_row, o, fv])


@dataclasses.dataclass(frozen=True)
class LowerDirectConvolutions(ModulePass):
    """Convolutions tagged xhlo.direct_conv -> register-blocked vector loops over the image."""

    NAME = "xhlo-lower-direct-convolutions"
    accumulators: int = 24  # vector registers holding partial sums (of 32)
    max_pixels: int = 4  # per block: 4 x 4 vectors of sums keep the FMAs busy; 6-8 were no faster, 1.5x LLVM time

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "linalg.conv_2d_nhwc_hwcf"):
            if DIRECT_CONV_TAG in op.attributes and all(isinstance(v.type, ir.MemRefType) for v in op.operands):
                self._rewrite(op)

    def _rewrite(self, op: ir.Operation) -> None:
        image, filt, out = op.operands
        if not (_unit_stride_rows(filt) and _unit_stride_rows(out)):
            return  # left to convert-linalg-to-loops
        kh, kw, channels, _ = ir.MemRefType(filt.type).shape
        zero_fill = zero_fill_before(op)
        conv = _Conv(image, filt, out, tuple(ir.MemRefType(out.type).shape), (kh, kw, channels),
                     tuple(_pair(op, "strides")), tuple(_pair(op, "dilations")), zero_fill is not None)
        with ir.InsertionPoint(op), op.location:
            _Emitter(conv, self.accumulators, self.max_pixels).emit()
        op.erase()
        if zero_fill is not None:
            zero_fill.erase()

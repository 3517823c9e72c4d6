"""xhlo-lower-direct-convolutions: convolutions of up to 128 channels read the image in place.

A convolution becomes an im2col matrix times the filter for BLAS
(``xhlo-prepare-gemms``). That matrix is kh*kw times the image (the 7x7
stride-2 stem convolution of 8 RGB images of 224x224: 59 MB of patches from
5 MB), written out and read back, and a product of few columns, or of 64-128
features, runs BLAS below speed: xhlo took 1.3-1.8x XLA's time on such
convolutions. ``xhlo-prepare-gemms`` tags NHWC x HWCF f32 convolutions of up
to 128 input channels and features ``xhlo.direct_conv`` instead, and this pass
computes them, on buffers, as register-blocked vector loops:

* one loop over the blocks of every output row and chunk of features (image,
  output row, block, chunk), marked ``xhlo.parallel_loop`` (each writes its
  own pixels), so ``xhlo-parallelize-loops`` spreads it, a single long row (a
  batch-1 conv1d) too;
* a block of up to ``accumulators`` // V (at most ``max-pixels``) output
  pixels by a chunk of V vectors of features (V <= 4, 64 f32 features) keeps
  their sums in vector registers over the whole window: each filter tap loads
  V vectors of the filter once per input channel (a loop past 4 channels)
  and, for each pixel of the block, broadcasts one image element and issues V
  fused multiply-adds. V gives the block the most pixels (each filter vector
  loaded serves one multiply-add per pixel), then the most features: 4 x 4
  on AVX-512, 1 x 6 on AVX2. Nothing is copied; the image is read where it
  lies. A row's last partial block overlaps the one before when the output
  starts at zero, so the kernel is emitted once.

A convolution of one input channel and one feature (``jnp.convolve``, a filter
over a grey image) at unit width stride is vectorized along the output row
instead: a loop over all blocks of 64 output pixels of all rows (on the thread
pool, so one long row uses every core) keeps 4 vectors of 16 neighbouring
pixels' sums; each tap loads 4 vectors of neighbouring image pixels and
multiplies them by its weight. A row's last pixels (fewer than 64) take
single vectors, then scalar code.

A tagged +0.0 fill of the output before the convolution is dropped (the sums
start at zero); otherwise they start from the output.
"""

from __future__ import annotations

import dataclasses

from xhlo import host
from xhlo._mlir import arith, ir, memref, scf, vector

from .base import ModulePass, walk_ops
from .gemm_to_blas import index_constant, zero_fill_before
from .lower_small_gemms import vector_splat
from .prepare_gemms import DIRECT_CONV_TAG, _pair
from .vectorize import PARALLEL_LOOP

_LANES = 16  # f32 lanes of a 512-bit vector
UNROLLED_CHANNELS = 4  # more input channels are a loop


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


def _image_and_row(conv: _Conv, row: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(image, output row) of flattened output row ``row``."""
    oh = conv.out_shape[1]
    return arith.divui(row, index_constant(oh)), arith.remui(row, index_constant(oh))


def _mul(value: ir.Value, factor: int) -> ir.Value:
    return value if factor == 1 else arith.muli(value, index_constant(factor))


def _parallel_loop(count: int, body) -> None:
    """``body(i)`` for i < ``count``, in a loop marked for the thread pool (its
    iterations write disjoint pixels)."""
    loop = scf.ForOp(index_constant(0), index_constant(count), index_constant(1))
    loop.operation.attributes[PARALLEL_LOOP] = ir.UnitAttr.get()
    with ir.InsertionPoint(loop.body):
        body(loop.induction_variable)
        scf.yield_([])


def _split(index: ir.Value, chunks: int) -> tuple[ir.Value, ir.Value | None]:
    """(index // chunks, index % chunks): the chunk varies fastest (None: one chunk)."""
    if chunks == 1:
        return index, None
    return arith.divui(index, index_constant(chunks)), arith.remui(index, index_constant(chunks))


def _blocks_of_rows(conv: _Conv, per_row: int, width: int, body, chunks: int = 1) -> None:
    """``body(output row, first pixel, chunk)`` for ``per_row`` blocks of ``width`` pixels of
    every output row and ``chunks`` chunks of features, in one parallel loop: a single long
    row (a batch-1 conv1d) uses every core, and a block's image stays in L1 across chunks."""
    n, oh, _, _ = conv.out_shape

    def block(index: ir.Value) -> None:
        index, chunk = _split(index, chunks)
        first_pixel = _mul(arith.remui(index, index_constant(per_row)), width)
        body(arith.divui(index, index_constant(per_row)), first_pixel, chunk)

    _parallel_loop(n * oh * per_row * chunks, block)


def block_pixels(vectors: int, width: int, accumulators: int, max_pixels: int) -> int:
    """Pixels of a block of ``vectors`` vectors of features: its sums stay in registers."""
    return min(width, max_pixels, max(1, accumulators // vectors))


def vectors_per_block(feature_vectors: int, width: int, accumulators: int, max_pixels: int) -> int:
    """Vectors of features a block computes: the most pixels (each filter vector loaded
    feeds one multiply-add per pixel; a filter larger than L1 comes from L2), then the
    most vectors (fewer passes over the image). AVX-512's 24 sums give 4 vectors x 4
    pixels; AVX2's 6 give 1 x 6, where 4 x 1 loaded a filter vector per multiply-add."""
    return max(range(1, min(4, feature_vectors) + 1),
               key=lambda vectors: (block_pixels(vectors, width, accumulators, max_pixels), vectors))


class _Emitter:
    """The loops of one convolution."""

    def __init__(self, conv: _Conv, accumulators: int, max_pixels: int):
        self.conv, self.accumulators, self.max_pixels = conv, accumulators, max_pixels
        self.vector_type = ir.VectorType.get([_LANES], ir.F32Type.get())

    def emit(self) -> None:
        _, _, ow, f = self.conv.out_shape
        vectors = vectors_per_block(f // _LANES, ow, self.accumulators, self.max_pixels)
        chunks, rest = divmod(f // _LANES, vectors)
        self._features(0, vectors, chunks)
        if rest:
            self._features(chunks * vectors * _LANES, rest, 1)

    def _features(self, first_feature: int, vectors: int, chunks: int) -> None:
        """Every output pixel's ``chunks`` chunks of ``vectors`` vectors of features from
        ``first_feature`` on, one kernel for all chunks."""
        c = self.conv
        n, oh, ow, _ = c.out_shape
        block = block_pixels(vectors, ow, self.accumulators, self.max_pixels)
        full, tail = divmod(ow, block)
        # a last partial block of a zero-started output overlaps the one before (its
        # pixels are computed twice, stored alike): one copy of the kernel, not two
        overlap = bool(tail) and c.zero_start

        def features(chunk: ir.Value | None) -> list[ir.Value]:
            """The first feature of each of the chunk's vectors."""
            if chunk is None:
                return [index_constant(first_feature + v * _LANES) for v in range(vectors)]
            start = _mul(chunk, vectors * _LANES)
            offsets = (first_feature + v * _LANES for v in range(vectors))
            return [_add(start, index_constant(offset)) if offset else start for offset in offsets]

        def full_block(row: ir.Value, first_pixel: ir.Value, chunk: ir.Value | None) -> None:
            if overlap:
                first_pixel = arith.minui(first_pixel, index_constant(ow - block))
            self._block(*_image_and_row(c, row), first_pixel, block, features(chunk))

        def row_end(index: ir.Value) -> None:
            row, chunk = _split(index, chunks)
            self._block(*_image_and_row(c, row), index_constant(full * block), tail, features(chunk))

        if full + overlap:
            _blocks_of_rows(c, full + overlap, block, full_block, chunks)
        if tail and not overlap:
            _parallel_loop(n * oh * chunks, row_end)

    def _block(self, image_index, out_row, first_pixel, pixels: int, features: list[ir.Value]) -> None:
        """``pixels`` x ``len(features)`` sums over the window (a vector of 16 features
        from each of ``features``), then stored."""
        c = self.conv
        kh, kw, channels = c.window
        (sh, sw), (dh, dw) = c.strides, c.dilations
        vectors = len(features)
        outs = [(_add(first_pixel, index_constant(p)) if p else first_pixel) for p in range(pixels)]
        if c.zero_start:
            start = [vector_splat(self.vector_type, 0.0)] * (pixels * vectors)
        else:
            start = [vector.load(self.vector_type, c.out, [image_index, out_row, o, fv])
                     for o in outs for fv in features]
        tap_rows = scf.ForOp(index_constant(0), index_constant(kh), index_constant(1), start)
        with ir.InsertionPoint(tap_rows.body):
            in_row = _add(_mul(out_row, sh), _mul(tap_rows.induction_variable, dh))
            taps = scf.ForOp(index_constant(0), index_constant(kw), index_constant(1),
                             list(tap_rows.inner_iter_args))
            with ir.InsertionPoint(taps.body):
                in_first = _add(_mul(first_pixel, sw), _mul(taps.induction_variable, dw))

                def channel_step(ci, sums):
                    weights = [vector.load(self.vector_type, c.filt,
                                           [tap_rows.induction_variable, taps.induction_variable, ci, fv])
                               for fv in features]
                    for p in range(pixels):
                        column = _add(in_first, index_constant(p * sw)) if p else in_first
                        pixel = memref.load(c.image, [image_index, in_row, column, ci])
                        spread = vector.broadcast(self.vector_type, pixel)
                        for v in range(vectors):
                            sums[p * vectors + v] = vector.fma(spread, weights[v], sums[p * vectors + v])
                    return sums

                sums = list(taps.inner_iter_args)
                if channels <= UNROLLED_CHANNELS:
                    for channel in range(channels):
                        sums = channel_step(index_constant(channel), sums)
                else:
                    over = scf.ForOp(index_constant(0), index_constant(channels), index_constant(1), sums)
                    with ir.InsertionPoint(over.body):
                        scf.yield_(channel_step(over.induction_variable, list(over.inner_iter_args)))
                    sums = list(over.results)
                scf.yield_(sums)
            scf.yield_(list(taps.results))
        for p, o in enumerate(outs):
            for v, fv in enumerate(features):
                vector.store(tap_rows.results[p * vectors + v], c.out, [image_index, out_row, o, fv])


def _without_unit_channels(value: ir.Value) -> ir.Value:
    """An NHWC buffer of one channel as its N x H x W view (the same memory)."""
    t = ir.MemRefType(value.type)
    layout = None  # an identity layout stays one
    if not (isinstance(t.layout, ir.AffineMapAttr) and ir.AffineMapAttr(t.layout).value == ir.AffineMap.get_identity(4)):
        strides, offset = t.get_strides_and_offset()
        layout = ir.StridedLayoutAttr.get(offset, strides[:3])
    view = ir.MemRefType.get(t.shape[:3], t.element_type, layout, t.memory_space)
    return memref.collapse_shape(view, value, [[0], [1], [2, 3]])


class _LaneEmitter:
    """A convolution of one input channel and one feature (``jnp.convolve``, a filter
    over a grey image), at unit width stride: each vector holds 16 neighbouring output
    pixels, and each filter tap multiplies 16 neighbouring image pixels by its weight."""

    VECTORS = 4  # sums in registers per block: 64 output pixels

    def __init__(self, conv: _Conv):
        self.conv = conv
        self.vector_type = ir.VectorType.get([_LANES], ir.F32Type.get())
        self.image, self.out = _without_unit_channels(conv.image), _without_unit_channels(conv.out)

    def emit(self) -> None:
        n, oh, ow, _ = self.conv.out_shape
        width = _LANES * self.VECTORS
        full = ow // width
        if full:
            _blocks_of_rows(self.conv, full, width, lambda row, first_pixel, _: self._block(row, first_pixel, self.VECTORS))
        vectors, tail = divmod(ow - full * width, _LANES)
        if vectors or tail:
            _parallel_loop(n * oh, lambda row: self._row_end(row, full * width, vectors, tail))

    def _row_end(self, row: ir.Value, first_pixel: int, vectors: int, tail: int) -> None:
        """A row's pixels from ``first_pixel`` on: ``vectors`` single vectors, then
        ``tail`` pixels one by one."""
        if vectors:
            self._block(row, index_constant(first_pixel), vectors)
        ow = self.conv.out_shape[2]
        pixels = scf.ForOp(index_constant(ow - tail), index_constant(ow), index_constant(1))
        with ir.InsertionPoint(pixels.body):
            self._pixel(row, pixels.induction_variable)
            scf.yield_([])

    def _taps(self, image_index: ir.Value, out_row: ir.Value, start: list[ir.Value], read) -> list[ir.Value]:
        """``start`` plus, over the window, each weight times ``read(in_row, tap_offset)``
        (one value per sum: vectors of neighbouring pixels, or one pixel)."""
        c = self.conv
        kh, kw, _ = c.window
        (sh, _), (dh, dw) = c.strides, c.dilations
        tap_rows = scf.ForOp(index_constant(0), index_constant(kh), index_constant(1), start)
        with ir.InsertionPoint(tap_rows.body):
            in_row = _add(_mul(out_row, sh), _mul(tap_rows.induction_variable, dh))
            taps = scf.ForOp(index_constant(0), index_constant(kw), index_constant(1), list(tap_rows.inner_iter_args))
            with ir.InsertionPoint(taps.body):
                zero = index_constant(0)
                weight = memref.load(c.filt, [tap_rows.induction_variable, taps.induction_variable, zero, zero])
                values = read(in_row, _mul(taps.induction_variable, dw))
                scf.yield_([_fma(v, weight, total) for v, total in zip(values, taps.inner_iter_args)])
            scf.yield_(list(taps.results))
        return list(tap_rows.results)

    def _block(self, row: ir.Value, first_pixel: ir.Value, vectors: int) -> None:
        """``vectors`` x 16 output pixels from ``first_pixel`` of output row ``row``."""
        image_index, out_row = _image_and_row(self.conv, row)
        firsts = [_add(first_pixel, index_constant(v * _LANES)) if v else first_pixel for v in range(vectors)]
        if self.conv.zero_start:
            start = [vector_splat(self.vector_type, 0.0)] * vectors
        else:
            start = [vector.load(self.vector_type, self.out, [image_index, out_row, w]) for w in firsts]

        def read(in_row, offset):
            return [vector.load(self.vector_type, self.image, [image_index, in_row, _add(w, offset)]) for w in firsts]

        for total, w in zip(self._taps(image_index, out_row, start, read), firsts):
            vector.store(total, self.out, [image_index, out_row, w])

    def _pixel(self, row: ir.Value, pixel: ir.Value) -> None:
        """One output pixel (of a row's last, fewer than 16)."""
        image_index, out_row = _image_and_row(self.conv, row)
        if self.conv.zero_start:
            start = arith.constant(ir.F32Type.get(), 0.0)
        else:
            start = memref.load(self.out, [image_index, out_row, pixel])

        def read(in_row, offset):
            return [memref.load(self.image, [image_index, in_row, _add(pixel, offset)])]

        total = self._taps(image_index, out_row, [start], read)[0]
        memref.store(total, self.out, [image_index, out_row, pixel])


def _fma(value: ir.Value, weight: ir.Value, total: ir.Value) -> ir.Value:
    """``total + value * weight``, for a vector of pixels or one pixel."""
    if isinstance(value.type, ir.VectorType):
        return vector.fma(value, vector.broadcast(value.type, weight), total)
    return arith.addf(total, arith.mulf(value, weight))


@dataclasses.dataclass(frozen=True)
class LowerDirectConvolutions(ModulePass):
    """Convolutions tagged xhlo.direct_conv -> register-blocked vector loops over the image."""

    NAME = "xhlo-lower-direct-convolutions"
    # vectors holding partial sums: 24 of AVX-512's 32; 6 (12 ymm) on AVX2, where 24 spilled
    accumulators: int = host.wide_vector_registers() * 3 // 4
    # pixels per block: on AVX-512, 4 x 4 vectors of sums keep the FMAs busy (6-8 were no
    # faster, 1.5x LLVM time); AVX2's blocks are 1 vector x 6 (12 + 2 + 1 of its 16 ymm)
    max_pixels: int = 4 if host.avx512() else 6

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "linalg.conv_2d_nhwc_hwcf"):
            if DIRECT_CONV_TAG in op.attributes and all(isinstance(v.type, ir.MemRefType) for v in op.operands):
                self._rewrite(op)

    def _rewrite(self, op: ir.Operation) -> None:
        image, filt, out = op.operands
        if not (_unit_stride_rows(filt) and _unit_stride_rows(out)):
            return  # left to convert-linalg-to-loops
        if ir.MemRefType(filt.type).shape[2:] == [1, 1] and not all(
                ir.MemRefType(v.type).get_strides_and_offset()[0][2] == 1 for v in (image, out)):
            return  # one channel, one feature: vectors of neighbouring pixels need unit pixel strides
        kh, kw, channels, _ = ir.MemRefType(filt.type).shape
        zero_fill = zero_fill_before(op)
        conv = _Conv(image, filt, out, tuple(ir.MemRefType(out.type).shape), (kh, kw, channels),
                     tuple(_pair(op, "strides")), tuple(_pair(op, "dilations")), zero_fill is not None)
        with ir.InsertionPoint(op), op.location:
            if channels == 1 and conv.out_shape[3] == 1:
                _LaneEmitter(conv).emit()
            else:
                _Emitter(conv, self.accumulators, self.max_pixels).emit()
        op.erase()
        if zero_fill is not None:
            zero_fill.erase()

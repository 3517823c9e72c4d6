"""xhlo-lower-small-gemms: BLAS-bound contractions with few rows become register-blocked vector loops.

A BLAS call packs its operands into cache-sized panels before multiplying,
which a large product amortizes and a product of few rows does not: an LSTM
step's ``[16 x 384] x [384 x 1024]`` spends more time in OpenBLAS re-packing
the (loop-invariant) weight and synchronizing its two threads than in its
kernel. For a contraction tagged ``xhlo.blas`` (on buffers) whose result has
at most ``max-rows`` rows per matrix, this pass emits the product itself:

* the columns are cut into tiles of one or more SIMD vectors; the tile loop is
  marked ``xhlo.parallel_loop`` (its tiles write disjoint columns), so
  ``xhlo-parallelize-loops`` spreads the tiles over the cores, or, for a batch
  of at least ``parallel-batch`` matrices, the outermost batch loop is (one
  dispatch to the pool instead of one per matrix);
* per tile, blocks of rows keep their ``rows x vectors`` partial sums in
  vector registers for the whole reduction (``accumulators`` of them): each
  step loads one row of the rhs tile once, broadcasts one lhs element per row
  and issues one fused multiply-add per accumulator; nothing is packed or copied.

The operands are read in place through the matrix views ``xhlo-gemm-to-blas``
uses: the lhs with any strides (one element at a time), the rhs and the result
with contiguous rows. A +0.0 fill of the result before the contraction is
dropped (the sums start at zero; otherwise they start from the result), and a
folded scale (``xhlo.blas_alpha``) of such a product multiplies the sums
before they are stored. Products the kernel does not take are left to
``xhlo-gemm-to-blas``: a transposed rhs, columns not a multiple of the vector
width, element types other than f32/f64, an rhs over ``max-rhs-bytes`` read
in tiles narrower than ``streamed-tile-bytes`` (it streams from memory a cache
line or two per row and step, where BLAS's packed panels stream whole lines),
and several row blocks over an rhs panel larger than ``l1-bytes`` (each block
would read it from L2 again). A large rhs read in wide tiles, by at most 8
rows on AVX-512 (a matrix-vector product, an LLM's decoding step), streams
well: 1 x 4096 x 4096 f32 in 1.8 ms against OpenBLAS's 4.4 (XLA 1.8-2.1).
"""

from __future__ import annotations

import dataclasses

from xhlo import host
from xhlo._mlir import arith, ir, memref, scf, vector

from .base import ModulePass, walk_ops
from .gemm_to_blas import Matrix, batch_offset, index_constant, matrix_plan, nest, zero_fill_before
from .prepare_gemms import BLAS_FLOATS, BLAS_TAG, blas_alpha
from .vectorize import PARALLEL_LOOP

_DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset()


@dataclasses.dataclass(frozen=True)
class _Views:
    """2-D memrefs of one product: lhs (rows x inner, or inner x rows when
    transposed), rhs (inner x cols) and result (rows x cols)."""

    lhs: ir.Value
    rhs: ir.Value
    out: ir.Value
    lhs_transposed: bool


def vector_splat(vector_type: ir.VectorType, value: float) -> ir.Value:
    """A constant vector of ``value`` in every lane (integer or float lanes)."""
    element = vector_type.element_type
    attr = ir.IntegerAttr.get(element, int(value)) if isinstance(element, ir.IntegerType) \
        else ir.FloatAttr.get(element, value)
    return arith.constant(vector_type, ir.DenseElementsAttr.get_splat(vector_type, attr))


def matrix_view(mat: Matrix, batch_index: list[ir.Value]) -> ir.Value:
    """``mat`` of one batch element as a 2-D memref (major x minor) on the same buffer."""
    source = mat.value
    source_type = ir.MemRefType(source.type)
    offset = memref.ExtractStridedMetadataOp(source).results[1]
    if (step := batch_offset(mat, batch_index)) is not None:
        offset = arith.addi(offset, step)
    sizes = [mat.major.size, mat.minor.size]
    strides = [mat.major.stride, mat.minor.stride if mat.minor.size > 1 else 1]
    layout = ir.StridedLayoutAttr.get(_DYNAMIC, strides)
    view_type = ir.MemRefType.get(sizes, source_type.element_type, layout, source_type.memory_space)
    return memref.ReinterpretCastOp(view_type, source, [offset], [], [], [_DYNAMIC], sizes, strides).result


@dataclasses.dataclass(frozen=True)
class _Kernel:
    """The loops of one product: ``rows x cols += lhs * rhs`` over ``inner``."""

    rows: int
    cols: int
    inner: int
    width: int  # lanes of one vector
    tile_vectors: int  # vectors per column tile
    block_rows: int  # rows whose sums one k-loop keeps in registers
    element: ir.Type
    zero_start: bool  # the result held +0.0: start the sums at zero
    scale: float  # multiplies the product (xhlo.blas_alpha)

    def emit(self, views: _Views, parallel: bool) -> None:
        tile = self.width * self.tile_vectors
        loop = scf.ForOp(index_constant(0), index_constant(self.cols), index_constant(tile))
        if parallel:
            loop.operation.attributes[PARALLEL_LOOP] = ir.UnitAttr.get()
        with ir.InsertionPoint(loop.body):
            for first in range(0, self.rows, self.block_rows):
                self._block(views, loop.induction_variable, first, min(self.block_rows, self.rows - first))
            scf.yield_([])

    def _block(self, views: _Views, col: ir.Value, first: int, rows: int) -> None:
        vector_type = ir.VectorType.get([self.width], self.element)
        cols = [col if j == 0 else arith.addi(col, index_constant(j * self.width)) for j in range(self.tile_vectors)]
        row_index = [index_constant(first + i) for i in range(rows)]
        if self.zero_start:
            start = [vector_splat(vector_type, 0.0)] * (rows * len(cols))
        else:
            start = [vector.load(vector_type, views.out, [r, c]) for r in row_index for c in cols]
        loop = scf.ForOp(index_constant(0), index_constant(self.inner), index_constant(1), start)
        with ir.InsertionPoint(loop.body):
            k = loop.induction_variable
            rhs = [vector.load(vector_type, views.rhs, [k, c]) for c in cols]
            sums = []
            for i, r in enumerate(row_index):
                at = [k, r] if views.lhs_transposed else [r, k]
                lhs = vector.broadcast(vector_type, memref.load(views.lhs, at))
                for j, b in enumerate(rhs):
                    sums.append(vector.fma(lhs, b, loop.inner_iter_args[i * len(rhs) + j]))
            scf.yield_(sums)
        alpha = vector_splat(vector_type, self.scale) if self.scale != 1.0 else None
        for value, (r, c) in zip(loop.results, ((r, c) for r in row_index for c in cols)):
            vector.store(value if alpha is None else arith.mulf(value, alpha), views.out, [r, c])


@dataclasses.dataclass(frozen=True)
class LowerSmallGemms(ModulePass):
    """Contractions tagged xhlo.blas with few rows -> register-blocked vector loops."""

    NAME = "xhlo-lower-small-gemms"
    max_rows: int = 32  # rows per matrix up to which the loops beat a BLAS call
    vector_bits: int = 512  # SIMD register width
    # vectors holding partial sums: 16 of AVX-512's 32; 6 (12 ymm) on AVX2, where 16 spilled
    # ([16 x 384] x [384 x 1024] on one Zen 3 core: 390-420 -> 250-340 us)
    accumulators: int = min(16, host.wide_vector_registers() * 3 // 4)
    max_rhs_bytes: int = 4 << 20  # a larger rhs is read from memory, in tiles of its rows
    # the narrowest tiles of a larger rhs worth streaming (bytes of a row per step). 2 Zen 5 cores,
    # 4096 x 4096 f32: 1-4 rows (16-4 vectors, 1 KiB-256 bytes) 1.8-2.2 ms against sgemm's 4.4-5.0;
    # 8 rows (2 vectors) 4.8 against 4.8 (8 x 2048 x 8192: 3.8 against 4.9); 16 rows (1 vector)
    # 5.7 against 5.2 (16 x 1024 x 8192: 2.6 against 3.9)
    streamed_tile_bytes: int = 128
    l1_bytes: int = 32 << 10  # data cache per core
    parallel_batch: int = 4  # from this many matrices the pool takes whole matrices, not column tiles

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "linalg.contract"):
            if BLAS_TAG in op.attributes and all(isinstance(v.type, ir.MemRefType) for v in op.operands):
                self._rewrite(op)

    def _kernel(self, op: ir.Operation, lhs: Matrix, rhs: Matrix, out: Matrix, zero_start: bool) -> _Kernel | None:
        element = ir.MemRefType(op.operands[2].type).element_type
        if str(element) not in BLAS_FLOATS or any(ir.MemRefType(v.type).element_type != element for v in op.operands):
            return None
        bits = ir.FloatType(element).width
        width = self.vector_bits // bits
        rows, cols = out.major.size, out.minor.size
        if rhs.transposed or rows > self.max_rows or cols % width:
            return None
        # rows x vectors sums: a row block as wide as the registers allow
        tile_vectors = 1
        while tile_vectors * 2 * rows <= self.accumulators and cols % (tile_vectors * 2 * width) == 0:
            tile_vectors *= 2
        block_rows = max(1, min(rows, self.accumulators // tile_vectors))
        inner = lhs.major.size if lhs.transposed else lhs.minor.size
        if inner * cols * bits // 8 > self.max_rhs_bytes and tile_vectors * self.vector_bits // 8 < self.streamed_tile_bytes:
            return None
        if rows > block_rows and inner * tile_vectors * self.vector_bits // 8 > self.l1_bytes:
            return None
        scale = blas_alpha(op)
        if not zero_start and scale != 1.0:
            return None  # alpha must not scale what the result held: xhlo-gemm-to-blas scales after
        return _Kernel(rows, cols, inner, width, tile_vectors, block_rows, element, zero_start, scale)

    def _rewrite(self, op: ir.Operation) -> None:
        planned = matrix_plan(op)
        if planned is None:
            return
        _, matrices, batch_sizes = planned
        zero_fill = zero_fill_before(op)
        kernel = self._kernel(op, *matrices, zero_start=zero_fill is not None)
        if kernel is None:
            return
        lhs, rhs, out = matrices
        # Several matrices: one dispatch of whole matrices to the pool, not one per matrix.
        batch_parallel = bool(batch_sizes) and batch_sizes[0] >= self.parallel_batch
        with ir.InsertionPoint(op), op.location:
            def emit(batch_index: list[ir.Value]) -> None:
                views = _Views(*(matrix_view(mat, batch_index) for mat in (lhs, rhs, out)), lhs.transposed)
                kernel.emit(views, parallel=not batch_parallel)

            outer = nest(batch_sizes, [], emit)
        if batch_parallel:
            outer.operation.attributes[PARALLEL_LOOP] = ir.UnitAttr.get()
        op.erase()
        if zero_fill is not None:
            zero_fill.erase()

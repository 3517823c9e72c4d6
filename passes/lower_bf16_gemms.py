"""xhlo-lower-bf16-gemms: BLAS-bound products of bf16 matrices run on AVX512-BF16's dot instruction.

``vdpbf16ps`` (``x86.avx512.dot``) adds the products of 16 pairs of bf16 values
to 16 f32 sums: twice the multiply-adds of an f32 FMA per instruction, the rate
XLA:CPU's bf16 products run at. The wheel's OpenBLAS has no ``sbgemm``, so
without this pass a bf16 product is two conversions to f32 and ``sgemm``
(``xhlo-bf16-gemm-operands`` decides, at the tensor level, which products read
their bf16 data instead). For a contraction tagged ``xhlo.blas`` with bf16
inputs and an f32 result, per batch element:

* the rhs is packed once into panels of 64, 32 or 16 columns (the first of
  ``blocks`` whose vectors divide the columns), each row pair interleaved the
  way the instruction reads it: ``packed[panel][k / 2][32 j + 2 c + k % 2]``
  for column ``16 j + c``. Stored inner x cols, two rows of 16 columns make one
  vector of 16 pairs (one shuffle); stored cols x inner (``x @ w.T``, a
  transposed rhs, in blocks of 32 inner elements), each column's 16 pairs are
  one vector and a 16 x 16 transpose of 32-bit lanes (64 shuffles) turns 16
  of them into 16 vectors of 16 columns' pairs;
* a transposed lhs (stored inner x rows, ``x.T @ g``, in blocks of 16 rows)
  has its row pairs interleaved the same way into a copy, ``[k / 2][2 row + k % 2]``;
* one parallel iteration (``xhlo-parallelize-loops`` spreads them over the
  cores) per chunk of ``chunk-rows`` rows and panel, panels fastest, so a
  thread's chunk of the lhs stays in its cache while it sweeps the panels;
  per block of rows, the ``rows x vectors`` sums stay in registers for the
  whole reduction: each step loads the panel's vectors for one row pair,
  broadcasts one lhs pair (32 bits) per row, read in place (or from its copy), and issues one dot
  per sum. When the sums start at zero, the last block starts early instead of
  a smaller kernel taking the rows left over (some rows are stored twice, with
  the same sums, by the same iteration), so LLVM compiles one kernel.

As the instruction does, the products treat bf16 subnormals as zero and flush
subnormal f32 sums to zero (XLA:CPU's bf16 products run at its rate). A +0.0 fill of the
result before the product is dropped; a folded scale (``xhlo.blas_alpha``)
multiplies the sums before they are stored. Products whose operands no such
view describes are left alone: ``convert-linalg-to-loops`` still computes them.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import arith, ir, memref, scf, vector

from .base import ModulePass, walk_ops
from .gemm_to_blas import Matrix, index_constant, matrix_plan, nest, zero_fill_before
from .lower_small_gemms import matrix_view, vector_splat
from .prepare_gemms import BLAS_TAG, blas_alpha
from .vectorize import PARALLEL_LOOP

LANES = 16  # f32 sums per 512-bit vector; each takes a pair of bf16 products
DOT = "x86.avx512.dot"


def _is_bf16_product(op: ir.Operation) -> bool:
    """A tagged contraction of bf16 buffers into an f32 one (what this pass multiplies)."""
    if BLAS_TAG not in op.attributes or not all(isinstance(v.type, ir.MemRefType) for v in op.operands):
        return False
    return [str(ir.MemRefType(v.type).element_type) for v in op.operands] == ["bf16", "bf16", "f32"]


_INTERLEAVE = [i for c in range(LANES) for i in (c, c + LANES)]  # two rows of 16 -> 16 pairs


def _interleave_rows(src: ir.Value, k2: ir.Value, col: ir.Value, dst: ir.Value, at: list[ir.Value]) -> None:
    """``dst[at : at + 32]`` = 16 columns of rows ``2 k2`` and ``2 k2 + 1`` of ``src``, pairwise."""
    half = ir.VectorType.get([LANES], ir.BF16Type.get())
    k = arith.muli(k2, index_constant(2))
    even = vector.load(half, src, [k, col])
    odd = vector.load(half, src, [arith.addi(k, index_constant(1)), col])
    vector.store(vector.shuffle(even, odd, _INTERLEAVE), dst, at)


def _transposed(rows: list[ir.Value]) -> list[ir.Value]:
    """16 vectors of 16 32-bit lanes transposed: swaps of off-diagonal blocks of 8, 4, 2
    and 1 lanes, two shuffles (``vpermt2d``) per pair of rows and step."""
    for b in (8, 4, 2, 1):
        low = [c if not c & b else LANES + c - b for c in range(LANES)]
        high = [c + b if not c & b else LANES + c for c in range(LANES)]
        swapped = list(rows)
        for i in (i for i in range(LANES) if not i & b):
            swapped[i] = vector.shuffle(rows[i], rows[i + b], low)
            swapped[i + b] = vector.shuffle(rows[i], rows[i + b], high)
        rows = swapped
    return rows


def _pair_broadcast(pair: ir.Value) -> ir.Value:
    """A pair of bf16 values in every 32-bit lane of a 512-bit vector (one ``vbroadcastss``)."""
    return vector.shuffle(pair, pair, [0, 1] * LANES)


def _dot(acc: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    return ir.Operation.create(DOT, results=[acc.type], operands=[acc, a, b]).result


@dataclasses.dataclass(frozen=True)
class _Kernel:
    """``rows x cols += lhs * rhs`` over ``inner`` (even), ``cols`` a multiple of 16."""

    rows: int
    cols: int
    inner: int
    panel_vectors: int  # 16-column vectors per panel
    block_rows: int
    chunk_rows: int  # rows of the lhs a thread keeps in cache while it sweeps panels
    zero_start: bool
    scale: float
    lhs_transposed: bool  # stored inner x rows: its row pairs are interleaved into a copy first
    rhs_transposed: bool  # stored cols x inner: 16 x 16 blocks of pairs transposed into the panels

    @property
    def panel_cols(self) -> int:
        return LANES * self.panel_vectors

    @property
    def panels(self) -> int:
        return self.cols // self.panel_cols

    def packed_types(self) -> tuple[ir.MemRefType, ir.MemRefType | None]:
        """The rhs's panels and, for a transposed lhs, its rows' pairs ``[k / 2][2 row + k % 2]``."""
        bf16 = ir.BF16Type.get()
        rhs = ir.MemRefType.get([self.panels, self.inner // 2, 2 * self.panel_cols], bf16)
        return rhs, ir.MemRefType.get([self.inner // 2, 2 * self.rows], bf16) if self.lhs_transposed else None

    def pack(self, rhs: ir.Value, packed: ir.Value) -> None:
        """``packed[p][k2][32 j + 2 c + h] = rhs[2 k2 + h][p W + 16 j + c]`` (W: the panel's columns)."""
        loop = _parallel_for(self.panels)
        with ir.InsertionPoint(loop.body):
            panel = loop.induction_variable
            first_col = arith.muli(panel, index_constant(self.panel_cols))
            if self.rhs_transposed:
                self._pack_transposed(rhs, packed, panel, first_col)
            else:
                pairs = _for(self.inner // 2)
                with ir.InsertionPoint(pairs.body):
                    for j in range(self.panel_vectors):
                        col = arith.addi(first_col, index_constant(j * LANES))
                        at = [panel, pairs.induction_variable, index_constant(2 * LANES * j)]
                        _interleave_rows(rhs, pairs.induction_variable, col, packed, at)
                    scf.yield_([])
            scf.yield_([])

    def _pack_transposed(self, rhs: ir.Value, packed: ir.Value, panel: ir.Value, first_col: ir.Value) -> None:
        """Blocks of 16 columns (rows of ``rhs``) by 16 pairs: each column's pairs are one
        contiguous vector of ``rhs``, transposed so that each pair's 16 columns are one."""
        i32x16 = ir.VectorType.get([LANES], ir.IntegerType.get_signless(32))
        pairs_type = ir.VectorType.get([2 * LANES], ir.BF16Type.get())
        vectors = _for(self.panel_vectors)
        with ir.InsertionPoint(vectors.body):
            j = vectors.induction_variable
            col = arith.addi(first_col, arith.muli(j, index_constant(LANES)))
            blocks = _for(self.inner // (2 * LANES))
            with ir.InsertionPoint(blocks.body):
                k = arith.muli(blocks.induction_variable, index_constant(2 * LANES))
                columns = [vector.bitcast(i32x16, vector.load(pairs_type, rhs, [arith.addi(col, index_constant(c)), k]))
                           for c in range(LANES)]
                first_pair = arith.muli(blocks.induction_variable, index_constant(LANES))
                at = arith.muli(j, index_constant(2 * LANES))
                for r, pairs in enumerate(_transposed(columns)):
                    k2 = arith.addi(first_pair, index_constant(r))
                    vector.store(vector.bitcast(pairs_type, pairs), packed, [panel, k2, at])
                scf.yield_([])
            scf.yield_([])

    def pack_lhs(self, lhs: ir.Value, packed: ir.Value) -> None:
        """A transposed lhs (inner x rows): ``packed[k2][2 row + h] = lhs[2 k2 + h][row]``."""
        loop = _parallel_for(self.inner // 2)
        with ir.InsertionPoint(loop.body):
            k2 = loop.induction_variable
            blocks = _for(self.rows // LANES)
            with ir.InsertionPoint(blocks.body):
                row = arith.muli(blocks.induction_variable, index_constant(LANES))
                _interleave_rows(lhs, k2, row, packed, [k2, arith.muli(row, index_constant(2))])
                scf.yield_([])
            scf.yield_([])

    def multiply(self, lhs: ir.Value, packed: ir.Value, out: ir.Value) -> None:
        """Chunks of rows times panels, one (chunk, panel) pair per parallel iteration, panels
        fastest: a thread's consecutive iterations reuse its chunk of the lhs from cache."""
        if self.zero_start and self.rows > self.block_rows:
            # no kernel for the rows left over: the last block of the last chunk starts early
            # and stores some rows' sums again (the same values), so LLVM compiles one kernel
            self._chunks(lhs, packed, out, max(1, self.rows // self.chunk_rows), self.rows, overlap=True)
            return
        whole = self.rows - self.rows % self.block_rows
        if whole:
            self._chunks(lhs, packed, out, -(-whole // self.chunk_rows), whole, overlap=False)
        if self.rows % self.block_rows:
            loop = _parallel_for(self.panels)
            with ir.InsertionPoint(loop.body):
                self._block(lhs, packed, out, loop.induction_variable, index_constant(whole),
                            self.rows % self.block_rows)
                scf.yield_([])

    def _chunks(self, lhs, packed, out, chunks: int, rows: int, overlap: bool) -> None:
        """Blocks of rows ``[0, rows)``; the last chunk ends at ``rows``."""
        loop = _parallel_for(chunks * self.panels)
        with ir.InsertionPoint(loop.body):
            chunk = arith.divui(loop.induction_variable, index_constant(self.panels))
            panel = arith.remui(loop.induction_variable, index_constant(self.panels))
            first = arith.muli(chunk, index_constant(self.chunk_rows))
            is_last = arith.cmpi(arith.CmpIPredicate.eq, chunk, index_constant(chunks - 1))
            end = arith.select(is_last, index_constant(rows), arith.addi(first, index_constant(self.chunk_rows)))
            blocks = scf.ForOp(first, end, index_constant(self.block_rows))
            with ir.InsertionPoint(blocks.body):
                start = blocks.induction_variable
                if overlap:
                    start = arith.minui(start, index_constant(rows - self.block_rows))
                self._block(lhs, packed, out, panel, start, self.block_rows)
                scf.yield_([])
            scf.yield_([])

    def _block(self, lhs, packed, out, panel, first_row, rows: int) -> None:
        sums_type = ir.VectorType.get([LANES], ir.F32Type.get())
        pair_type = ir.VectorType.get([2 * LANES], ir.BF16Type.get())
        row_index = [arith.addi(first_row, index_constant(i)) if i else first_row for i in range(rows)]
        first_col = arith.muli(panel, index_constant(self.panel_cols))
        cols = [arith.addi(first_col, index_constant(j * LANES)) if j else first_col for j in range(self.panel_vectors)]
        if self.zero_start:
            start = [vector_splat(sums_type, 0.0)] * (rows * len(cols))
        else:
            start = [vector.load(sums_type, out, [r, c]) for r in row_index for c in cols]
        loop = scf.ForOp(index_constant(0), index_constant(self.inner // 2), index_constant(1), start)
        with ir.InsertionPoint(loop.body):
            k2 = loop.induction_variable
            k = None if self.lhs_transposed else arith.muli(k2, index_constant(2))
            rhs = [vector.load(pair_type, packed, [panel, k2, index_constant(2 * LANES * j)])
                   for j in range(self.panel_vectors)]
            sums = []
            pair_of = ir.VectorType.get([2], ir.BF16Type.get())
            for i, row in enumerate(row_index):
                at = [k2, arith.muli(row, index_constant(2))] if k is None else [row, k]
                a = _pair_broadcast(vector.load(pair_of, lhs, at))
                sums += [_dot(loop.inner_iter_args[i * len(rhs) + j], a, b) for j, b in enumerate(rhs)]
            scf.yield_(sums)
        alpha = vector_splat(sums_type, self.scale) if self.scale != 1.0 else None
        for value, (r, c) in zip(loop.results, ((r, c) for r in row_index for c in cols)):
            vector.store(value if alpha is None else arith.mulf(value, alpha), out, [r, c])


def _for(trips: int) -> scf.ForOp:
    return scf.ForOp(index_constant(0), index_constant(trips), index_constant(1))


def _parallel_for(trips: int) -> scf.ForOp:
    loop = _for(trips)
    loop.operation.attributes[PARALLEL_LOOP] = ir.UnitAttr.get()
    return loop


def kernel_takes(rows: int, cols: int, inner: int, lhs_transposed: bool, rhs_transposed: bool) -> bool:
    """Shapes the kernel multiplies: whole 16-column vectors and row pairs; a transposed lhs
    in blocks of 16 rows, a transposed rhs in blocks of 16 pairs."""
    if rows <= 0 or cols <= 0 or cols % LANES or inner <= 0 or inner % 2:
        return False
    return not (lhs_transposed and rows % LANES) and not (rhs_transposed and inner % (2 * LANES))


@dataclasses.dataclass(frozen=True)
class LowerBf16Gemms(ModulePass):
    """Tagged bf16 x bf16 -> f32 contractions -> packed AVX512-BF16 dot loops."""

    NAME = "xhlo-lower-bf16-gemms"
    # rows x 16-column vectors whose sums stay in registers (24 of AVX-512's 32 vectors): the
    # first whose vectors divide the columns. 1024^3 on 2 Zen 5 cores: 6x4 2.3-2.5 ms, 12x2 2.4-2.5
    # (4096 x 1024 x 256: 2.6 against 4.7), 7x4 3.1, 4x4 4.6
    blocks: tuple[str, ...] = ("6x4", "12x2", "12x1")
    chunk_rows: int = 96  # a multiple of every block's rows; 96 x 1024 bf16: 192 KiB of L2

    def run(self, module: ir.Operation) -> None:
        ops = [op for op in walk_ops(module, "linalg.contract") if _is_bf16_product(op)]
        if ops:
            module.context.dialects["x86"]  # loads the dialect the dot ops belong to
        for op in ops:
            self._rewrite(op)

    def _kernel(self, op: ir.Operation, lhs: Matrix, rhs: Matrix, out: Matrix, zero_start: bool) -> _Kernel | None:
        rows, cols = out.major.size, out.minor.size
        inner = lhs.major.size if lhs.transposed else lhs.minor.size
        if not kernel_takes(rows, cols, inner, lhs.transposed, rhs.transposed):
            return None
        scale = blas_alpha(op)
        if not zero_start and scale != 1.0:
            return None  # alpha must not scale what the result held
        shapes = [tuple(int(n) for n in block.split("x")) for block in self.blocks]
        fitting = [(r, v) for r, v in shapes if cols % (LANES * v) == 0]
        if not fitting:
            return None
        block_rows, panel_vectors = fitting[0]
        return _Kernel(rows, cols, inner, panel_vectors, block_rows, self.chunk_rows, zero_start, scale,
                       lhs.transposed, rhs.transposed)

    def _rewrite(self, op: ir.Operation) -> None:
        planned = matrix_plan(op)
        if planned is None:
            return
        _, (lhs, rhs, out), batch_sizes = planned
        zero_fill = zero_fill_before(op)
        kernel = self._kernel(op, lhs, rhs, out, zero_start=zero_fill is not None)
        if kernel is None:
            return
        with ir.InsertionPoint(op), op.location:
            packed = [memref.alloc(t, [], [], alignment=64) for t in kernel.packed_types() if t is not None]

            def emit(batch_index: list[ir.Value]) -> None:
                kernel.pack(matrix_view(rhs, batch_index), packed[0])
                lhs_view = matrix_view(lhs, batch_index)
                if kernel.lhs_transposed:
                    kernel.pack_lhs(lhs_view, packed[1])
                    lhs_view = packed[1]
                kernel.multiply(lhs_view, packed[0], matrix_view(out, batch_index))

            nest(batch_sizes, [], emit)
            for buffer in packed:
                memref.dealloc(buffer)
        op.erase()
        if zero_fill is not None:
            zero_fill.erase()

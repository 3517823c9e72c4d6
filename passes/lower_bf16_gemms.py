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

A product of at most ``unpacked-rows`` rows (an LLM's decoding step) packs
nothing: each row uses each rhs element once, so packing would write and read
the rhs again. One parallel iteration per panel (as wide as the registers
allow: 16 vectors for one row) reads the rhs where it lies, each step loading
and interleaving its rows' groups as the packing would (4096 x 4096 bf16
weights, 2 Zen 5 cores: one row 3.1-3.5 -> 0.6-1.2 ms, XLA 21; four rows
3.6-3.9 -> 1.3-1.6 ms, XLA 2.0-2.5).

The kernel is written for a ``DotFormat`` (the elements per 32-bit lane, the
instruction, the sums' correction): ``xhlo-lower-int8-gemms`` runs it on
groups of four bytes and ``vpdpbusd``.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import arith, ir, memref, scf, vector

from .base import ModulePass, walk_ops
from .gemm_to_blas import Matrix, index_constant, matrix_plan, nest, zero_fill_before
from .lower_small_gemms import matrix_view, vector_splat
from .prepare_gemms import BLAS_TAG, blas_alpha
from .vectorize import PARALLEL_LOOP

LANES = 16  # 32-bit sums per 512-bit vector; each takes a group of narrow products
DOT = "x86.avx512.dot"


@dataclasses.dataclass(frozen=True)
class DotFormat:
    """What one dot instruction multiplies: ``group`` narrow elements per 32-bit lane of
    each operand, their products added to 16 sums (bf16 pairs into f32 here)."""

    element: str = "bf16"
    group: int = 2
    sums: str = "f32"
    corrected: bool = False  # the sums start from a per-column correction (``correction``)

    def element_type(self) -> ir.Type:
        return ir.Type.parse(self.element)

    def sums_type(self) -> ir.VectorType:
        return ir.VectorType.get([LANES], ir.Type.parse(self.sums))

    def operand_type(self) -> ir.VectorType:
        return ir.VectorType.get([self.group * LANES], self.element_type())

    def dot(self, acc: ir.Value, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
        """``acc`` plus the products of ``lhs`` (one row's group in every lane) and ``rhs``."""
        return ir.Operation.create(DOT, results=[acc.type], operands=[acc, lhs, rhs]).result

    def unsigned(self, groups: ir.Value) -> ir.Value:
        """Groups as the instruction's unsigned operand reads them (unchanged here)."""
        return groups

    def correction(self, other_sums: ir.Value) -> ir.Value:
        """What corrects the sums for the operand read unsigned, from the sums of the other
        operand along the inner dimension (corrected formats only)."""
        raise NotImplementedError


BF16 = DotFormat()


def _is_product_of(op: ir.Operation, fmt: DotFormat) -> bool:
    """A tagged contraction of two ``fmt.element`` buffers into a ``fmt.sums`` one."""
    if BLAS_TAG not in op.attributes or not all(isinstance(v.type, ir.MemRefType) for v in op.operands):
        return False
    return [str(ir.MemRefType(v.type).element_type) for v in op.operands] == [fmt.element, fmt.element, fmt.sums]


def _interleave(rows: list[ir.Value]) -> ir.Value:
    """16 columns of 2 or 4 rows as one vector of 16 groups: ``[c][h] = rows[h][c]``."""
    pairs = [vector.shuffle(rows[h], rows[h + 1], _INTERLEAVE) for h in range(0, len(rows), 2)]
    if len(pairs) == 1:
        return pairs[0]
    return vector.shuffle(pairs[0], pairs[1], [i for c in range(LANES) for i in (2 * c, 2 * c + 1,
                                                                                 2 * LANES + 2 * c, 2 * LANES + 2 * c + 1)])


_INTERLEAVE = [i for c in range(LANES) for i in (c, c + LANES)]  # two rows of 16 -> 16 pairs


def _grouped_rows(fmt: DotFormat, src: ir.Value, kg: ir.Value, col: ir.Value) -> ir.Value:
    """16 columns from ``col`` of rows ``group kg + h`` of ``src``, as one vector of 16 groups."""
    row_type = ir.VectorType.get([LANES], fmt.element_type())
    k = arith.muli(kg, index_constant(fmt.group))
    return _interleave([vector.load(row_type, src, [arith.addi(k, index_constant(h)) if h else k, col])
                        for h in range(fmt.group)])


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


def _group_broadcast(group: ir.Value) -> ir.Value:
    """A group of narrow values in every 32-bit lane of a 512-bit vector (one ``vbroadcastss``)."""
    size = ir.VectorType(group.type).shape[0]
    return vector.shuffle(group, group, list(range(size)) * LANES)


@dataclasses.dataclass(frozen=True)
class _Kernel:
    """``rows x cols += lhs * rhs`` over ``inner`` (whole groups), ``cols`` a multiple of 16."""

    fmt: DotFormat
    rows: int
    cols: int
    inner: int
    panel_vectors: int  # 16-column vectors per panel
    block_rows: int
    chunk_rows: int  # rows of the lhs a thread keeps in cache while it sweeps panels
    zero_start: bool
    scale: float
    lhs_transposed: bool  # stored inner x rows: its row groups are interleaved into a copy first
    rhs_transposed: bool  # stored cols x inner: 16 x 16 blocks of groups transposed into the panels
    packed: bool = True  # False: few rows read the rhs in place, each group interleaved as it is used

    @property
    def panel_cols(self) -> int:
        return LANES * self.panel_vectors

    @property
    def panels(self) -> int:
        return self.cols // self.panel_cols

    @property
    def groups(self) -> int:
        return self.inner // self.fmt.group

    def packed_types(self) -> list[ir.MemRefType]:
        """The rhs's panels; for a transposed lhs, its rows' groups ``[k / g][g row + k % g]``;
        for a corrected format, each panel's start of the sums."""
        if not self.packed:
            return []
        element, g = self.fmt.element_type(), self.fmt.group
        types = [ir.MemRefType.get([self.panels, self.groups, g * self.panel_cols], element)]
        if self.lhs_transposed:
            types.append(ir.MemRefType.get([self.groups, g * self.rows], element))
        if self.fmt.corrected:
            types.append(ir.MemRefType.get([self.panels, self.panel_cols], ir.Type.parse(self.fmt.sums)))
        return types

    def pack(self, rhs: ir.Value, packed: ir.Value, starts: ir.Value | None) -> None:
        """``packed[p][kg][16 g j + g c + h] = rhs[g kg + h][p W + 16 j + c]`` (W: the panel's
        columns, g: the group); a corrected format's start of each panel's sums after it."""
        loop = _parallel_for(self.panels)
        with ir.InsertionPoint(loop.body):
            panel = loop.induction_variable
            first_col = arith.muli(panel, index_constant(self.panel_cols))
            if self.rhs_transposed:
                self._pack_transposed(rhs, packed, panel, first_col)
            else:
                groups = _for(self.groups)
                with ir.InsertionPoint(groups.body):
                    for j in range(self.panel_vectors):
                        col = arith.addi(first_col, index_constant(j * LANES))
                        at = [panel, groups.induction_variable, index_constant(self.fmt.group * LANES * j)]
                        vector.store(_grouped_rows(self.fmt, rhs, groups.induction_variable, col), packed, at)
                    scf.yield_([])
            if starts is not None:
                self._starts(packed, starts, panel)
            scf.yield_([])

    def _starts(self, packed: ir.Value, starts: ir.Value, panel: ir.Value) -> None:
        """``starts[panel][16 j + c]``: the format's correction of column ``16 j + c``'s sums,
        from the dot of a vector of ones with the packed panel (its column sums)."""
        ones = vector_splat(self.fmt.operand_type(), 1)
        loop = scf.ForOp(index_constant(0), index_constant(self.groups), index_constant(1),
                         [vector_splat(self.fmt.sums_type(), 0)] * self.panel_vectors)
        with ir.InsertionPoint(loop.body):
            width = self.fmt.group * LANES
            scf.yield_([self.fmt.dot(acc, ones, vector.load(self.fmt.operand_type(), packed,
                                                             [panel, loop.induction_variable, index_constant(width * j)]))
                        for j, acc in enumerate(loop.inner_iter_args)])
        for j, column_sums in enumerate(loop.results):
            vector.store(self.fmt.correction(column_sums), starts, [panel, index_constant(LANES * j)])

    def _pack_transposed(self, rhs: ir.Value, packed: ir.Value, panel: ir.Value, first_col: ir.Value) -> None:
        """Blocks of 16 columns (rows of ``rhs``) by 16 groups: each column's groups are one
        contiguous vector of ``rhs``, transposed so that each group's 16 columns are one."""
        i32x16 = ir.VectorType.get([LANES], ir.IntegerType.get_signless(32))
        groups_type = self.fmt.operand_type()
        width = self.fmt.group * LANES
        vectors = _for(self.panel_vectors)
        with ir.InsertionPoint(vectors.body):
            j = vectors.induction_variable
            col = arith.addi(first_col, arith.muli(j, index_constant(LANES)))
            blocks = _for(self.inner // width)
            with ir.InsertionPoint(blocks.body):
                k = arith.muli(blocks.induction_variable, index_constant(width))
                columns = [vector.bitcast(i32x16, vector.load(groups_type, rhs, [arith.addi(col, index_constant(c)), k]))
                           for c in range(LANES)]
                first_group = arith.muli(blocks.induction_variable, index_constant(LANES))
                at = arith.muli(j, index_constant(width))
                for r, groups in enumerate(_transposed(columns)):
                    kg = arith.addi(first_group, index_constant(r))
                    vector.store(vector.bitcast(groups_type, groups), packed, [panel, kg, at])
                scf.yield_([])
            scf.yield_([])

    def pack_lhs(self, lhs: ir.Value, packed: ir.Value) -> None:
        """A transposed lhs (inner x rows): ``packed[kg][g row + h] = lhs[g kg + h][row]``."""
        loop = _parallel_for(self.groups)
        with ir.InsertionPoint(loop.body):
            kg = loop.induction_variable
            blocks = _for(self.rows // LANES)
            with ir.InsertionPoint(blocks.body):
                row = arith.muli(blocks.induction_variable, index_constant(LANES))
                vector.store(_grouped_rows(self.fmt, lhs, kg, row), packed, [kg, arith.muli(row, index_constant(self.fmt.group))])
                scf.yield_([])
            scf.yield_([])

    def multiply(self, lhs: ir.Value, packed: ir.Value, starts: ir.Value | None, out: ir.Value) -> None:
        """Chunks of rows times panels, one (chunk, panel) pair per parallel iteration, panels
        fastest: a thread's consecutive iterations reuse its chunk of the lhs from cache."""
        operands = (lhs, packed, starts, out)
        if not self.packed:  # all rows in one block, one panel per parallel iteration
            loop = _parallel_for(self.panels)
            with ir.InsertionPoint(loop.body):
                self._block(operands, loop.induction_variable, index_constant(0), self.rows)
                scf.yield_([])
            return
        if self.zero_start and self.rows > self.block_rows:
            # no kernel for the rows left over: the last block of the last chunk starts early
            # and stores some rows' sums again (the same values), so LLVM compiles one kernel
            self._chunks(operands, max(1, self.rows // self.chunk_rows), self.rows, overlap=True)
            return
        whole = self.rows - self.rows % self.block_rows
        if whole:
            self._chunks(operands, -(-whole // self.chunk_rows), whole, overlap=False)
        if self.rows % self.block_rows:
            loop = _parallel_for(self.panels)
            with ir.InsertionPoint(loop.body):
                self._block(operands, loop.induction_variable, index_constant(whole), self.rows % self.block_rows)
                scf.yield_([])

    def _chunks(self, operands: tuple, chunks: int, rows: int, overlap: bool) -> None:
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
                self._block(operands, panel, start, self.block_rows)
                scf.yield_([])
            scf.yield_([])

    def _start_sums(self, out, starts, panel, row_index, cols) -> list[ir.Value]:
        """Each sum's start: zero or the result's value, plus the format's correction."""
        sums_type = self.fmt.sums_type()
        if self.zero_start and starts is None:
            return [vector_splat(sums_type, 0)] * (len(row_index) * len(cols))
        loaded = [] if self.zero_start else [vector.load(sums_type, out, [r, c]) for r in row_index for c in cols]
        if starts is None:
            return loaded
        corrections = [vector.load(sums_type, starts, [panel, index_constant(LANES * j)]) for j in range(len(cols))]
        if self.zero_start:
            return corrections * len(row_index)
        return [arith.addi(value, corrections[i % len(cols)]) for i, value in enumerate(loaded)]

    def _block(self, operands: tuple, panel, first_row, rows: int) -> None:
        lhs, packed, starts, out = operands
        g = self.fmt.group
        row_index = [arith.addi(first_row, index_constant(i)) if i else first_row for i in range(rows)]
        first_col = arith.muli(panel, index_constant(self.panel_cols))
        cols = [arith.addi(first_col, index_constant(j * LANES)) if j else first_col for j in range(self.panel_vectors)]
        start = self._start_sums(out, starts, panel, row_index, cols)
        # few rows, rhs read in place: the rhs is the unsigned operand, each row's sum corrects
        flip_rhs = self.fmt.corrected and not self.packed
        if flip_rhs:
            start += [vector_splat(self.fmt.sums_type(), 0)] * rows
        loop = scf.ForOp(index_constant(0), index_constant(self.groups), index_constant(1), start)
        with ir.InsertionPoint(loop.body):
            kg = loop.induction_variable
            k = None if self.lhs_transposed else arith.muli(kg, index_constant(g))
            rhs = [self._rhs_groups(packed, panel, kg, col, j) for j, col in enumerate(cols)]
            if flip_rhs:
                rhs = [self.fmt.unsigned(b) for b in rhs]
            sums, rows_read = [], []
            group_of = ir.VectorType.get([g], self.fmt.element_type())
            for i, row in enumerate(row_index):
                at = [kg, arith.muli(row, index_constant(g))] if k is None else [row, k]
                a = _group_broadcast(vector.load(group_of, lhs, at))
                rows_read.append(a)
                accs = list(loop.inner_iter_args)[i * len(rhs):(i + 1) * len(rhs)]
                if flip_rhs:
                    sums += [self.fmt.dot(acc, b, a) for acc, b in zip(accs, rhs)]
                else:
                    a = self.fmt.unsigned(a)
                    sums += [self.fmt.dot(acc, a, b) for acc, b in zip(accs, rhs)]
            if flip_rhs:
                ones = vector_splat(self.fmt.operand_type(), 1)
                sums += [self.fmt.dot(acc, ones, a) for acc, a in zip(list(loop.inner_iter_args)[len(sums):], rows_read)]
            scf.yield_(sums)
        results = list(loop.results)[:rows * len(cols)]
        if flip_rhs:
            corrections = [self.fmt.correction(v) for v in list(loop.results)[rows * len(cols):]]
            results = [arith.addi(v, corrections[i // len(cols)]) for i, v in enumerate(results)]
        alpha = vector_splat(self.fmt.sums_type(), self.scale) if self.scale != 1.0 else None
        for value, (r, c) in zip(results, ((r, c) for r in row_index for c in cols)):
            vector.store(value if alpha is None else arith.mulf(value, alpha), out, [r, c])

    def _rhs_groups(self, rhs: ir.Value, panel: ir.Value, kg: ir.Value, col: ir.Value, j: int) -> ir.Value:
        """The groups of rows ``g kg ..`` of 16 columns from ``col``: from their panel, or from
        the rhs itself (``g`` row loads interleaved) when it is not packed."""
        if self.packed:
            return vector.load(self.fmt.operand_type(), rhs, [panel, kg, index_constant(self.fmt.group * LANES * j)])
        return _grouped_rows(self.fmt, rhs, kg, col)


def _for(trips: int) -> scf.ForOp:
    return scf.ForOp(index_constant(0), index_constant(trips), index_constant(1))


def _parallel_for(trips: int) -> scf.ForOp:
    loop = _for(trips)
    loop.operation.attributes[PARALLEL_LOOP] = ir.UnitAttr.get()
    return loop


def kernel_takes(rows: int, cols: int, inner: int, lhs_transposed: bool, rhs_transposed: bool,
                 fmt: DotFormat = BF16) -> bool:
    """Shapes the kernel multiplies: whole 16-column vectors and row groups; a transposed lhs
    in blocks of 16 rows, a transposed rhs in blocks of 16 groups."""
    if rows <= 0 or cols <= 0 or cols % LANES or inner <= 0 or inner % fmt.group:
        return False
    return not (lhs_transposed and rows % LANES) and not (rhs_transposed and inner % (fmt.group * LANES))


@dataclasses.dataclass(frozen=True)
class LowerBf16Gemms(ModulePass):
    """Tagged bf16 x bf16 -> f32 contractions -> packed AVX512-BF16 dot loops."""

    NAME = "xhlo-lower-bf16-gemms"
    FORMAT = BF16
    DIALECT = "x86"  # loaded for the dot ops
    # rows x 16-column vectors whose sums stay in registers (24 of AVX-512's 32 vectors): the
    # first whose vectors divide the columns. 1024^3 on 2 Zen 5 cores: 6x4 2.3-2.5 ms, 12x2 2.4-2.5
    # (4096 x 1024 x 256: 2.6 against 4.7), 7x4 3.1, 4x4 4.6
    blocks: tuple[str, ...] = ("6x4", "12x2", "12x1")
    chunk_rows: int = 96  # a multiple of every block's rows; 96 x 1024 bf16: 192 KiB of L2
    # up to this many rows (an LLM's decoding step), the rhs is read in place: packing it would
    # write and read it again for rows that each use it once
    unpacked_rows: int = 4
    unpacked_sums: int = 24  # registers of sums (and row sums) in a block of few rows

    def run(self, module: ir.Operation) -> None:
        ops = [op for op in walk_ops(module, "linalg.contract") if _is_product_of(op, self.FORMAT)]
        if ops:
            module.context.dialects[self.DIALECT]
        for op in ops:
            self._rewrite(op)

    def _kernel(self, op: ir.Operation, lhs: Matrix, rhs: Matrix, out: Matrix, zero_start: bool) -> _Kernel | None:
        rows, cols = out.major.size, out.minor.size
        inner = lhs.major.size if lhs.transposed else lhs.minor.size
        if not kernel_takes(rows, cols, inner, lhs.transposed, rhs.transposed, self.FORMAT):
            return None
        scale = blas_alpha(op)
        if not zero_start and scale != 1.0:
            return None  # alpha must not scale what the result held
        # the widest panel whose sums fit (its rows stream from memory in long runs), if one does
        vectors = min(16, (self.unpacked_sums - rows * self.FORMAT.corrected) // rows)
        if rows <= self.unpacked_rows and vectors > 0 and not lhs.transposed and not rhs.transposed:
            while vectors > 1 and cols % (LANES * vectors):
                vectors -= 1
            return _Kernel(self.FORMAT, rows, cols, inner, vectors, rows, rows, zero_start, scale, False, False,
                           packed=False)
        shapes = [tuple(int(n) for n in block.split("x")) for block in self.blocks]
        fitting = [(r, v) for r, v in shapes if cols % (LANES * v) == 0]
        if not fitting:
            return None
        block_rows, panel_vectors = fitting[0]
        return _Kernel(self.FORMAT, rows, cols, inner, panel_vectors, block_rows, self.chunk_rows, zero_start,
                       scale, lhs.transposed, rhs.transposed)

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
            buffers = [memref.alloc(t, [], [], alignment=64) for t in kernel.packed_types()]
            packed = buffers[0] if kernel.packed else None
            packed_lhs = buffers[1] if kernel.lhs_transposed else None
            starts = buffers[-1] if kernel.packed and self.FORMAT.corrected else None

            def emit(batch_index: list[ir.Value]) -> None:
                rhs_view = matrix_view(rhs, batch_index)
                if kernel.packed:
                    kernel.pack(rhs_view, packed, starts)
                lhs_view = matrix_view(lhs, batch_index)
                if packed_lhs is not None:
                    kernel.pack_lhs(lhs_view, packed_lhs)
                    lhs_view = packed_lhs
                kernel.multiply(lhs_view, packed if kernel.packed else rhs_view, starts, matrix_view(out, batch_index))

            nest(batch_sizes, [], emit)
            for buffer in buffers:
                memref.dealloc(buffer)
        op.erase()
        if zero_fill is not None:
            zero_fill.erase()

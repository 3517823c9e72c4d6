"""xhlo-vectorize: tile linalg ops on tensors to SIMD-wide tiles and vectorize the tiles.

Lowered as they are, linalg ops become scalar loop nests, and the JIT's LLVM
pipeline does not vectorize those loops (a fused multiply-add over 4M floats
runs one float at a time). For every linalg op this pass picks the *vector
loop*: the loop that walks the innermost, contiguous dimension of most of the
op's data. Every other loop is tiled by one, the vector loop by the SIMD width
(a multiple of it for reductions, so several independent accumulators hide the
add latency), and the linalg vectorizer turns each tile into vector ops.

* Reductions along the vector loop keep a vector of partial results folded at
  the end (``tile_reduction_using_for``): that reassociates the reduction,
  which StableHLO allows (the order of ``reduce`` is unspecified); a body
  ``out - x`` (a fused negation) is first written as the sum ``out + (-x)``.
  Reductions whose body is not one recognizable combiner (argmax's pair of selects) are
  vectorized along a parallel loop instead (the tile's one-long reduction loop
  folded away, as a window op's), or left alone.
* Window accesses (``x[oh + kh]``: convolutions, pooling, im2col) are tiled,
  then the tile's unit loops are folded away so the vectorizer sees plain
  slices. Reverses (``-d0``) and mod/floordiv indexing keep scalar loops.
* Gathers whose row index comes from another tensor (embedding lookups) are
  tiled first; the row lookup, the same for the whole tile, is hoisted out of
  the tile's body so the row is read with contiguous vector loads.
* Loops up to four vectors long become one vector; longer ones that no tile
  divides get a masked last tile.
* Loop-invariant code leaves tile loops nested in other tile loops: a fused
  producer's math in a broadcasting consumer runs once per row, not per tile.

The work is done by transform-dialect scripts run with the transform
interpreter, one per op, so an op the vectorizer rejects keeps its scalar
lowering and the rest of the function is still vectorized. Ops tagged
``xhlo.blas`` (matmuls headed for a BLAS call) are left untouched. Vectors of
i1, sub-byte integers and half floats are avoided (bit-packed in memory, or
not legalizable by LLVM). No CSE runs here: merging two ``tensor.empty``
before bufferization makes one-shot bufferization give two loop-carried
tensors one buffer (a merge sort breaks).
"""

from __future__ import annotations

import dataclasses
import math

from xhlo import host
from xhlo._mlir import arith, ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, indexing_maps
from .vector_math import EXPANDED_ONLY_HERE

TARGET = "xhlo.vectorize_target"
# Set on tile loops walking a parallel dimension that every output indexes:
# their iterations write disjoint slices (xhlo-parallelize-loops runs them on threads).
PARALLEL_LOOP = "xhlo.parallel_loop"
_HOIST_FROM = "xhlo.hoist_from"  # inner tile loops, for one transform script's LICM
SHORT_LOOP_VECTORS = 4  # a loop up to this many vectors long becomes one (unrolled) vector
BLAS_TAG = "xhlo.blas"

# Ops the vectorizer turns into vector ops with the same (exact) semantics.
_ALLOWED_BODY_DIALECTS = ("arith.", "math.")
_ALLOWED_BODY_OPS = {"linalg.yield", "linalg.index", "tensor.extract"}
# Their vector forms lower less precisely (or not at all) than the scalar ones; the f32
# forms xhlo-vector-math expands (EXPANDED_ONLY_HERE) are the exception.
_SCALAR_ONLY_MATH = {"math.expm1", "math.log1p", "math.ipowi", "math.fpowi"}
# Ops on f16/bf16 vectors LLVM lowers; the arithmetic itself runs in f32 (xhlo-emulate-small-floats).
_SMALL_FLOAT_SAFE = {"arith.extf", "arith.truncf", "linalg.yield", "tensor.extract", "arith.select"}
# Binary ops tile_reduction_using_for knows the neutral element of.
_COMBINERS = {
    "arith.addf", "arith.mulf", "arith.addi", "arith.muli",
    "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf",
    "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui",
    "arith.andi", "arith.ori", "arith.xori",
}
_VECTOR_CLEANUP_PATTERNS = (
    "linalg.tiling_canonicalization",
    "vector.cast_away_vector_leading_one_dim",
    "vector.drop_unit_dims_with_shape_cast",
    "vector.lower_masked_transfers",
)
# Applied after the others, in a set of their own: in one greedy set with
# cast_away_vector_leading_one_dim they rewrite a transposed transfer beside another
# output's write back and forth without end (memory grows until the process dies).
_TRANSFER_PERMUTATION_PATTERNS = "vector.transfer_permutation_patterns"
_HOIST = """
    %loops = transform.structured.match ops{["scf.for"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loops : !transform.any_op"""


def _cleanup(handle: str, canonicalize: bool) -> str:
    """Apply the vector cleanup patterns (and canonicalization) to every function."""
    patterns = _VECTOR_CLEANUP_PATTERNS + (("canonicalization",) if canonicalize else ())
    body = "".join(f"\n      transform.apply_patterns.{p}" for p in patterns)
    return (f"\n    {handle} = transform.structured.match ops{{[\"func.func\"]}} in %root "
            f": (!transform.any_op) -> !transform.any_op\n"
            f"    transform.apply_patterns to {handle} {{{body}\n    }} : !transform.any_op\n"
            f"    transform.apply_patterns to {handle} {{\n      transform.apply_patterns.{_TRANSFER_PERMUTATION_PATTERNS}"
            f"\n    }} : !transform.any_op")


def _cleanup_and_hoist(loop_depth: int) -> str:
    """Cleanup, a hoist per loop level (loop-invariant reads and writes climb one loop
    each time), cleanup again (folds the shape casts around hoisted values): one
    script, one run of the interpreter. The canonicalization patterns (a pattern set
    built on every use) run in the second cleanup only: in the first they changed
    nothing the second would not."""
    steps = [_cleanup("%funcs0", canonicalize=False)]
    steps += [_HOIST.replace("%loops", f"%loops{i}") for i in range(loop_depth)]
    steps.append(_cleanup("%funcs1", canonicalize=True))
    return "".join(steps).strip()


@dataclasses.dataclass(frozen=True)
class TilePlan:
    """How one linalg.generic is tiled and vectorized."""

    flatten: bool  # collapse an elementwise op to one loop first
    tile_sizes: tuple[int, ...]  # tile_using_for sizes, 0 = not tiled
    reduction_tile: tuple[int, ...] | None  # tile_reduction_using_for sizes
    vector_sizes: tuple[int, ...] | None  # explicit (masked) vector sizes of the tile
    fold_unit_dims: bool = False  # window accesses (d0 + d1): drop the tile's unit loops first
    parallel_dims: tuple[bool, ...] = ()  # loops whose tile loops write disjoint slices
    block_sizes: tuple[int, ...] | None = None  # a transpose's outer square blocks (0 = not blocked)

    def _annotate_parallel_loops(self, sizes: tuple[int, ...] | None = None, name: str = "l") -> list[str]:
        """Mark the tile loops of parallel dimensions (``%<name><k>`` is the k-th tiled dimension
        of ``sizes``, the tile sizes by default)."""
        tiled = [d for d, t in enumerate(sizes or self.tile_sizes) if t]
        return [f'transform.annotate %{name}{k} "{PARALLEL_LOOP}" : !transform.any_op'
                for k, d in enumerate(tiled) if d < len(self.parallel_dims) and self.parallel_dims[d]]

    def tile_script(self, tag: int) -> str:
        """Only the tiling of a plain parallel plan; the tiled op keeps the target tag."""
        loops = sum(1 for t in self.tile_sizes if t)
        names = ", ".join(f"%l{i}" for i in range(loops))
        types = ", ".join(["!transform.any_op"] * (loops + 1))
        lines = [_match_target(tag),
                 (f"%tiled, {names} = transform.structured.tile_using_for %op "
                  f"tile_sizes {list(self.tile_sizes)} : (!transform.any_op) -> ({types})"),
                 *self._annotate_parallel_loops()]
        return transform_sequence("\n    ".join(lines))

    def vectorize_script(self, tag: int) -> str:
        sizes = f" vector_sizes {list(self.vector_sizes)}" if self.vector_sizes else ""
        return transform_sequence(
            f"{_match_target(tag)}\n"
            f"    transform.structured.vectorize %op{sizes} {{vectorize_nd_extract}} : !transform.any_op")

    @property
    def plain_tiling(self) -> bool:
        return not (self.flatten or self.reduction_tile or self.fold_unit_dims or self.block_sizes) \
            and any(self.tile_sizes)

    def script(self, tag: int) -> str:
        """The whole plan for the op tagged ``tag``."""
        lines = [_match_target(tag)]
        handle = "%op"
        if self.block_sizes:  # blocks first, on the thread pool; the tiles within stay serial
            blocked = sum(1 for t in self.block_sizes if t)
            names = ", ".join(f"%b{i}" for i in range(blocked))
            types = ", ".join(["!transform.any_op"] * (blocked + 1))
            lines.append(f"%blocked, {names} = transform.structured.tile_using_for %op "
                         f"tile_sizes {list(self.block_sizes)} : (!transform.any_op) -> ({types})")
            lines.extend(self._annotate_parallel_loops(self.block_sizes, "b"))
            handle = "%blocked"
        if self.flatten:
            lines.append("%flat = transform.structured.flatten_elementwise %op "
                         ": (!transform.any_op) -> !transform.any_op")
            handle = "%flat"
        loops = sum(1 for t in self.tile_sizes if t)
        if loops:
            names = ", ".join(f"%l{i}" for i in range(loops))
            types = ", ".join(["!transform.any_op"] * (loops + 1))
            lines.append(f"%tiled, {names} = transform.structured.tile_using_for {handle} "
                         f"tile_sizes {list(self.tile_sizes)} : (!transform.any_op) -> ({types})")
            if not self.block_sizes:
                lines.extend(self._annotate_parallel_loops())
            handle = "%tiled"
            if self.fold_unit_dims:  # the innermost loop holds just the tile: fold its unit loops
                lines.append(f"transform.apply_patterns to %l{loops - 1} {{\n"
                             "      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices\n"
                             "    } : !transform.any_op")
                lines.append(f"%folded = transform.structured.match ops{{[\"linalg.generic\"]}} in %l{loops - 1} "
                             ": (!transform.any_op) -> !transform.any_op")
                handle = "%folded"
        sizes = f" vector_sizes {list(self.vector_sizes)}" if self.vector_sizes else ""
        if self.reduction_tile:
            lines.append(f"%fill, %split, %combine, %rloop = transform.structured.tile_reduction_using_for "
                         f"{handle} by tile_sizes = {list(self.reduction_tile)} : (!transform.any_op) -> "
                         "(!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)")
            lines.append(f"transform.structured.vectorize %split{sizes} {{vectorize_nd_extract}} : !transform.any_op")
            lines.append("transform.structured.vectorize %combine : !transform.any_op")
            lines.append("transform.structured.vectorize %fill : !transform.any_op")
        else:
            lines.append(f"transform.structured.vectorize {handle}{sizes} {{vectorize_nd_extract}} : !transform.any_op")
        return transform_sequence("\n    ".join(lines))


def _match_target(tag: int) -> str:
    """``%op`` = the ops whose target tag is ``tag`` (one op, or the tiles it became)."""
    return (f"%op = transform.structured.match attributes{{{TARGET} = {tag} : i64}} in %root "
            ": (!transform.any_op) -> !transform.any_op")


def transform_sequence(body: str) -> str:
    return (
        "module attributes {transform.with_named_sequence} {\n"
        "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n"
        f"    {body}\n    transform.yield\n  }}\n}}\n"
    )


# -- analysis of one linalg.generic ------------------------------------------------------------


def _element_bits(t: ir.Type) -> int | None:
    """Bit width of a supported element type, None for the rest (complex, f8, ...)."""
    if isinstance(t, ir.IntegerType):
        width = ir.IntegerType(t).width  # i1 only as a value: see _is_bool
        return max(8, width) if width in (1, 8, 16, 32, 64) else None  # sub-byte ints pack
    if isinstance(t, ir.IndexType):
        return 64
    for cls, bits in ((ir.F16Type, 16), (ir.BF16Type, 16), (ir.F32Type, 32), (ir.F64Type, 64)):
        if isinstance(t, cls):
            return bits
    return None


def _is_bool(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def _operand_shapes(op: ir.Operation) -> list[tuple[int, ...]] | None:
    """Static operand shapes; () for scalar operands; None if any tensor is dynamic (or a memref)."""
    shapes = []
    for value in op.operands:
        t = value.type
        if isinstance(t, ir.RankedTensorType) and t.has_static_shape:
            shapes.append(tuple(t.shape))
        elif isinstance(t, ir.ShapedType):
            return None
        else:
            shapes.append(())
    return shapes


def _dim_position(expr) -> int | None:
    return ir.AffineDimExpr(expr).position if isinstance(expr, ir.AffineDimExpr) else None


def _monotone_access(expr) -> bool:
    """Dims, non-negative constants, their sums and non-negative multiples (windows with
    strides and dilations): tiling slices them right, and once a tile's unit loops are
    folded the vectorizer sees plain accesses. Reverses (``-d0``) and mod/floordiv not."""
    if _plain_access(expr):
        return True
    if isinstance(expr, ir.AffineAddExpr):
        add = ir.AffineAddExpr(expr)
        return _monotone_access(add.lhs) and _monotone_access(add.rhs)
    if isinstance(expr, ir.AffineMulExpr):
        mul = ir.AffineMulExpr(expr)
        constant = [side for side in (mul.lhs, mul.rhs) if isinstance(side, ir.AffineConstantExpr)]
        return bool(constant) and ir.AffineConstantExpr(constant[0]).value >= 0 \
            and _monotone_access(mul.lhs) and _monotone_access(mul.rhs)
    return False


def _plain_access(expr) -> bool:
    """A dimension or a constant: the accesses the linalg vectorizer turns into vector
    transfers. Windows (``d1 + d4``) and reverses (``-d0 + 3``) are left scalar."""
    if isinstance(expr, ir.AffineDimExpr):
        return True
    return isinstance(expr, ir.AffineConstantExpr) and ir.AffineConstantExpr(expr).value >= 0


def _loop_ranges(maps: list[ir.AffineMap], shapes: list[tuple[int, ...]], n_loops: int) -> list[int] | None:
    ranges: list[int | None] = [None] * n_loops
    for amap, shape in zip(maps, shapes):
        for expr, size in zip(amap.results, shape):
            d = _dim_position(expr)
            if d is not None and ranges[d] is None:
                ranges[d] = size
    return None if any(r is None for r in ranges) else ranges  # type: ignore[return-value]


def _gathers_through_gathers(op: ir.Operation) -> bool:
    """A tensor.extract whose index comes from another (an embedding lookup). The
    vectorizer rejects these unless the inner lookup is hoisted out of the tile."""
    extracted = set()
    for inner in op.regions[0].blocks[0].operations:
        inner = inner.operation
        if any(v in extracted for v in inner.operands):
            if inner.name == "tensor.extract":
                return True
            extracted.update(inner.results)
        if inner.name == "tensor.extract":
            extracted.update(inner.results)
    return False


def _body_is_vectorizable(op: ir.Operation) -> bool:
    for inner in op.regions[0].blocks[0].operations:
        name = inner.operation.name
        if name in _SCALAR_ONLY_MATH and not (
            name in EXPANDED_ONLY_HERE and all(isinstance(v.type, ir.F32Type) for v in inner.operands)
        ):
            return False
        if name not in _ALLOWED_BODY_OPS and not name.startswith(_ALLOWED_BODY_DIALECTS):
            return False
        if name == "tensor.extract" and _is_bool(_scalar_type(inner.operands[0].type)):
            return False  # a gather from a bool tensor: a vector<i1> read would unpack bits, not bytes
        for value in list(inner.operands) + list(inner.results):
            elem = _scalar_type(value.type)
            if _element_bits(elem) is None:
                return False
            if sh.is_half_float(elem) and name not in _SMALL_FLOAT_SAFE:
                return False  # LLVM cannot legalize most vector ops on half floats (it aborts)
    return True


def _scalar_type(t: ir.Type) -> ir.Type:
    if isinstance(t, ir.ShapedType):
        return ir.ShapedType(t).element_type
    return t


def _uses_indices(op: ir.Operation) -> bool:
    """Does the body read loop indices (iota, gather)? Flattening would turn them into div/mod."""
    return any(inner.operation.name in ("linalg.index", "tensor.extract")
               for inner in op.regions[0].blocks[0].operations)


def _yields(op: ir.Operation, n_inputs: int) -> list[tuple[ir.Value, ir.Operation | None]]:
    """Per output of a linalg op's body: (its block argument, the op computing what it
    yields; None when a block argument is yielded as it is)."""
    block = op.regions[0].blocks[0]
    terminator = block.operations[len(block.operations) - 1]
    found = []
    for i, yielded in enumerate(terminator.operands):
        owner = yielded.owner
        found.append((block.arguments[n_inputs + i], None if isinstance(owner, ir.Block) else owner.operation))
    return found


def _combiners_recognized(op: ir.Operation, n_inputs: int) -> bool:
    """Every output is ``yield combiner(out_arg, x)``, with out_arg used only there."""
    for out_arg, producer in _yields(op, n_inputs):
        if producer is None or producer.name not in _COMBINERS:
            return False
        if out_arg not in list(producer.operands):
            return False
        if sum(1 for _ in out_arg.uses) != 1:
            return False
    return True


def _subtractions_as_sums(op: ir.Operation) -> None:
    """``yield out - x`` becomes ``yield out + (-x)``: a reduction of negated values.

    Fusion folds a negation into the reduction that consumes it, and the arith
    canonicalizer writes ``out + (-x)`` as ``out - x``; no reduction kind is a
    subtraction, so such a reduction (a layer norm's gradient has two per row)
    stayed a scalar loop carrying its sum through memory. ``a - x == a + (-x)``
    exactly, in floats and in wrapping integers."""
    if all("parallel" in str(kind) for kind in op.attributes["iterator_types"]):
        return
    for out_arg, producer in _yields(op, len(op.operands) - len(op.results)):
        if producer is None or producer.name not in ("arith.subf", "arith.subi") \
                or producer.operands[0] != out_arg or producer.operands[1] == out_arg:
            continue
        with ir.InsertionPoint(producer), producer.location:
            x = producer.operands[1]
            if producer.name == "arith.subf":
                total = arith.addf(out_arg, arith.negf(x))
            else:
                total = arith.addi(out_arg, arith.subi(arith.constant(x.type, 0), x))
        producer.results[0].replace_all_uses_with(total)
        producer.erase()


def _choose_vector_loop(
    maps: list[ir.AffineMap], shapes: list[tuple[int, ...]], parallel: list[bool], allowed: list[bool],
    ranges: list[int],
) -> int | None:
    """The allowed loop indexing the contiguous dimension of the most elements (the
    innermost one longer than 1: trailing unit dimensions, a gather's ``[n, 1]`` indices,
    move nothing)."""
    weight = [0] * len(parallel)
    for amap, shape in zip(maps, shapes):
        longer = [i for i, size in enumerate(shape) if size > 1]
        if not longer:
            continue
        d = _dim_position(amap.results[longer[-1]])
        if d is not None:
            weight[d] += math.prod(shape)
    candidates = [d for d in range(len(parallel)) if allowed[d] and weight[d] > 0]
    if not candidates:
        return None
    return max(candidates, key=lambda d: (weight[d], ranges[d] > 1, parallel[d], d))


def _fitting_tile(extent: int, width: int, smallest: int | None = None) -> tuple[int, bool]:
    """(tile, masked): ``width`` or the largest of its halvings down to ``smallest`` (by
    default half of it) that divides ``extent``; else ``width``, masked."""
    tile, smallest = width, max(1, width // 2 if smallest is None else smallest)
    while tile >= smallest:
        if extent % tile == 0:
            return tile, False
        tile //= 2
    return width, True


def plan_for(op: ir.Operation, vector_bits: int, reduction_vectors: int,
             masked_reductions: bool = True) -> TilePlan | None:
    """The tiling plan of a linalg.generic, None when it is not worth or able to vectorize.

    A reduction whose extent no tile of at least half of its ``reduction_vectors``
    vectors divides takes masked tiles; without ``masked_reductions`` (no AVX-512),
    first the largest dividing tile down to half a vector (256 bits of 512)."""
    shapes = _operand_shapes(op)
    if shapes is None or not _body_is_vectorizable(op):
        return None
    elements = [_scalar_type(v.type) for v in op.operands]
    bits = [_element_bits(t) for t in elements]
    if any(b is None for b in bits) or any(_is_bool(t) for t in elements):
        return None  # LLVM packs vectors of i1 into bits; i1 tensors hold one byte per element
    maps = indexing_maps(op)
    window = not all(_plain_access(e) for m in maps for e in m.results)
    if window and not all(_monotone_access(e) for m in maps for e in m.results):
        return None
    parallel = ["parallel" in str(it) for it in op.attributes["iterator_types"]]
    n_loops = len(parallel)
    ranges = _loop_ranges(maps, shapes, n_loops)
    if not n_loops or ranges is None or math.prod(ranges) <= 1:
        return None
    width = max(2, vector_bits // max(bits))
    n_inputs = len(op.operands) - len(op.results)
    if all(parallel) and n_loops > 1 and all(m == ir.AffineMap.get_identity(n_loops) for m in maps) \
            and not _uses_indices(op):
        return dataclasses.replace(_parallel_plan([math.prod(ranges)], 0, width, flatten=True),
                                   parallel_dims=(True,))
    reducible = all(parallel) or _combiners_recognized(op, n_inputs)
    d = _choose_vector_loop(maps, shapes, parallel, [p or reducible for p in parallel], ranges)
    if d is None or ranges[d] == 1:
        return None  # nothing contiguous to put in a vector
    if parallel[d]:
        # Reducing over other loops (a column sum, a max over a broadcast sum): several
        # vectors a step keep as many independent accumulators (one is bound by the latency
        # of its chain) and read a longer run of each strided row.
        across = (not all(parallel) and reducible and ranges[d] % (width * reduction_vectors) == 0
                  and all(_contiguous_or_constant_along(m, d) for m in maps[:n_inputs]))
        plan = _parallel_plan(ranges, d, width * reduction_vectors if across else width, flatten=False)
        plan = dataclasses.replace(plan, block_sizes=_transpose_blocks(maps, n_inputs, ranges, d, width))
    else:
        plan = _reduction_plan(ranges, d, width * reduction_vectors, None if masked_reductions else width // 2)
    plan = dataclasses.replace(plan, parallel_dims=_disjoint_write_dims(maps[n_inputs:], parallel))
    if window or not reducible:
        # window accesses, and reductions without a recognized combiner (argmax) vectorized
        # along a parallel loop: the tile's unit loops folded away, the tile is elementwise
        return _folded(plan, ranges, d)
    return plan


def _contiguous_or_constant_along(amap: ir.AffineMap, d: int) -> bool:
    """Does an input read runs of loop ``d`` from memory (its innermost dimension), or
    one value for all of them (a broadcast along ``d``)?"""
    positions = [_dim_position(e) for e in amap.results]
    return d not in positions or (bool(positions) and positions[-1] == d)


def _transpose_blocks(maps: list[ir.AffineMap], n_inputs: int, ranges: list[int], d: int,
                      width: int) -> tuple[int, ...] | None:
    """Square blocks of one vector (``width``) a side for an elementwise op whose input's
    contiguous loop is not the output's (``d``, the vector loop): a block reads each input
    cache line it touches whole, where a row of tiles read one element of a line per page
    (2048x2048: 14 -> 1.8 ms). None for other ops, loops shorter than two blocks, and loops
    blocks do not divide."""
    if n_inputs != 1 or len(maps) != 2 or not all(m.is_permutation for m in maps):
        return None
    inner = _dim_position(maps[0].results[-1])
    if inner is None or inner == d or min(ranges[inner], ranges[d]) < 2 * width:
        return None
    if ranges[inner] % width or ranges[d] % width:
        return None  # a partial block has dynamic sizes, which nothing in it vectorizes
    return tuple(width if i in (inner, d) else 0 for i in range(len(ranges)))


def _disjoint_write_dims(output_maps: list[ir.AffineMap], parallel: list[bool]) -> tuple[bool, ...]:
    """Parallel loops every output indexes by the bare loop dimension: distinct
    iterations of such a loop write distinct output elements."""
    indexed = [{_dim_position(e) for e in m.results} for m in output_maps]
    return tuple(p and all(d in dims for dims in indexed) for d, p in enumerate(parallel))


def _folded(plan: TilePlan, ranges: list[int], d: int) -> TilePlan | None:
    """The plan of a window op or an unrecognized reduction: tile every loop but ``d`` to
    one, fold those unit loops away, vectorize what is left (the vector loop), masked if
    its tile needs it."""
    if plan.reduction_tile is not None or not any(plan.tile_sizes):
        return None  # split reductions and untiled ops keep their windows: left scalar
    if any(r > 1 and t != 1 for i, (t, r) in enumerate(zip(plan.tile_sizes, ranges)) if i != d):
        return None
    sizes = (plan.vector_sizes[d],) if plan.vector_sizes else None
    return dataclasses.replace(plan, vector_sizes=sizes, fold_unit_dims=True)


def _parallel_plan(ranges: list[int], d: int, width: int, *, flatten: bool) -> TilePlan:
    tiles = [1 if r > 1 else 0 for r in ranges]
    masked = False
    if ranges[d] > SHORT_LOOP_VECTORS * width:
        tiles[d], masked = _fitting_tile(ranges[d], width)
    else:  # short: one vector of the whole loop
        tiles[d] = 0
    vector_sizes = None
    if masked:
        vector_sizes = tuple(t if t else r for t, r in zip(tiles, ranges))
    return TilePlan(flatten, tuple(tiles), None, vector_sizes)


def _reduction_plan(ranges: list[int], d: int, width: int, smallest_tile: int | None) -> TilePlan:
    tiles = [1 if r > 1 else 0 for r in ranges]
    tiles[d] = 0
    if ranges[d] <= width:  # short: one multi_reduction over the whole loop
        return TilePlan(False, tuple(tiles), None, None)
    tile, masked = _fitting_tile(ranges[d], width, smallest_tile)
    reduction = [0] * len(ranges)
    reduction[d] = tile
    vector_sizes = None
    if masked:
        vector_sizes = tuple(tile if i == d else (1 if t else r) for i, (t, r) in enumerate(zip(tiles, ranges)))
    return TilePlan(False, tuple(tiles), tuple(reduction), vector_sizes)


# -- driving the transform interpreter ---------------------------------------------------------


def _linalg_ops(module: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op):
        if op.name.startswith("linalg.") and op.name not in ("linalg.yield", "linalg.index") \
                and BLAS_TAG not in op.attributes:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def apply_transform(module: ir.Operation, script: str) -> bool:
    """Run a transform script on ``module``; False (and no diagnostics printed) if it fails."""
    from torch_mlir.dialects.transform import interpreter

    context = module.context
    handler = context.attach_diagnostic_handler(lambda diagnostic: True)
    options = interpreter.TransformOptions()
    options.expensive_checks = False  # handle checks walking the payload after every transform op
    try:
        transform = ir.Module.parse(script)
        interpreter.apply_named_sequence(module, transform.body.operations[0], transform, options)
        return True
    except (ir.MLIRError, RuntimeError, ValueError):
        return False
    finally:
        handler.detach()


def _tagged(module: ir.Operation, tag: ir.Attribute) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op):
        if TARGET in op.attributes and op.attributes[TARGET] == tag:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


_HOISTABLE = ("arith.", "math.", "affine.apply")


def _fold_unit_indices(op: ir.Operation) -> None:
    """``linalg.index d`` of a loop the tile made one long is 0."""
    shapes = _operand_shapes(op)
    if shapes is None:
        return
    ranges = _loop_ranges(indexing_maps(op), shapes, len(op.attributes["iterator_types"]))
    if ranges is None:
        return
    for inner in list(op.regions[0].blocks[0].operations):
        inner = inner.operation
        if inner.name == "linalg.index" and ranges[ir.IntegerAttr(inner.attributes["dim"]).value] == 1:
            with ir.InsertionPoint(inner), inner.location:
                zero = arith.constant(ir.IndexType.get(), 0)
            inner.results[0].replace_all_uses_with(zero)
            inner.erase()


def _hoist_tile_invariants(op: ir.Operation) -> None:
    """Move pure body ops that read neither elements nor loop indices in front of the op.

    In a tile of an embedding lookup the row index (``ids[i]``, clamped) is the
    same for the whole tile; out of the body, the vectorizer sees the table read
    as one contiguous load of the row instead of a gather.
    """
    block = op.regions[0].blocks[0]
    _fold_unit_indices(op)
    varying = set(block.arguments)
    for inner in list(block.operations):
        inner = inner.operation
        pure = inner.name == "tensor.extract" or inner.name.startswith(_HOISTABLE)
        if not pure or inner.regions or any(v in varying for v in inner.operands):
            varying.update(inner.results)
            continue
        inner.move_before(op)


def _hoist_out_of_inner_tile_loops(module: ir.Operation) -> None:
    """Loop-invariant code motion out of tile loops nested in another tile loop.

    Fusion puts a producer's elementwise math into a broadcasting consumer: the tiles
    along the broadcast dimension repeat it (per-example gradients: a tanh chain over
    a row, recomputed for each of 64 rows of the outer product; 0.22 -> 0.09 ms).
    Hoisted values stay inside the enclosing tile loop, so the loop that
    ``xhlo-parallelize-loops`` outlines captures nothing new (a captured vector of
    ``index`` has no LLVM struct field)."""
    inner: list[ir.Operation] = []

    def visit(op, within_tile_loop=False):
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    tile_loop = child.name == "scf.for" and PARALLEL_LOOP in child.attributes
                    if tile_loop and within_tile_loop:
                        inner.append(child)
                    visit(child, within_tile_loop or tile_loop)

    visit(module)
    if not inner:
        return
    for loop in inner:
        loop.attributes[_HOIST_FROM] = ir.UnitAttr.get()
    apply_transform(module, transform_sequence(
        f"%inner = transform.structured.match attributes{{{_HOIST_FROM}}} in %root "
        ": (!transform.any_op) -> !transform.any_op\n"
        "    transform.apply_licm to %inner : !transform.any_op"))
    for loop in inner:
        del loop.attributes[_HOIST_FROM]


def _loop_depth(module: ir.Operation) -> int:
    deepest = 0

    def visit(op, depth=0):
        nonlocal deepest
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    d = depth + (inner.operation.name == "scf.for")
                    deepest = max(deepest, d)
                    visit(inner.operation, d)

    visit(module)
    return deepest


@dataclasses.dataclass(frozen=True)
class Vectorize(ModulePass):
    """Tile and vectorize linalg ops on tensors (SIMD-wide tiles, split reductions)."""

    NAME = "xhlo-vectorize"
    vector_bits: int = 512  # SIMD register width the tiles are sized for
    reduction_vectors: int = 4  # independent partial-result vectors of a split reduction
    # Masked reduction tiles keep their partial sums in memory through masked loads and
    # stores each step: AVX-512 masks them cheaply; AVX2's vmaskmovps is slow (a sum over
    # rows of 1000 on one Zen 3 core: 14 ms masked, 0.9 ms in unmasked tiles of 8).
    masked_reductions: bool = host.avx512()

    def run(self, module: ir.Operation) -> None:
        self._generalize(module)
        i64 = ir.IntegerType.get_signless(64)
        scripted = False
        # Each op gets its own tag value: what is left tagged after its script (a tile
        # the vectorizer rejected) is not matched by the next op's script, and one walk
        # at the end removes every tag.
        for number, op in enumerate(_linalg_ops(module)):
            if op.name != "linalg.generic":
                continue
            _subtractions_as_sums(op)
            plan = plan_for(op, self.vector_bits, self.reduction_vectors, self.masked_reductions)
            if plan is None:
                continue
            gather = _gathers_through_gathers(op)
            if gather and not plan.plain_tiling:
                continue
            tag = ir.IntegerAttr.get(i64, number)
            op.attributes[TARGET] = tag
            scripted = True
            if gather:  # tile, hoist the row lookup out of the tile, then vectorize
                scope = op.parent  # which tiling keeps: the tiles are found below it
                if apply_transform(scope, plan.tile_script(number)):
                    for tiled in _tagged(scope, tag):
                        _hoist_tile_invariants(tiled)
                    apply_transform(scope, plan.vectorize_script(number))
            else:
                # the op itself is the script's payload root: its match walks the op, not the
                # function around it (once per op, that was quadratic in the function's size)
                apply_transform(op, plan.script(number))
        self._untag(module)
        if scripted:  # nothing to clean up otherwise (conv2d: 1.9 ms of pattern sets saved)
            apply_transform(module, transform_sequence(_cleanup_and_hoist(_loop_depth(module))))
            _hoist_out_of_inner_tile_loops(module)

    @staticmethod
    def _generalize(module: ir.Operation) -> None:
        """Named linalg ops (fill, transpose, reduce, ...) become linalg.generic."""
        named = [op for op in _linalg_ops(module) if op.name != "linalg.generic"]
        for op in named:
            op.attributes[TARGET] = ir.UnitAttr.get()
        if named:
            apply_transform(module, transform_sequence(
                f"%ops = transform.structured.match attributes{{{TARGET}}} in %root "
                ": (!transform.any_op) -> !transform.any_op\n"
                "    transform.structured.generalize %ops : (!transform.any_op) -> !transform.any_op"))
        # The generalized ops keep their (unit) tag: run()'s scripts match integer tags
        # only, and it removes every tag at the end.

    @staticmethod
    def _untag(module: ir.Operation) -> None:
        def visit(op):
            if TARGET in op.attributes:
                del op.attributes[TARGET]
            return ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.PRE_ORDER)

"""xhlo-lower-sort: stablehlo.sort -> a stable bottom-up merge sort in scf loops.

The upstream linalg lowering has no pattern for ``stablehlo.sort`` (and
``chlo.top_k`` decomposes into one), so this pass expands it while the IR is
still StableHLO, into scf loops on tensors that the later stages lower as usual.

Algorithm: the sort dimension is transposed to the end and the other
dimensions collapsed, giving ``[rows, n]`` tensors. Every row is sorted by a
bottom-up merge sort: pass ``p`` merges neighbouring runs of width ``2**p``
from one buffer into the other, taking the right element only when the
comparator says it must strictly precede the left one, so equal elements keep
their order (stable; this satisfies ``is_stable`` either way). The passes run in
pairs (A -> B -> A) so each loop iteration yields its buffers in place; an odd
pass count adds one pass whose single run is a plain copy. O(n log n)
comparisons, no allocation inside the loops. Rows are independent: the loop
over them is marked ``xhlo.parallel_loop`` (a comparator's result is a scalar:
``xhlo-scalarize-rank0-tensors``), so ``xhlo-parallelize-loops`` spreads
a batch of sorts or of top-k rows over the cores (256 rows of 4096, k = 256,
on two Zen 3 cores: 26 -> 17 ms).

Top k: when every result is only sliced to its first ``k`` along the sort
dimension (``chlo.top_k`` decomposes into such a sort) and rows are at least
``TOP_K_FRACTION`` times longer than ``k``, each row keeps ``k`` elements in
order instead: an element is compared with the k-th kept and, if it must
precede it, inserted, shifting the kept ones that it precedes up one slot
(strictly: earlier elements stay first, as in the stable sort). Most elements
of a long row cost one comparison. 512 rows of 4096, k = 16: 189 -> 6 ms.
From ``HEAP_TOP_K`` on, an insertion's O(k) shifts cost more than a binary
heap's O(log k) sift-down: the kept elements are a heap whose root comes last
(ties ordered by row position, kept beside them), and are sorted in place at
the end. 256 rows of 4096, k = 256: 31 -> 19 ms, k = 512: 89 -> 34 ms (XLA
16 and 27); its compile takes ~20 ms more than the insertion's (62 against 40).

The comparator is evaluated once per step as a 0-d ``stablehlo.map`` on
``tensor.extract_slice`` views of the two elements, its result written into a
loop-carried ``tensor<1xi1>``. The upstream map lowering turns the comparator
body into scalar arith code, and bufferization makes the views subviews and the
result a store into the carried buffer, so no memory is allocated per
comparison. A comparator with ops that the map lowering cannot scalarise
(regions, shape ops) is instead inlined on 0-d tensors: slower, still correct.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import arith, ir, scf, tensor
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError
from .vectorize import PARALLEL_LOOP

# A sort whose results are only read up to k along its dimension (chlo.top_k) keeps just
# the first k when its rows are at least this many times longer.
TOP_K_FRACTION = 8
# ... and keeps them in a heap from this k on (below it, sorted by insertion)
HEAP_TOP_K = 128

# Ops whose 0-d forms the upstream map lowering turns into scalar code.
_MAP_SAFE_OPS = frozenset(
    "stablehlo." + name
    for name in (
        "abs add and atan2 bitcast_convert cbrt ceil clamp compare complex constant convert "
        "cosine count_leading_zeros divide exponential exponential_minus_one floor imag "
        "is_finite log log_plus_one logistic maximum minimum multiply negate not or popcnt "
        "power real remainder round_nearest_afz round_nearest_even rsqrt select shift_left "
        "shift_right_arithmetic shift_right_logical sign sine sqrt subtract tan tanh xor return"
    ).split()
)


# -- small index/arith builders ------------------------------------------------------


def _index(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def _less(a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.CmpIOp(arith.CmpIPredicate.slt, a, b).result


def _select(cond: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.SelectOp(cond, a, b).result


def _true() -> ir.Value:
    return arith.ConstantOp(sh.i1(), 1).result


def _min(a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.MinSIOp(a, b).result


# -- comparator ------------------------------------------------------------------------


def _map_safe(comparator: ir.Region) -> bool:
    """True if every comparator op is elementwise and only outer constants are used."""
    block = comparator.blocks[0]
    inner: set = set(block.arguments)
    for op in block.operations:
        op = op.operation
        if op.name not in _MAP_SAFE_OPS or len(op.regions) > 0:
            return False
        for operand in op.operands:
            if operand not in inner and not _is_outer_constant(operand):
                return False
        inner.update(op.results)
    return True


def _is_outer_constant(value: ir.Value) -> bool:
    owner = value.owner
    return isinstance(owner, (ir.Operation, ir.OpView)) and owner.name == "stablehlo.constant"


def _element_view(row_tensor: ir.Value, row: ir.Value, position: ir.Value) -> ir.Value:
    """The 0-d view ``row_tensor[row, position]`` (a subview after bufferization)."""
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    return tensor.ExtractSliceOp(
        sh.tensor_type([], sh.element_type(row_tensor)),
        row_tensor,
        [row, position],
        [],
        [],
        [dynamic, dynamic],
        [1, 1],
        [1, 1],
    ).result


def _row_loop(batch: int, carried: list[ir.Value]) -> scf.ForOp:
    """The loop over the rows, marked for the thread pool: each row writes only its own
    slice of the carried tensors."""
    loop = scf.ForOp(_index(0), _index(batch), _index(1), carried)
    loop.operation.attributes[PARALLEL_LOOP] = ir.UnitAttr.get()
    return loop


def _flag() -> ir.Value:
    """Where a comparator map writes its result (one element: a scalar once
    xhlo-scalarize-rank0-tensors has run, no buffer)."""
    return tensor.EmptyOp([1], sh.i1()).result


@dataclasses.dataclass(frozen=True)
class _Comparator:
    region: ir.Region
    as_map: bool

    def precedes(
        self,
        sources: list[ir.Value],
        row: ir.Value,
        first: ir.Value,
        second: ir.Value,
        seconds: list[ir.Value] | None = None,
    ) -> ir.Value:
        """comparator(element ``first``, element ``second``) as i1; element ``second`` is
        read from ``seconds`` when given, else from ``sources``."""
        args = []
        for src, other in zip(sources, seconds or sources):
            args += [_element_view(src, row, first), _element_view(other, row, second)]
        if not self.as_map:
            (result,) = sh.inline_region(self.region, args)
            return tensor.ExtractOp(result, []).result
        result_type = sh.tensor_type([], sh.i1())
        no_dims = {"dimensions": sh.dense_i64([])}
        mapped = sh.create("stablehlo.map", args, [result_type], no_dims, regions=1)
        arg_types = [a.type for a in args]
        sh.build_region(mapped.regions[0], arg_types, lambda *a: sh.inline_region(self.region, a))
        written = tensor.InsertSliceOp(mapped.result, _flag(), [], [], [], [0], [1], [1]).result
        return tensor.ExtractOp(written, [_index(0)]).result


# -- merge sort --------------------------------------------------------------------------


def _merge_runs(
    cmp: _Comparator,
    sources: list[ir.Value],
    dests: list[ir.Value],
    row: ir.Value,
    lo: ir.Value,
    mid: ir.Value,
    hi: ir.Value,
) -> list[ir.Value]:
    """Merge sources[row, lo:mid] and sources[row, mid:hi] into dests[row, lo:hi]."""
    loop = scf.ForOp(lo, hi, _index(1), [lo, mid, *dests])
    with ir.InsertionPoint(loop.body):
        k = loop.induction_variable
        i, j, *outs = loop.inner_iter_args
        left_live, right_live = _less(i, mid), _less(j, hi)
        both = arith.AndIOp(left_live, right_live).result
        take_right = _if(both, [sh.i1()], lambda: [cmp.precedes(sources, row, j, i)], lambda: [right_live])[0]
        pos = _select(take_right, j, i)
        new_outs = [
            tensor.InsertOp(tensor.ExtractOp(src, [row, pos]).result, out, [row, k]).result
            for src, out in zip(sources, outs)
        ]
        one = _index(1)
        next_i = _select(take_right, i, arith.AddIOp(i, one).result)
        next_j = _select(take_right, arith.AddIOp(j, one).result, j)
        scf.YieldOp([next_i, next_j, *new_outs])
    return list(loop.results)[2:]


def _merge_pass(
    cmp: _Comparator,
    sources: list[ir.Value],
    dests: list[ir.Value],
    row: ir.Value,
    width: ir.Value,
    n: int,
) -> list[ir.Value]:
    """One merge-sort pass over a row: runs of ``width`` merged pairwise into ``dests``."""
    n_index = _index(n)
    double = arith.AddIOp(width, width).result
    loop = scf.ForOp(_index(0), n_index, double, dests)
    with ir.InsertionPoint(loop.body):
        lo = loop.induction_variable
        mid = _min(arith.AddIOp(lo, width).result, n_index)
        hi = _min(arith.AddIOp(lo, double).result, n_index)
        scf.YieldOp(_merge_runs(cmp, sources, list(loop.inner_iter_args), row, lo, mid, hi))
    return list(loop.results)


def _sort_rows(cmp: _Comparator, rows: list[ir.Value], n: int) -> list[ir.Value]:
    """Sort every row of the ``[batch, n]`` tensors ``rows`` together.

    The inputs are only read (the first pass merges them into buffer A), so
    bufferization never writes into, or copies, the caller's arrays.
    """
    batch = sh.shape_of(rows[0])[0]
    count = len(rows)
    later_pairs = math.ceil((math.ceil(math.log2(n)) - 1) / 2)
    buffers = [tensor.EmptyOp([batch, n], sh.element_type(r)).result for r in rows * 2]
    row_loop = _row_loop(batch, buffers)
    with ir.InsertionPoint(row_loop.body):
        row = row_loop.induction_variable
        state = list(row_loop.inner_iter_args)
        a, b = state[:count], state[count:]
        a = _merge_pass(cmp, rows, a, row, _index(1), n)
        pass_loop = scf.ForOp(_index(0), _index(later_pairs), _index(1), [*a, *b])
        with ir.InsertionPoint(pass_loop.body):
            state = list(pass_loop.inner_iter_args)
            a, b = state[:count], state[count:]
            two_q = arith.AddIOp(pass_loop.induction_variable, pass_loop.induction_variable).result
            width = arith.ShLIOp(_index(2), two_q).result
            b = _merge_pass(cmp, a, b, row, width, n)
            double = arith.AddIOp(width, width).result
            a = _merge_pass(cmp, b, a, row, double, n)
            scf.YieldOp([*a, *b])
        scf.YieldOp(list(pass_loop.results))
    return list(row_loop.results)[:count]


# -- top k: a partial sort ----------------------------------------------------------------


def _shift_down(cmp: _Comparator, rows, outs, row, j, start):
    """Move the kept elements at and above ``start`` up one slot while element ``j`` of
    ``rows`` must precede the one below: (its slot, the kept tensors)."""
    types = [ir.IndexType.get(), *[o.type for o in outs]]
    loop = ir.Operation.create("scf.while", results=types, operands=[start, *outs], regions=2)
    before = loop.regions[0].blocks.append(*types)
    with ir.InsertionPoint(before):
        pos, *kept = before.arguments
        above_zero = arith.CmpIOp(arith.CmpIPredicate.sgt, pos, _index(0)).result
        below = arith.SubIOp(pos, _index(1)).result
        (move,) = _if(above_zero, [sh.i1()], lambda: [cmp.precedes(rows, row, j, below, seconds=list(kept))],
                      lambda: [arith.ConstantOp(sh.i1(), 0).result])
        ir.Operation.create("scf.condition", operands=[move, pos, *kept])
    after = loop.regions[1].blocks.append(*types)
    with ir.InsertionPoint(after):
        pos, *kept = after.arguments
        below = arith.SubIOp(pos, _index(1)).result
        moved = [tensor.InsertOp(tensor.ExtractOp(o, [row, below]).result, o, [row, pos]).result for o in kept]
        scf.YieldOp([below, *moved])
    results = list(loop.results)
    return results[0], results[1:]


def _top_rows(cmp: _Comparator, rows: list[ir.Value], n: int, k: int) -> list[ir.Value]:
    """The first ``k`` elements of every row of the ``[batch, n]`` tensors in sorted order
    (what a stable sort's first ``k`` are): each element is compared with the k-th kept
    so far and, when it must precede it, inserted, so most elements of a long row cost
    one comparison instead of the sort's ``log2(n)``."""
    batch = sh.shape_of(rows[0])[0]
    count = len(rows)
    kept = [tensor.EmptyOp([batch, k], sh.element_type(r)).result for r in rows]
    last = _index(k - 1)
    row_loop = _row_loop(batch, kept)
    with ir.InsertionPoint(row_loop.body):
        row = row_loop.induction_variable
        element_loop = scf.ForOp(_index(0), _index(n), _index(1), [*row_loop.inner_iter_args, _index(0)])
        with ir.InsertionPoint(element_loop.body):
            j = element_loop.induction_variable
            *kept, filled = element_loop.inner_iter_args
            full = arith.CmpIOp(arith.CmpIPredicate.eq, filled, _index(k)).result
            (take,) = _if(full, [sh.i1()], lambda: [cmp.precedes(rows, row, j, last, seconds=list(kept))],
                          lambda: [arith.ConstantOp(sh.i1(), 1).result])
            insert = scf.IfOp(take, [*[o.type for o in kept], filled.type], has_else=True)
            with ir.InsertionPoint(insert.then_block):
                start = _select(full, last, filled)
                pos, shifted = _shift_down(cmp, rows, list(kept), row, j, start)
                placed = [tensor.InsertOp(tensor.ExtractOp(r, [row, j]).result, o, [row, pos]).result
                          for r, o in zip(rows, shifted)]
                grown = _select(full, filled, arith.AddIOp(filled, _index(1)).result)
                scf.YieldOp([*placed, grown])
            with ir.InsertionPoint(insert.else_block):
                scf.YieldOp([*kept, filled])
            scf.YieldOp(list(insert.results))
        scf.YieldOp(list(element_loop.results)[:-1])
    return list(row_loop.results)[:count]


def _later(cmp: _Comparator, kept: list[ir.Value], positions: ir.Value, row: ir.Value,
           a: ir.Value, b: ir.Value) -> ir.Value:
    """Kept element ``a`` comes after kept element ``b`` in the stable sort's order: the
    comparator puts ``b`` first, or neither first and ``b`` came first in the row."""
    b_first = cmp.precedes(kept, row, b, a)
    a_first = cmp.precedes(kept, row, a, b)
    earlier = _less(tensor.ExtractOp(positions, [row, b]).result, tensor.ExtractOp(positions, [row, a]).result)
    not_a_first = arith.XOrIOp(a_first, _true()).result
    return arith.OrIOp(b_first, arith.AndIOp(not_a_first, earlier).result).result


def _swap(tensors: list[ir.Value], row: ir.Value, i: ir.Value, j: ir.Value) -> list[ir.Value]:
    swapped = []
    for t in tensors:
        at_i, at_j = tensor.ExtractOp(t, [row, i]).result, tensor.ExtractOp(t, [row, j]).result
        t = tensor.InsertOp(at_j, t, [row, i]).result
        swapped.append(tensor.InsertOp(at_i, t, [row, j]).result)
    return swapped


def _sift_down(cmp: _Comparator, kept: list[ir.Value], positions: ir.Value,
               row: ir.Value, start: ir.Value, size: ir.Value, depth: int) -> tuple[list[ir.Value], ir.Value]:
    """Restore the heap below ``start`` in the first ``size`` slots: the element moves down
    while a child comes after it (the root is the kept element that comes last).

    A counted loop over the heap's ``depth`` levels that idles once the element has
    settled (an scf.for's buffers bufferize in place; an scf.while's were copied)."""
    loop = scf.ForOp(_index(0), _index(depth), _index(1), [start, _true(), *kept, positions])
    with ir.InsertionPoint(loop.body):
        i, active, *held, pos_in = loop.inner_iter_args
        left = arith.AddIOp(arith.AddIOp(i, i).result, _index(1)).result
        right = arith.AddIOp(left, _index(1)).result
        last = arith.SubIOp(size, _index(1)).result  # slots past the heap read as this one
        left_slot, right_slot = _min(left, last), _min(right, last)
        right_later = _later(cmp, list(held), pos_in, row, right_slot, left_slot)
        child = _select(arith.AndIOp(_less(right, size), right_later).result, right, left_slot)
        child_later = _later(cmp, list(held), pos_in, row, child, i)
        move = arith.AndIOp(arith.AndIOp(active, _less(left, size)).result, child_later).result
        tensors = [*held, pos_in]
        moved = _if(move, [t.type for t in tensors], lambda: _swap(tensors, row, i, child), lambda: tensors)
        scf.YieldOp([child, move, *moved])
    results = list(loop.results)
    return results[2:-1], results[-1]


def _if(condition: ir.Value, types: list[ir.Type], then, otherwise) -> list[ir.Value]:
    """``scf.if`` of ``types`` yielding ``then()`` or ``otherwise()``."""
    op = scf.IfOp(condition, types, has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.YieldOp(then())
    with ir.InsertionPoint(op.else_block):
        scf.YieldOp(otherwise())
    return list(op.results)


def _place(rows: list[ir.Value], tensors: list[ir.Value], row: ir.Value, j: ir.Value,
           slot: ir.Value) -> list[ir.Value]:
    """The kept tensors (then positions) with element ``j`` of ``rows`` (and ``j``) at ``slot``."""
    *kept, positions = tensors
    placed = [tensor.InsertOp(tensor.ExtractOp(r, [row, j]).result, h, [row, slot]).result
              for r, h in zip(rows, kept)]
    return [*placed, tensor.InsertOp(j, positions, [row, slot]).result]


def _heap_step(cmp: _Comparator, rows: list[ir.Value], row: ir.Value, t: ir.Value,
               state: list[ir.Value], n: int, k: int) -> list[ir.Value]:
    """Step ``t`` of ``_heap_top_rows``' phases on (kept..., positions)."""
    *held, pos_in = state
    inner, scanned, depth = k // 2, n - k, k.bit_length() - 1  # depth: levels an element can sink
    heapify = _less(t, _index(inner))
    drain = arith.CmpIOp(arith.CmpIPredicate.sge, t, _index(inner + scanned)).result
    scan = arith.AndIOp(arith.XOrIOp(heapify, _true()).result, arith.XOrIOp(drain, _true()).result).result
    j = _min(arith.AddIOp(t, _index(k - inner)).result, _index(n - 1))  # the scanned element
    precedes_root = cmp.precedes(rows, row, j, _index(0), seconds=list(held))
    take = arith.AndIOp(scan, precedes_root).result
    end = arith.SubIOp(_index(inner + scanned + k - 1), t).result  # the drain's last heap slot
    start = _select(heapify, arith.SubIOp(_index(inner - 1), t).result, _index(0))
    size = _select(drain, end, _index(k))
    tensors = [*held, pos_in]
    types = [v.type for v in tensors]

    def sifted() -> list[ir.Value]:
        # the scanned element replaces the root, or the drain swaps the root out
        *ready, pos_ready = _if(take, types, lambda: _place(rows, tensors, row, j, _index(0)),
                                lambda: _if(drain, types, lambda: _swap(tensors, row, _index(0), end),
                                            lambda: tensors))
        ready, pos_ready = _sift_down(cmp, ready, pos_ready, row, start, size, depth)
        return [*ready, pos_ready]

    sift = arith.OrIOp(arith.OrIOp(heapify, take).result, drain).result
    return _if(sift, types, sifted, lambda: tensors)


def _heap_top_rows(cmp: _Comparator, rows: list[ir.Value], n: int, k: int) -> list[ir.Value]:
    """``_top_rows`` for a larger k: the kept elements form a binary heap whose root is
    the one that comes last, so a new element costs one comparison with the root, and
    an insertion O(log k) instead of O(k) shifts. Ties are ordered by row position, as
    in the stable sort.

    After the first k are copied, one loop runs the three phases (heapify: a sift-down
    from each inner slot; scan: each further element that must precede the root
    replaces it and sifts down; drain: the root swaps with the heap's last slot, which
    leaves the heap, and the new root sifts down), so the comparator is inlined 5
    times rather than 13 (compile time)."""
    batch = sh.shape_of(rows[0])[0]
    count = len(rows)
    kept = [tensor.EmptyOp([batch, k], sh.element_type(r)).result for r in rows]
    positions = tensor.EmptyOp([batch, k], ir.IndexType.get()).result
    row_loop = _row_loop(batch, [*kept, positions])
    with ir.InsertionPoint(row_loop.body):
        row = row_loop.induction_variable
        *kept, positions = row_loop.inner_iter_args
        fill = scf.ForOp(_index(0), _index(k), _index(1), [*kept, positions])
        with ir.InsertionPoint(fill.body):
            j = fill.induction_variable
            scf.YieldOp(_place(rows, list(fill.inner_iter_args), row, j, j))
        *kept, positions = fill.results
        phases = scf.ForOp(_index(0), _index(k // 2 + (n - k) + k - 1), _index(1), [*kept, positions])
        with ir.InsertionPoint(phases.body):
            scf.YieldOp(_heap_step(cmp, rows, row, phases.induction_variable, list(phases.inner_iter_args), n, k))
        scf.YieldOp(list(phases.results))
    return list(row_loop.results)[:count]


def _leading_slice_limit(op: ir.Operation, dim: int) -> int | None:
    """The largest ``k`` when every use of every result is a ``stablehlo.slice`` keeping
    elements ``[0, k)`` of dimension ``dim`` and all of the others; None otherwise."""
    limit = 0
    for result in op.results:
        for use in result.uses:
            user = use.owner.operation
            if user.name != "stablehlo.slice":
                return None
            starts, limits, strides = (list(ir.DenseI64ArrayAttr(user.attributes[a]))
                                       for a in ("start_indices", "limit_indices", "strides"))
            shape = sh.shape_of(result)
            if any(starts) or any(s != 1 for s in strides) or any(
                    lim != n for d, (lim, n) in enumerate(zip(limits, shape)) if d != dim):
                return None
            limit = max(limit, limits[dim])
    return limit or None


# -- the op ------------------------------------------------------------------------------


def _lower_sort(op: ir.Operation) -> None:
    operands = list(op.operands)
    shape = sh.shape_of(operands[0])
    rank = len(shape)
    if any(ir.ShapedType(v.type).has_static_shape is False for v in operands):
        raise PassError(op, "stablehlo.sort with dynamic shapes is not supported")
    if rank == 0:
        _replace(op, operands)
        return
    dim = ir.IntegerAttr(op.attributes["dimension"]).value % rank
    n = shape[dim]
    batch = math.prod(shape) // n if n else 0
    if n <= 1 or batch == 0:
        _replace(op, operands)
        return
    cmp = _Comparator(op.regions[0], _map_safe(op.regions[0]))
    perm = [d for d in range(rank) if d != dim] + [dim]
    inverse = [perm.index(d) for d in range(rank)]
    moved_shape = [shape[p] for p in perm]
    k = _leading_slice_limit(op, dim)
    top_k = k is not None and k * TOP_K_FRACTION <= n  # only the first k are read: chlo.top_k
    if top_k:
        moved_shape[-1] = k
    with ir.InsertionPoint(op), op.location:
        rows = [_reshape(_permute(v, perm), [batch, n]) for v in operands]
        if not top_k:
            sorted_rows = _sort_rows(cmp, rows, n)
        else:
            sorted_rows = (_heap_top_rows if k >= HEAP_TOP_K else _top_rows)(cmp, rows, n, k)
        results = [_permute(_reshape(r, moved_shape), inverse) for r in sorted_rows]
    (_replace_slices if top_k else _replace)(op, results)


def _replace_slices(op: ir.Operation, tops: list[ir.Value]) -> None:
    """Each slice of the sort's results reads the top-k results instead."""
    for result, top in zip(op.results, tops):
        for use in list(result.uses):
            user = use.owner.operation
            if sh.shape_of(user.results[0]) == sh.shape_of(top):
                user.results[0].replace_all_uses_with(top)
                user.erase()
            else:
                user.operands[0] = top
    op.erase()


def _permute(value: ir.Value, perm: list[int]) -> ir.Value:
    return value if perm == sorted(perm) else sh.transpose(value, perm)


def _reshape(value: ir.Value, shape: list[int]) -> ir.Value:
    return value if list(sh.shape_of(value)) == list(shape) else sh.reshape(value, shape)


def _replace(op: ir.Operation, values: list[ir.Value]) -> None:
    for old, new in zip(op.results, values):
        old.replace_all_uses_with(new)
    op.erase()


@dataclasses.dataclass(frozen=True)
class LowerSort(ModulePass):
    """Lower stablehlo.sort to a stable merge sort on scf loops over tensors."""

    NAME = "xhlo-lower-sort"

    def run(self, module: ir.Operation) -> None:
        sorts = []

        def visit(op):
            if op.name == "stablehlo.sort":
                sorts.append(op.operation)
            return ir.WalkResult.ADVANCE

        # Post-order: a sort nested in another's comparator is lowered before it is cloned.
        module.walk(visit, ir.WalkOrder.POST_ORDER)
        for op in sorts:
            _lower_sort(op)

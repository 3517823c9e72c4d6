"""xhlo-reduce-window-to-scan: prefix-window reduce_window (JAX's cumsum) -> a sequential scan.

JAX exports ``cumsum``/``cumprod``/``cummax``/``cummin`` along an axis of
length n as a ``reduce_window`` whose window spans the whole axis (n) with
n - 1 padding elements before it (after it when reversed). Lowered literally,
every output element reduces its own window: O(n^2) work, which does not
finish for n = 1M. Output i is the reduction of elements 0..i (i..n-1 when
reversed) once the padding value is the identity of the reducer, so this pass
computes it as a running reduction: O(n), in scf loops on tensors that the
later stages lower as usual.

Matched: one operand; every window dimension 1 except one, ``d``, whose window
covers the whole axis and whose padding is (w - 1, 0) or (0, w - 1); no other
padding, unit strides and dilations; a body that is one binary ``add``,
``multiply``, ``maximum``, ``minimum``, ``and``, ``or`` or ``xor`` of its two
arguments, with an init value that is a constant equal to that op's identity,
or any other scalar body (``cumlogsumexp``'s log-add-exp) whose init value
``v`` is a constant with ``body(v, v)`` folding to ``v`` at compile time: the
windows' padding elements then cannot change a result, and the scan starts
from ``v`` as each window does.
The running value is a scalar loop-carried value combined with the next
element by the arith op of the body (by the body inlined on 0-d tensors for
other bodies) and stored into the result (scalar loads
and stores after bufferization, no allocation); loops over the other
dimensions enclose the scan, so no transpose or reshape copies anything.
Along a dimension with ``ROW_SCAN_MIN`` or more elements after it (``cumsum``
over axis 0 of a matrix), a scalar scan per column would read memory with the
stride of a row; there the running value is the slab of the dimensions after
it, combined with each slab of the operand by the body on tensors (read
in order, vectorized).
f32/f64, bf16/f16 and integers (bool included) are scanned; f8 types keep the
window lowering (xhlo-emulate-small-floats rewrites their StableHLO ops, not the
scan's arith ops), as do bf16/f16 windows of at most ``HALF_WINDOW_MAX``
elements (XLA:CPU's results there round at every step). A longer bf16/f16 scan
carries its running value in f32 and rounds each result: a running bf16 sum of
a million values in [0, 1) stops growing near 256, where each addend is under
half a unit in the last place (and the window lowering of a 1M bf16 cumsum had
not finished in 60 s). A forward scan combines in the window's own
order; a reverse one does not, which StableHLO allows (the order of a
reduction is unspecified),
but a suffix window of at most ``EXACT_SUFFIX_MAX`` elements whose body is not
exactly associative (float sums, products, log-add-exp) keeps the window
lowering and its order.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import arith, func, ir, scf, tensor
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops

# A scan along a dimension with at least this many elements after it runs slab by slab
# (cumsum over axis 0 of 4096x1024: 30 -> 0.9 ms); below, one scalar scan per line.
ROW_SCAN_MIN = 8

# A suffix window folds x[i], x[i + 1], ... from x[i] on: a reverse scan combines
# them in the opposite order, which for floats changes results (cumlogsumexp by
# 4 ulp). Up to this length the window lowering keeps the order (conformance
# programs, like XLA, which rewrites only long windows); longer ones scan.
EXACT_SUFFIX_MAX = 16

# A bf16/f16 window of at most this many elements keeps the window lowering, which rounds
# at every step as XLA:CPU does on short windows (JAX's harnesses: an 8x9 bf16 cumsum and
# cumprod, bit for bit); a longer one scans in f32 (XLA rewrites long windows too).
HALF_WINDOW_MAX = 128


def _index(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def _i64_list(op: ir.Operation, name: str, rank: int, default: int) -> list[int]:
    if name not in op.attributes:
        return [default] * rank
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _padding(op: ir.Operation, rank: int) -> list[tuple[int, int]]:
    if "padding" not in op.attributes:
        return [(0, 0)] * rank
    values = [int(v) for v in ir.DenseIntElementsAttr(op.attributes["padding"])]
    return [(values[2 * i], values[2 * i + 1]) for i in range(rank)]


@dataclasses.dataclass(frozen=True)
class PrefixWindow:
    dim: int
    reverse: bool  # suffix reductions (padding after the axis)


def match(op: ir.Operation) -> PrefixWindow | None:
    """The scan a reduce_window computes, None if it is not a full-axis prefix window."""
    if len(op.operands) != 2 or len(op.results) != 1:
        return None
    x, init = op.operands
    shape = sh.shape_of(x)
    rank = len(shape)
    if rank == 0 or op.results[0].type != x.type:
        return None
    window = _i64_list(op, "window_dimensions", rank, 1)
    if any(_i64_list(op, name, rank, 1) != [1] * rank
           for name in ("window_strides", "base_dilations", "window_dilations")):
        return None
    padding = _padding(op, rank)
    wide = [d for d in range(rank) if window[d] != 1]
    if len(wide) != 1:
        return None
    d = wide[0]
    n, w = shape[d], window[d]
    if n < 2 or w < n or any(padding[i] != (0, 0) for i in range(rank) if i != d):
        return None
    if padding[d] not in ((w - 1, 0), (0, w - 1)):
        return None
    if not _scans_from(op.regions[0], init):
        return None
    if sh.is_half_float(sh.element_type(init)) and n <= HALF_WINDOW_MAX:
        return None  # short: the window lowering rounds at every step, as XLA:CPU does
    reverse = padding[d] == (0, w - 1)
    if reverse and n <= EXACT_SUFFIX_MAX and not _exactly_associative(op.regions[0], sh.element_type(init)):
        return None
    return PrefixWindow(d, reverse)


def _exactly_associative(body: ir.Region, elem: ir.Type) -> bool:
    """Is the order of ``body``'s combinations invisible in its results?"""
    combiner = sh.region_combiner(body)
    return combiner in ("maximum", "minimum", "and", "or", "xor") or (combiner is not None and sh.is_integer(elem))


def _scans_from(body: ir.Region, init: ir.Value) -> bool:
    """Can a running reduction by ``body`` start from ``init`` and ignore the padding?"""
    combiner = sh.region_combiner(body)
    elem = sh.element_type(init)
    if combiner is not None:
        return _scalar_op(combiner, elem) is not None and sh.is_identity(combiner, elem, sh.scalar_constant(init))
    if not isinstance(elem, ir.FloatType) or str(elem) not in ("f32", "f64") or sh.scalar_constant(init) is None:
        return False
    return _is_idempotent_at(body, init)


def _is_idempotent_at(body: ir.Region, init: ir.Value) -> bool:
    """Does ``body(init, init)`` fold to ``init`` (a 0-d constant)? Evaluated by lowering the
    body, applied to the constant, to scalar arith/math ops and letting them fold."""
    from xhlo.pipeline import build_pass_manager  # the pipeline imports this pass

    element = sh.splat_element(init)
    value = ir.DenseElementsAttr.get_splat(init.type, element)
    with ir.Location.unknown():
        probe = ir.Module.create()
        with ir.InsertionPoint(probe.body):
            function = func.FuncOp("probe", ([], [init.type]))
            with ir.InsertionPoint(function.add_entry_block()):
                constant = sh.create("stablehlo.constant", [], [init.type], {"value": value}).result
                func.ReturnOp(sh.inline_region(body, [constant, constant]))
    try:
        build_pass_manager(_FOLD_PIPELINE).run(probe.operation)
    except ir.MLIRError:
        return False
    folded = function.entry_block.operations[-1].operands[0].owner
    return (isinstance(folded, (ir.Operation, ir.OpView)) and folded.name == "arith.constant"
            and ir.DenseElementsAttr(folded.attributes["value"]).get_splat_value() == element)


_FOLD_PIPELINE = "func.func(stablehlo-legalize-to-linalg),xhlo-scalarize-rank0-tensors,canonicalize"


def _scalar_op(combiner: str, elem: ir.Type) -> str | None:
    """The arith op computing ``combiner`` on scalars of ``elem`` (None: not scanned here)."""
    if not isinstance(elem, (ir.FloatType, ir.IntegerType)):
        return None  # complex
    if isinstance(elem, ir.FloatType):
        if str(elem) not in ("f32", "f64", "bf16", "f16"):
            return None  # f8: emulated by xhlo-emulate-small-floats on StableHLO ops
        return {"add": "addf", "multiply": "mulf", "maximum": "maximumf", "minimum": "minimumf"}.get(combiner)
    t = ir.IntegerType(elem)
    unsigned = t.is_unsigned or t.width == 1
    return {"add": "addi", "multiply": "muli", "and": "andi", "or": "ori", "xor": "xori",
            "maximum": "maxui" if unsigned else "maxsi", "minimum": "minui" if unsigned else "minsi"}[combiner]


def _signless(elem: ir.Type) -> ir.Type:
    if isinstance(elem, ir.IntegerType):
        return ir.IntegerType.get_signless(ir.IntegerType(elem).width)
    return elem


def _cast(value: ir.Value, to: ir.Type) -> ir.Value:
    """Reinterpret an unsigned scalar as signless and back (arith takes signless integers);
    stablehlo-convert-to-signless folds the casts away."""
    if value.type == to:
        return value
    return ir.Operation.create("builtin.unrealized_conversion_cast", results=[to], operands=[value]).result


def _running(x: ir.Value, dim: int, outer_dims: list[int], start: ir.Value, reverse: bool, step) -> ir.Value:
    """Loops over ``outer_dims`` around one over ``dim`` (backwards when ``reverse``) that
    carries the result and a running value from ``start``; ``step(outer_ivs, position, result,
    running)`` returns both updated."""
    shape = sh.shape_of(x)

    def scan(outer_ivs: list[ir.Value], out: ir.Value) -> ir.Value:
        n = shape[dim]
        loop = scf.ForOp(_index(0), _index(n), _index(1), [out, start])
        with ir.InsertionPoint(loop.body):
            j = loop.induction_variable
            position = arith.SubIOp(_index(n - 1), j).result if reverse else j
            scf.YieldOp(list(step(outer_ivs, position, *loop.inner_iter_args)))
        return loop.results[0]

    def nest(dims: list[int], ivs: list[ir.Value], out: ir.Value) -> ir.Value:
        if not dims:
            return scan(ivs, out)
        loop = scf.ForOp(_index(0), _index(shape[dims[0]]), _index(1), [out])
        with ir.InsertionPoint(loop.body):
            scf.YieldOp([nest(dims[1:], ivs + [loop.induction_variable], loop.inner_iter_args[0])])
        return loop.results[0]

    return nest(outer_dims, [], tensor.EmptyOp(list(shape), sh.element_type(x)).result)


def _scan(x: ir.Value, init: ir.Value, dim: int, reverse: bool, combine) -> ir.Value:
    """Running reduction of ``x`` along ``dim``: loops over the other dims, the scan innermost;
    ``combine(running, element)`` on scalars of ``x``'s signless element type."""
    elem = sh.element_type(x)
    scalar = _signless(elem)

    def step(outer_ivs, position, carried, acc):
        indices = list(outer_ivs)
        indices.insert(dim, position)
        value = combine(acc, _cast(tensor.ExtractOp(x, indices).result, scalar))
        return tensor.InsertOp(_cast(value, elem), carried, indices).result, value

    others = [i for i in range(len(sh.shape_of(x))) if i != dim]
    return _running(x, dim, others, _cast(tensor.ExtractOp(init, []).result, scalar), reverse, step)


def _scalar_combine(body: ir.Region, elem: ir.Type):
    """``combine`` for ``_scan``: the body's arith op, or the body inlined on 0-d tensors."""
    combiner = sh.region_combiner(body)
    if combiner is not None:
        scalar = _signless(elem)
        name = f"arith.{_scalar_op(combiner, elem)}"
        return lambda acc, element: ir.Operation.create(name, results=[scalar], operands=[acc, element]).result

    def inlined(acc, element):
        result = sh.inline_region(body, [sh.tensor_of(acc), sh.tensor_of(element)])[0]
        return tensor.ExtractOp(result, []).result

    return inlined


def _start(index: ir.Value) -> ir.Value:
    """An index as the 0-d i64 tensor a dynamic_slice start is (canonicalization folds it)."""
    return sh.tensor_of(arith.IndexCastOp(ir.IntegerType.get_signless(64), index).result)


def _scan_rows(x: ir.Value, init: ir.Value, dim: int, reverse: bool, body: ir.Region) -> ir.Value:
    """Running reduction along ``dim`` one slab at a time: the running value is a tensor of
    the dimensions after ``dim``, combined with each slab by the body's op on tensors (it
    vectorizes, and reads memory in order); loops over the dimensions before ``dim``."""
    inner = list(sh.shape_of(x)[dim + 1 :])
    slab = [1] * (dim + 1) + inner
    zero = _start(_index(0))

    def step(outer_ivs, position, carried, acc):
        starts = [_start(i) for i in outer_ivs] + [_start(position)] + [zero] * len(inner)
        value = _combine_tensors(body, acc, sh.reshape(sh.dynamic_slice(x, starts, slab), inner))
        return sh.dynamic_update_slice(carried, sh.reshape(value, slab), starts), value

    return _running(x, dim, list(range(dim)), sh.broadcast_in_dim(init, inner, []), reverse, step)


def _combine_tensors(body: ir.Region, acc: ir.Value, slab: ir.Value) -> ir.Value:
    combiner = sh.region_combiner(body)
    if combiner is not None:
        return sh.binary(combiner, acc, slab)
    return sh.apply_region_elementwise(body, [acc], [slab])[0]


def _lower(op: ir.Operation, window: PrefixWindow) -> None:
    x, init = op.operands
    body = op.regions[0]
    inner = math.prod(sh.shape_of(x)[window.dim + 1 :])
    elem = sh.element_type(x)
    with ir.InsertionPoint(op), op.location:
        if sh.is_half_float(elem):  # a running value in f32, each result rounded
            x, init = sh.convert(x, ir.F32Type.get()), sh.convert(init, ir.F32Type.get())
        if inner >= ROW_SCAN_MIN:
            result = _scan_rows(x, init, window.dim, window.reverse, body)
        else:
            result = _scan(x, init, window.dim, window.reverse, _scalar_combine(body, sh.element_type(x)))
        if sh.is_half_float(elem):
            result = sh.convert(result, elem)
    op.results[0].replace_all_uses_with(result)
    op.erase()


@dataclasses.dataclass(frozen=True)
class ReduceWindowToScan(ModulePass):
    """Rewrite full-axis prefix/suffix reduce_windows (cumsum & co.) as O(n) scans."""

    NAME = "xhlo-reduce-window-to-scan"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.reduce_window"):
            window = match(op)
            if window is not None:
                _lower(op, window)

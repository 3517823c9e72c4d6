"""Ops that take computations: reductions, windows, maps, sorting, control flow,
calls and composites.

Part of ``xb.ops`` (re-exported there). Computations are XlaComputations or
Python callables (traced by ``as_computation``); their signatures are checked
against the operands when the op is built. Region bodies are emitted inside
the StableHLO op; ``Call``/``CompositeCall`` use private functions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from . import shape as shp
from ._support import (
    accepts_builder,
    array,
    as_list,
    bool_attr,
    check_dimensions,
    dense_i64_matrix,
    dims_list,
    i32_attr,
    i64_attr,
    resolve_builder,
    same_element_type,
    scalar_shape,
    structured,
)
from .builder import XlaComputation, XlaOp, as_computation, flatten
from .dynamic import mask_padding
from .ops import (
    Broadcast,
    Gt,
    GtTotalOrder,
    Iota,
    Lt,
    LtTotalOrder,
    Slice,
    Tuple,
    _as_op,
)
from .shape import Shape

__all__ = [
    "Call",
    "CompositeCall",
    "Conditional",
    "Map",
    "OptimizationBarrier",
    "Reduce",
    "ReduceWindow",
    "ReduceWindowWithGeneralPadding",
    "SelectAndScatter",
    "Sort",
    "TopK",
    "While",
]


# -- reductions and mapped computations ---------------------------------------------


def _check_root(op_name: str, comp: XlaComputation, expected: Shape) -> None:
    got = comp.result_shape()
    if not got.equal_ignoring_layout(expected):
        raise TypeError(
            f"{op_name}: computation {comp.name()!r} returns {got}, expected {expected}"
        )


def _collate(shapes: list[Shape]) -> Shape:
    return shapes[0] if len(shapes) == 1 else Shape.tuple_shape(shapes)


def _variadic(op_name: str, operands, init_values):
    operands, inits = as_list(operands), as_list(init_values)
    if not operands or len(operands) != len(inits):
        raise ValueError(
            f"{op_name}: needs N >= 1 operands and as many init values, got {len(operands)} and {len(inits)}"
        )
    shapes = [array(op_name, x, f"operand {i}") for i, x in enumerate(operands)]
    for s in shapes[1:]:
        if s.dimensions() != shapes[0].dimensions():
            raise ValueError(
                f"{op_name}: operands must have the same dimensions, got {', '.join(map(str, shapes))}"
            )
    inits = [_as_op(v, like=x, op_name=op_name) for v, x in zip(inits, operands)]
    for i, (v, s) in enumerate(zip(inits, shapes)):
        vs = array(op_name, v, f"init value {i}")
        if vs.rank() != 0 or vs.element_type() != s.element_type():
            raise TypeError(
                f"{op_name}: init value {i} must be a {s.element_type()} scalar, got {vs}"
            )
    return operands, inits, shapes


@accepts_builder
def Reduce(operands, init_values, computation, dimensions_to_reduce) -> XlaOp:
    """Reduce ``dimensions_to_reduce`` with ``computation(acc..., x...)``."""
    operands, inits, shapes = _variadic("Reduce", operands, init_values)
    rank = shapes[0].rank()
    dims = check_dimensions(
        "Reduce",
        dims_list("Reduce", dimensions_to_reduce, "dimensions_to_reduce"),
        rank,
        "dimension",
        shapes[0],
    )
    scalars = [scalar_shape(s.element_type()) for s in shapes]
    comp = as_computation(computation, scalars * 2, "Reduce")
    _check_root("Reduce", comp, _collate(scalars))
    kept = [d for d in range(rank) if d not in dims]
    out = _collate([Shape(s.element_type(), [s.dimensions()[d] for d in kept]) for s in shapes])
    if not dims:  # nothing to reduce: every element is computation(init, x)
        full = [Broadcast(v, shapes[0].dimensions()) for v in inits]
        return _map_op("Reduce", full + operands, comp, out)
    # padding beyond a dynamic size is ignored: it is replaced by the init value
    operands = [mask_padding(x, init, dims) for x, init in zip(operands, inits)]
    dynamic = {
        kept.index(d): size for x in operands for d, size in x.dynamic_sizes.items() if d in kept
    }

    def emit(em, *values):
        op = sh.create(
            "stablehlo.reduce",
            values,
            em.types(out),
            {"dimensions": sh.dense_i64(sorted(dims))},
            regions=1,
        )
        em.region(op.regions[0], comp)
        return structured(out, op.results)

    return operands[0].builder.add_op("Reduce", out, operands + inits, emit, dynamic_sizes=dynamic)


def _map_op(
    op_name: str, operands: list[XlaOp], comp: XlaComputation, out: Shape, captured=()
) -> XlaOp:
    """``stablehlo.map`` of a scalar computation over all dimensions; ``captured``
    operands feed the computation's trailing parameters from outside the region."""
    rank = operands[0].shape.rank()
    leaves = out.leaves()
    n_args = len(operands)

    def emit(em, *values):
        args, static = list(values[:n_args]), list(values[n_args:])
        results = []
        for k, leaf in enumerate(leaves):  # stablehlo.map has one result: one map per output
            op = sh.create(
                "stablehlo.map",
                args,
                [em.tensor_type(leaf)],
                {"dimensions": sh.dense_i64(range(rank))},
                regions=1,
            )
            em.region(op.regions[0], comp, captured=static, pick=k if len(leaves) > 1 else None)
            results.append(op.result)
        return structured(out, results)

    return operands[0].builder.add_op(op_name, out, list(operands) + list(captured), emit)


@accepts_builder
def Map(operands, computation, dimensions=None, static_operands=()) -> XlaOp:
    """Apply a scalar ``computation`` element-wise over all dimensions of ``operands``;
    ``static_operands`` feed its trailing parameters unchanged."""
    operands = as_list(operands)
    if not operands:
        raise ValueError("Map: needs at least one operand")
    shapes = [array("Map", x, f"operand {i}") for i, x in enumerate(operands)]
    for s in shapes[1:]:
        if s.dimensions() != shapes[0].dimensions():
            raise ValueError(
                f"Map: operands must have the same dimensions, got {', '.join(map(str, shapes))}"
            )
    rank = shapes[0].rank()
    if dimensions is not None and sorted(dims_list("Map", dimensions, "dimensions")) != list(
        range(rank)
    ):
        raise ValueError(f"Map: dimensions {list(dimensions)} must be all dimensions 0..{rank - 1}")
    static = as_list(static_operands)
    comp = as_computation(
        computation,
        [scalar_shape(s.element_type()) for s in shapes] + [s.shape for s in static],
        "Map",
    )
    result = comp.result_shape()
    if result.is_tuple() or result.rank() != 0:
        raise TypeError(f"Map: computation {comp.name()!r} must return a scalar, got {result}")
    out = Shape(result.element_type(), shapes[0].dimensions())
    return _map_op("Map", operands, comp, out, static)


def _window_padding(op_name: str, padding, dims, window, strides, base_dil, win_dil):
    if isinstance(padding, str) or hasattr(padding, "name"):
        kind = str(getattr(padding, "name", padding)).upper().lstrip("K")
        if kind not in ("SAME", "VALID"):
            raise ValueError(
                f"{op_name}: padding must be SAME, VALID or (low, high) pairs, got {padding!r}"
            )
        if kind == "VALID":
            return [(0, 0)] * len(dims)
        out = []
        for d, w, s, bd, wd in zip(dims, window, strides, base_dil, win_dil):
            base = (d - 1) * bd + 1 if d else 0
            eff = (w - 1) * wd + 1
            count = -(-base // s)
            total = max((count - 1) * s + eff - base, 0)
            out.append((total // 2, total - total // 2))
        return out
    pairs = [tuple(int(v) for v in p) for p in padding]
    if len(pairs) != len(dims) or any(len(p) != 2 for p in pairs):
        raise ValueError(
            f"{op_name}: padding needs one (low, high) pair per dimension, got {padding!r}"
        )
    return pairs


def _window_output(
    op_name: str, shape: Shape, window, strides, base_dil, win_dil, pads
) -> list[int]:
    out = []
    for d, (n, w, s, bd, wd, (lo, hi)) in enumerate(
        zip(shape.dimensions(), window, strides, base_dil, win_dil, pads)
    ):
        if w < 1 or s < 1 or bd < 1 or wd < 1:
            raise ValueError(
                f"{op_name}: window, stride and dilations of dimension {d} must be >= 1"
            )
        padded = ((n - 1) * bd + 1 if n else 0) + lo + hi
        if padded < 0:
            raise ValueError(f"{op_name}: padding {(lo, hi)} removes more than dimension {d} of {shape} holds")
        eff = (w - 1) * wd + 1
        out.append(0 if padded < eff else (padded - eff) // s + 1)
    return out


def _window_args(
    op_name, shape, window_dimensions, window_strides, base_dilations, window_dilations
):
    rank = shape.rank()
    window = dims_list(op_name, window_dimensions, "window_dimensions")
    strides = (
        dims_list(op_name, window_strides, "window_strides")
        if window_strides is not None
        else [1] * rank
    )
    base = dims_list(op_name, base_dilations, "base_dilations") if base_dilations else [1] * rank
    wdil = (
        dims_list(op_name, window_dilations, "window_dilations") if window_dilations else [1] * rank
    )
    for what, v in (
        ("window_dimensions", window),
        ("window_strides", strides),
        ("base_dilations", base),
        ("window_dilations", wdil),
    ):
        if len(v) != rank:
            raise ValueError(f"{op_name}: {what} has {len(v)} entries for {shape}")
    return window, strides, base, wdil


@accepts_builder
def ReduceWindow(
    operands,
    init_values,
    computation,
    window_dimensions,
    window_strides=None,
    padding="VALID",
    base_dilations=None,
    window_dilations=None,
) -> XlaOp:
    """Reduce every window of ``operands``; ``padding`` is SAME, VALID or (low, high) pairs."""
    operands, inits, shapes = _variadic("ReduceWindow", operands, init_values)
    window, strides, base, wdil = _window_args(
        "ReduceWindow",
        shapes[0],
        window_dimensions,
        window_strides,
        base_dilations,
        window_dilations,
    )
    pads = _window_padding(
        "ReduceWindow", padding, shapes[0].dimensions(), window, strides, base, wdil
    )
    out_dims = _window_output("ReduceWindow", shapes[0], window, strides, base, wdil, pads)
    scalars = [scalar_shape(s.element_type()) for s in shapes]
    comp = as_computation(computation, scalars * 2, "ReduceWindow")
    _check_root("ReduceWindow", comp, _collate(scalars))
    out = _collate([Shape(s.element_type(), out_dims) for s in shapes])

    def emit(em, *values):
        attrs = {
            "window_dimensions": sh.dense_i64(window),
            "window_strides": sh.dense_i64(strides),
            "base_dilations": sh.dense_i64(base),
            "window_dilations": sh.dense_i64(wdil),
            "padding": dense_i64_matrix(pads, 2),
        }
        op = sh.create("stablehlo.reduce_window", values, em.types(out), attrs, regions=1)
        em.region(op.regions[0], comp)
        return structured(out, op.results)

    return operands[0].builder.add_op("ReduceWindow", out, operands + inits, emit)


def ReduceWindowWithGeneralPadding(
    operand,
    init_value,
    computation,
    window_dimensions,
    window_strides,
    base_dilations,
    window_dilations,
    padding,
) -> XlaOp:
    return ReduceWindow(
        operand,
        init_value,
        computation,
        window_dimensions,
        window_strides,
        padding,
        base_dilations,
        window_dilations,
    )


def SelectAndScatter(
    operand, select, window_dimensions, window_strides, padding, source, init_value, scatter
) -> XlaOp:
    """Scatter ``source`` into the elements each window's ``select`` picks."""
    shape = array("SelectAndScatter", operand)
    t = shape.element_type()
    window, strides, base, wdil = _window_args(
        "SelectAndScatter", shape, window_dimensions, window_strides, None, None
    )
    pads = _window_padding(
        "SelectAndScatter", padding, shape.dimensions(), window, strides, base, wdil
    )
    out_dims = _window_output("SelectAndScatter", shape, window, strides, base, wdil, pads)
    sshape = array("SelectAndScatter", source, "source")
    if list(sshape.dimensions()) != out_dims or sshape.element_type() != t:
        raise ValueError(
            f"SelectAndScatter: source {sshape} must have the window output shape {t}{out_dims}"
        )
    init_value = _as_op(init_value, like=operand, op_name="SelectAndScatter")
    if array("SelectAndScatter", init_value, "init_value").rank() != 0:
        raise ValueError(f"SelectAndScatter: init_value must be a scalar, got {init_value.shape}")
    same_element_type("SelectAndScatter", operand, init_value)
    scalar = scalar_shape(t)
    sel = as_computation(select, [scalar, scalar], "SelectAndScatter", "select")
    _check_root("SelectAndScatter", sel, scalar_shape("pred"))
    sca = as_computation(scatter, [scalar, scalar], "SelectAndScatter", "scatter")
    _check_root("SelectAndScatter", sca, scalar)
    out = shape.without_layout()

    def emit(em, x, src, init):
        attrs = {
            "window_dimensions": sh.dense_i64(window),
            "window_strides": sh.dense_i64(strides),
            "padding": dense_i64_matrix(pads, 2),
        }
        op = sh.create(
            "stablehlo.select_and_scatter", [x, src, init], [em.tensor_type(out)], attrs, regions=2
        )
        em.region(op.regions[0], sel)
        em.region(op.regions[1], sca)
        return op.result

    return operand.builder.add_op("SelectAndScatter", out, [operand, source, init_value], emit)


def _default_comparator(shapes: list[Shape]):
    def less(*args):
        return (
            LtTotalOrder(args[0], args[1])
            if shp.is_float(shapes[0].element_type())
            else Lt(args[0], args[1])
        )

    return less


@accepts_builder
def Sort(operands, comparator=None, dimension: int = -1, is_stable: bool = False) -> XlaOp:
    """Sort ``operands`` together along ``dimension``; ``comparator`` gets
    (x0_i, x0_j, x1_i, x1_j, ...) and returns pred (default: ascending operand 0)."""
    if isinstance(comparator, int) and not isinstance(comparator, bool):
        comparator, dimension = None, comparator  # xla_client order Sort(ops, dimension)
    operands = as_list(operands)
    if not operands:
        raise ValueError("Sort: needs at least one operand")
    shapes = [array("Sort", x, f"operand {i}") for i, x in enumerate(operands)]
    for s in shapes[1:]:
        if s.dimensions() != shapes[0].dimensions():
            raise ValueError(
                f"Sort: operands must have the same dimensions, got {', '.join(map(str, shapes))}"
            )
    if shapes[0].rank() == 0:
        raise ValueError("Sort: operands must have rank >= 1")
    (d,) = check_dimensions("Sort", [dimension], shapes[0].rank(), "dimension", shapes[0])
    params = [scalar_shape(s.element_type()) for s in shapes for _ in range(2)]
    comp = as_computation(
        comparator if comparator is not None else _default_comparator(shapes),
        params,
        "Sort",
        "comparator",
    )
    _check_root("Sort", comp, scalar_shape("pred"))
    out = _collate([s.without_layout() for s in shapes])

    def emit(em, *values):
        attrs = {"dimension": i64_attr(d), "is_stable": bool_attr(is_stable)}
        op = sh.create("stablehlo.sort", values, em.types(out), attrs, regions=1)
        em.region(op.regions[0], comp)
        return structured(out, op.results)

    return operands[0].builder.add_op("Sort", out, operands, emit)


def TopK(operand, k: int, largest: bool = True) -> XlaOp:
    """(values, s32 indices) of the k largest (or smallest) entries of the last
    dimension; ties keep the lower index first."""
    shape = array("TopK", operand)
    if shape.rank() == 0 or not 0 <= k <= shape.dimensions()[-1]:
        raise ValueError(
            f"TopK: k={k} must be in [0, {shape.dimensions()[-1] if shape.rank() else 0}] for {shape}"
        )
    if shape.element_type() == "pred" or shp.is_complex(shape.element_type()):
        raise TypeError(f"TopK: operand must be integer or floating-point, got {shape}")
    last = shape.rank() - 1
    index = Iota(operand.builder, Shape("s32", shape.dimensions()), last)
    before = GtTotalOrder if largest else LtTotalOrder
    if not shp.is_float(shape.element_type()):
        before = Gt if largest else Lt
    values, indices = Sort([operand, index], lambda a, b, _i, _j: before(a, b), last, True)
    start, limit = [0] * shape.rank(), list(shape.dimensions())
    limit[-1] = k
    return Tuple(operand.builder, [Slice(values, start, limit), Slice(indices, start, limit)])


# -- control flow and calls --------------------------------------------------------


def While(condition, body, init) -> XlaOp:
    """Run ``body`` (T -> T) while ``condition`` (T -> pred) holds, from ``init``."""
    if not isinstance(init, XlaOp):
        if isinstance(init, (list, tuple)):
            init = Tuple(resolve_builder("While", init), list(init))
        else:
            raise TypeError(f"While: init must be an XlaOp, got {type(init).__name__}")
    state = init.shape
    cond = as_computation(condition, [state], "While", "condition")
    _check_root("While", cond, scalar_shape("pred"))
    loop = as_computation(body, [state], "While", "body")
    _check_root("While", loop, state)
    out = state.without_layout()

    def emit(em, value):
        flat = flatten(value)
        op = sh.create("stablehlo.while", flat, [v.type for v in flat], regions=2)
        em.region(op.regions[0], cond)
        em.region(op.regions[1], loop)
        return structured(out, op.results)

    return init.builder.add_op("While", out, [init], emit)


def Conditional(*args, **kwargs) -> XlaOp:
    """``Conditional(predicate, true_operand, true_computation, false_operand, false_computation)``
    or ``Conditional(branch_index, branch_computations, branch_operands)``
    (an index out of range runs the last branch)."""
    names5 = ("predicate", "true_operand", "true_computation", "false_operand", "false_computation")
    names3 = ("branch_index", "branch_computations", "branch_operands")
    if len(args) + len(kwargs) == 5:
        bound = dict(zip(names5, args), **kwargs)
        return _conditional(
            "Conditional",
            bound["predicate"],
            "pred",
            [bound["true_computation"], bound["false_computation"]],
            [bound["true_operand"], bound["false_operand"]],
        )
    bound = dict(zip(names3, args), **kwargs)
    return _conditional(
        "Conditional",
        bound["branch_index"],
        "s32",
        as_list(bound["branch_computations"]),
        as_list(bound["branch_operands"]),
    )


def _conditional(op_name: str, selector, selector_type: str, computations, operands) -> XlaOp:
    ss = array(op_name, selector, "predicate" if selector_type == "pred" else "branch_index")
    if ss.rank() != 0 or ss.element_type() != selector_type:
        raise TypeError(f"{op_name}: the selector must be a {selector_type} scalar, got {ss}")
    if not computations or len(computations) != len(operands):
        raise ValueError(
            f"{op_name}: needs as many branch operands as computations, got {len(operands)} and {len(computations)}"
        )
    for i, x in enumerate(operands):
        if not isinstance(x, XlaOp):
            raise TypeError(
                f"{op_name}: branch operand {i} must be an XlaOp, got {type(x).__name__}"
            )
    comps = [
        as_computation(c, [x.shape], op_name, f"branch_{i}")
        for i, (c, x) in enumerate(zip(computations, operands))
    ]
    out = comps[0].result_shape().without_layout()
    for c in comps[1:]:
        _check_root(op_name, c, out)
    n = len(comps)

    def emit(em, sel, *values):
        types = em.types(out)
        if selector_type == "pred":  # regions: true branch, then false branch
            op = sh.create("stablehlo.if", [sel], types, regions=2)
            em.captured_region(op.regions[0], comps[0], [values[0]])
            em.captured_region(op.regions[1], comps[1], [values[1]])
        else:
            op = sh.create("stablehlo.case", [sel], types, regions=n)
            for i in range(n):
                em.captured_region(op.regions[i], comps[i], [values[i]])
        return structured(out, op.results)

    return selector.builder.add_op(op_name, out, [selector, *operands], emit)


@accepts_builder
def Call(computation, *operands) -> XlaOp:
    """``func.call`` of ``computation`` (a private function) with ``operands``."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    builder = resolve_builder("Call", *operands)
    comp = as_computation(computation, [o.shape for o in operands], "Call")
    out = comp.result_shape().without_layout()

    def emit(em, *values):
        symbol = em.function(comp)
        op = sh.create(
            "func.call",
            flatten(list(values)),
            em.types(out),
            {"callee": ir.FlatSymbolRefAttr.get(symbol)},
        )
        return structured(out, op.results)

    return builder.add_op("Call", out, list(operands), emit)


def _inline(
    computation: XlaComputation, operands: Sequence[XlaOp], op_name: str = "Inline"
) -> XlaOp:
    """``computation(*operands)`` emitted in place (no call), for builder-level decompositions."""
    comp = as_computation(computation, [o.shape for o in operands], op_name)
    out = comp.result_shape().without_layout()
    builder = resolve_builder(op_name, *operands)
    return builder.add_op(op_name, out, list(operands), lambda em, *values: em.values(comp, values))


@accepts_builder
def CompositeCall(computation, operands, name: str, attributes=None, version: int = 0) -> XlaOp:
    """A ``stablehlo.composite`` named ``name`` whose decomposition is ``computation``.
    ``attributes`` is an MLIR dictionary text (``"{n = 1 : i32}"``) or a dict."""
    operands = as_list(operands)
    builder = resolve_builder("CompositeCall", operands)
    if not isinstance(name, str) or not name:
        raise ValueError("CompositeCall: name must be a non-empty string")
    comp = as_computation(computation, [o.shape for o in operands], "CompositeCall")
    out = comp.result_shape().without_layout()
    if (
        attributes is not None
        and not isinstance(attributes, (str, dict))
        and not callable(attributes)
    ):
        raise TypeError(
            f"CompositeCall: attributes must be a string or dict, got {type(attributes).__name__}"
        )

    def emit(em, *values):
        symbol = em.function(comp)
        attrs = {
            "name": ir.StringAttr.get(name),
            "composite_attributes": _dict_attr(attributes),
            "decomposition": ir.FlatSymbolRefAttr.get(symbol),
            "version": i32_attr(version),
        }
        op = sh.create("stablehlo.composite", flatten(list(values)), em.types(out), attrs)
        return structured(out, op.results)

    return builder.add_op("CompositeCall", out, operands, emit)


def _dict_attr(attributes) -> ir.Attribute:
    if callable(attributes):
        attributes = attributes()
    if attributes is None:
        return ir.DictAttr.get({})
    if isinstance(attributes, str):
        text = attributes.strip() or "{}"
        try:
            return ir.DictAttr(
                ir.Attribute.parse(text if text.startswith("{") else "{" + text + "}")
            )
        except (ir.MLIRError, ValueError) as err:
            raise ValueError(
                f"CompositeCall: cannot parse attributes {attributes!r}: {err}"
            ) from None
    out = {}
    for key, value in attributes.items():
        if isinstance(value, ir.Attribute):
            out[key] = value
        elif isinstance(value, bool):
            out[key] = ir.BoolAttr.get(value)
        elif isinstance(value, int):
            out[key] = i64_attr(value)
        elif isinstance(value, float):
            out[key] = ir.FloatAttr.get(ir.F32Type.get(), value)
        elif isinstance(value, str):
            out[key] = ir.StringAttr.get(value)
        else:
            out[key] = ir.DenseElementsAttr.get(np.asarray(value))
    return ir.DictAttr.get(out)


def OptimizationBarrier(operand) -> XlaOp:
    """Forces ``operand`` (an array or tuple) to be computed before its users."""
    if not isinstance(operand, XlaOp):
        raise TypeError(
            f"OptimizationBarrier: operand must be an XlaOp, got {type(operand).__name__}"
        )
    out = operand.shape.without_layout()

    def emit(em, value):
        flat = flatten(value)
        op = sh.create("stablehlo.optimization_barrier", flat, [v.type for v in flat])
        return structured(out, op.results)

    return operand.builder.add_op("OptimizationBarrier", out, [operand], emit)

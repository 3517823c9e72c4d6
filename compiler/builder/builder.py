"""XlaBuilder, XlaOp and XlaComputation: a graph of typed ops emitted as StableHLO.

Building records a Python graph: every op checks its operand shapes and infers
its result shape when it is created, so mistakes raise ``ValueError`` /
``TypeError`` naming the op before any MLIR exists. ``XlaComputation`` then
emits the graph into a fresh MLIR context on demand: the entry computation
becomes ``@main``; computations used by ``Call``/``CompositeCall`` become
private functions; computations of reductions, comparators and control flow
are emitted inside the op's region. Tuples never reach the IR: a tuple value
is a Python list of MLIR values while emitting.
"""

from __future__ import annotations

import inspect
import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from xhlo._mlir import ir, new_context
from xhlo.dialects import stablehlo as sh

from . import shape as shp
from .shape import Layout, Shape

_local = threading.local()


def _builder_stack() -> list:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def current_builder() -> XlaBuilder | None:
    """The innermost builder entered with ``with builder:`` (or building a callable)."""
    stack = _builder_stack()
    return stack[-1] if stack else None


# -- XlaOp -------------------------------------------------------------------------

EmitFn = Callable[..., Any]  # (emitter, *operand values) -> ir.Value | list


class XlaOp:
    """A value of a computation being built: its shape and how to emit it."""

    __slots__ = (
        "__weakref__",
        "_emit",
        "_shape",
        "builder",
        "dynamic_sizes",
        "element_dynamic_sizes",
        "op_name",
        "operands",
    )

    def __init__(
        self,
        builder: XlaBuilder,
        shape: Shape,
        operands: Sequence[XlaOp],
        emit: EmitFn,
        op_name: str,
    ):
        self.builder = builder
        self._shape = shape
        self.operands = tuple(operands)
        self._emit = emit
        self.op_name = op_name
        # dimension -> s32 scalar XlaOp of its runtime size (SetDimensionSize,
        # DynamicReshape); ``shape`` gives the static bounds
        self.dynamic_sizes: dict[int, XlaOp] = {}
        # of a Tuple: each element's dynamic_sizes (GetTupleElement gives them back)
        self.element_dynamic_sizes: tuple[dict[int, XlaOp], ...] = ()

    @property
    def shape(self) -> Shape:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._shape.numpy_dtype()

    @property
    def ndim(self) -> int:
        return self._shape.rank()

    def __repr__(self) -> str:
        return f"XlaOp({self.op_name}: {self._shape})"

    def __bool__(self):
        raise TypeError(
            f"an XlaOp ({self}) has no truth value while building; use ops.Select or ops.Conditional"
        )

    __hash__ = object.__hash__
    __array_ufunc__ = None  # numpy scalars on the left defer to XlaOp's reflected operators

    def __len__(self) -> int:
        if self._shape.is_tuple():
            return len(self._shape.tuple_shapes())
        if self._shape.rank() == 0:
            raise TypeError(f"len() of a scalar XlaOp ({self})")
        return self._shape.dimensions()[0]

    def __iter__(self):
        if not self._shape.is_tuple():
            raise TypeError(f"only tuple XlaOps can be unpacked, not {self}")
        from . import ops

        return iter([ops.GetTupleElement(self, i) for i in range(len(self._shape.tuple_shapes()))])

    def __getitem__(self, key):
        from . import ops

        return ops._getitem(self, key)

    # arithmetic, mapped to the ops of the same meaning
    def _binary(self, name: str, other, reverse: bool = False):
        from . import ops

        other = ops._as_op(other, like=self, op_name=name)
        lhs, rhs = (other, self) if reverse else (self, other)
        return getattr(ops, name)(lhs, rhs)

    def __add__(self, o):
        return self._binary("Add", o)

    def __radd__(self, o):
        return self._binary("Add", o, True)

    def __sub__(self, o):
        return self._binary("Sub", o)

    def __rsub__(self, o):
        return self._binary("Sub", o, True)

    def __mul__(self, o):
        return self._binary("Mul", o)

    def __rmul__(self, o):
        return self._binary("Mul", o, True)

    def __truediv__(self, o):
        return self._binary("Div", o)

    def __rtruediv__(self, o):
        return self._binary("Div", o, True)

    def __mod__(self, o):
        return self._binary("Rem", o)

    def __rmod__(self, o):
        return self._binary("Rem", o, True)

    def __pow__(self, o):
        return self._binary("Pow", o)

    def __rpow__(self, o):
        return self._binary("Pow", o, True)

    def __and__(self, o):
        return self._binary("And", o)

    def __rand__(self, o):
        return self._binary("And", o, True)

    def __or__(self, o):
        return self._binary("Or", o)

    def __ror__(self, o):
        return self._binary("Or", o, True)

    def __xor__(self, o):
        return self._binary("Xor", o)

    def __rxor__(self, o):
        return self._binary("Xor", o, True)

    def __lshift__(self, o):
        return self._binary("ShiftLeft", o)

    def __lt__(self, o):
        return self._binary("Lt", o)

    def __le__(self, o):
        return self._binary("Le", o)

    def __gt__(self, o):
        return self._binary("Gt", o)

    def __ge__(self, o):
        return self._binary("Ge", o)

    def __eq__(self, o):
        return self._binary("Eq", o)

    def __ne__(self, o):
        return self._binary("Ne", o)

    def __rshift__(self, o):
        name = (
            "ShiftRightLogical"
            if shp.is_unsigned_int(self._shape.element_type())
            else "ShiftRightArithmetic"
        )
        return self._binary(name, o)

    def __matmul__(self, o):
        from . import ops

        return ops._matmul(self, ops._as_op(o, like=self))

    def __rmatmul__(self, o):
        from . import ops

        return ops._matmul(ops._as_op(o, like=self), self)

    def __neg__(self):
        from . import ops

        return ops.Neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        from . import ops

        return ops.Abs(self)

    def __invert__(self):
        from . import ops

        return ops.Not(self)

    @property
    def T(self) -> XlaOp:
        from . import ops

        return ops.Transpose(self, tuple(range(self.ndim - 1, -1, -1)))


# -- XlaBuilder --------------------------------------------------------------------


class XlaBuilder:
    """Collects the ops of one computation; ``build()`` makes an XlaComputation."""

    _ids = itertools.count()

    def __init__(self, name: str = "builder"):
        self.name = name
        self._ops: list[XlaOp] = []
        self._side_effects: list[XlaOp] = []  # kept even when the root does not use them
        self._parameters: dict[int, XlaOp] = {}
        self._serial = next(self._ids)

    def __repr__(self) -> str:
        return f"XlaBuilder({self.name!r}, {len(self._ops)} ops)"

    def __enter__(self) -> XlaBuilder:
        _builder_stack().append(self)
        return self

    def __exit__(self, *exc) -> None:
        stack = _builder_stack()
        if stack and stack[-1] is self:
            stack.pop()

    def add_op(
        self,
        op_name: str,
        shape: Shape,
        operands: Sequence[XlaOp],
        emit: EmitFn,
        *,
        side_effect: bool = False,
        dynamic_sizes: dict[int, XlaOp] | None = None,
    ) -> XlaOp:
        """Append an op whose shape was already checked and inferred.

        A ``side_effect`` op (outfeed, send, a side-effecting custom call) is
        emitted even when the root does not depend on it, as in XLA. Ops that
        handle dynamic dimensions pass the result's ``dynamic_sizes``; for the
        others, see ``_propagated_dynamic_sizes``."""
        for i, operand in enumerate(operands):
            if not isinstance(operand, XlaOp):
                raise TypeError(
                    f"{op_name}: operand {i} is a {type(operand).__name__}, not an XlaOp"
                )
            if operand.builder is not self:
                raise ValueError(
                    f"{op_name}: operand {i} ({operand}) belongs to builder {operand.builder.name!r}, "
                    f"not {self.name!r}; pass values into computations as parameters"
                )
        if dynamic_sizes is None:
            dynamic_sizes = _propagated_dynamic_sizes(op_name, shape, operands)
        op = XlaOp(self, shape, operands, emit, op_name)
        op.dynamic_sizes = dict(dynamic_sizes)
        self._ops.append(op)
        if side_effect:
            self._side_effects.append(op)
        return op

    def add_parameter(self, number: int, shape: Shape, name: str = "") -> XlaOp:
        if not isinstance(shape, Shape):
            raise TypeError(f"Parameter: shape must be an xb.Shape, got {type(shape).__name__}")
        if number < 0 or number in self._parameters:
            raise ValueError(
                f"Parameter: parameter number {number} is negative or already used in {self.name!r}"
            )
        op = self.add_op("Parameter", shape, (), _parameter_emit)
        op.op_name = f"Parameter {number}" + (f" ({name})" if name else "")
        self._parameters[number] = op
        return op

    def get_shape(self, op: XlaOp) -> Shape:
        return op.shape

    GetShape = get_shape

    def get_program_shape(self, root: XlaOp | None = None) -> ProgramShape:
        return self.build(root).program_shape()

    def build(self, root=None, *, result_layout=None) -> XlaComputation:
        """The computation whose result is ``root`` (default: the last op added).

        A list/tuple root becomes a tuple. ``result_layout`` (a Shape with a layout,
        a Layout, or a list of them for a tuple root) sets the layout in which the
        compiled executable returns its results.
        """
        from . import ops

        if root is None:
            values = [op for op in self._ops if not op.shape.is_token()]
            if not values:
                raise ValueError(f"build: builder {self.name!r} has no ops with a value")
            root = values[-1]
        elif isinstance(root, (list, tuple)):
            root = ops.Tuple(self, list(root))
        if not isinstance(root, XlaOp):
            raise TypeError(f"build: root must be an XlaOp, got {type(root).__name__}")
        if root.builder is not self:
            raise ValueError(
                f"build: root {root} belongs to builder {root.builder.name!r}, not {self.name!r}"
            )
        numbers = sorted(self._parameters)
        if numbers != list(range(len(numbers))):
            raise ValueError(
                f"build: parameter numbers of {self.name!r} must be 0..n-1, got {numbers}"
            )
        params = [self._parameters[n] for n in numbers]
        layouts = _result_layouts(root.shape, result_layout)
        ops_needed = _reachable(self._ops, [root, *self._side_effects])
        return XlaComputation(self.name, params, root, ops_needed, layouts)

    Build = build


# Ops whose result element (i...) depends only on the operands' element (i...):
# a dynamic dimension of an operand is the same dimension of the result.
ELEMENTWISE_OPS = frozenset(
    "Abs Neg Sign Not Exp Expm1 Log Log1p Logistic Sqrt Rsqrt Cbrt Sin Cos Tan Tanh Erf Cosh "
    "Floor Ceil RoundNearestAfz Round RoundNearestEven IsFinite Clz PopulationCount Real Imag "
    "Conj Add Sub Mul Div Rem Max Min Pow And Or Xor Atan2 ShiftLeft ShiftRightArithmetic "
    "ShiftRightLogical Complex Eq Ne Ge Gt Le Lt EqTotalOrder NeTotalOrder GeTotalOrder "
    "GtTotalOrder LeTotalOrder LtTotalOrder Select Clamp ConvertElementType ReducePrecision".split()
)


def _propagated_dynamic_sizes(op_name: str, shape: Shape, operands: Sequence[XlaOp]) -> dict:
    """The result's dynamic sizes for an op that did not give them: element-wise
    ops keep their operands'; any other op on a dynamic operand is an error,
    since it would silently compute on the padding."""
    if op_name == "Tuple":
        return {}  # the elements' sizes: element_dynamic_sizes
    for i, x in enumerate(operands):
        if any(x.element_dynamic_sizes):
            raise ValueError(
                f"{op_name}: operand {i} is a tuple with dynamic dimensions in its elements "
                "(from SetDimensionSize or DynamicReshape); only GetTupleElement takes them apart"
            )
    dynamic = [(i, x) for i, x in enumerate(operands) if x.dynamic_sizes]
    if not dynamic:
        return {}
    if op_name in ELEMENTWISE_OPS and all(x.shape.rank() == shape.rank() for _, x in dynamic):
        merged: dict[int, XlaOp] = {}
        for _, x in dynamic:
            for d, size in x.dynamic_sizes.items():
                merged.setdefault(d, size)
        return merged
    i, x = dynamic[0]
    raise ValueError(
        f"{op_name}: operand {i} ({x.shape}) has dynamic dimension(s) {sorted(x.dynamic_sizes)} "
        "(from SetDimensionSize or DynamicReshape); dynamic dimensions flow through "
        "element-wise ops, BroadcastInDim, Reduce, GetDimensionSize, DynamicReshape and results"
    )


def _parameter_emit(em, *args):
    raise AssertionError("parameters are bound, never emitted")


def _reachable(ops: list[XlaOp], roots: list[XlaOp]) -> list[XlaOp]:
    """The ops ``roots`` depend on, in creation (hence topological) order."""
    seen, stack = {id(r) for r in roots}, list(roots)
    while stack:
        for operand in stack.pop().operands:
            if id(operand) not in seen:
                seen.add(id(operand))
                stack.append(operand)
    return [op for op in ops if id(op) in seen]


def _result_layouts(shape: Shape, spec) -> list[Layout | None]:
    leaves = shape.leaves()
    if spec is None:
        return [None] * len(leaves)
    is_m2m = isinstance(spec, (list, tuple)) and all(isinstance(d, (int, np.integer)) for d in spec)
    specs = list(spec) if isinstance(spec, (list, tuple)) and not is_m2m else [spec]
    if isinstance(spec, Shape) and spec.is_tuple():
        specs = spec.leaves()
    if len(specs) != len(leaves):
        raise ValueError(
            f"build: {len(specs)} result layouts for {len(leaves)} results of shape {shape}"
        )
    layouts = []
    for leaf, s in zip(leaves, specs):
        if isinstance(s, Shape):
            if not s.equal_ignoring_layout(leaf):
                raise ValueError(f"build: result layout shape {s} does not match the result {leaf}")
            s = s.layout() if s.has_layout() else None
        elif s is not None and not isinstance(s, Layout):
            s = Layout(s)
        if s is not None:
            s.validate(leaf.dimensions())
        layouts.append(s)
    return layouts


# -- XlaComputation ----------------------------------------------------------------


class ProgramShape:
    def __init__(self, parameter_shapes: Sequence[Shape], result_shape: Shape):
        self._params, self._result = tuple(parameter_shapes), result_shape

    def parameter_shapes(self) -> tuple[Shape, ...]:
        return self._params

    def result_shape(self) -> Shape:
        return self._result

    def __repr__(self) -> str:
        return f"({', '.join(map(str, self._params))}) -> {self._result}"


class XlaComputation:
    """A built computation: parameters, the ops they feed, and a root."""

    def __init__(
        self, name: str, params: list[XlaOp], root: XlaOp, ops: list[XlaOp], result_layouts
    ):
        self._name = name
        self.params = params
        self.root = root
        self.ops = ops
        self.result_layouts = result_layouts

    def name(self) -> str:
        return self._name

    def program_shape(self) -> ProgramShape:
        return ProgramShape([p.shape for p in self.params], self.root.shape)

    def parameter_shapes(self) -> tuple[Shape, ...]:
        return tuple(p.shape for p in self.params)

    def result_shape(self) -> Shape:
        return self.root.shape

    def __repr__(self) -> str:
        return f"XlaComputation({self._name!r}: {self.program_shape()})"

    def as_mlir_module(self, context: ir.Context | None = None) -> ir.Module:
        """The StableHLO module (``@main`` plus private callees) in ``context``
        (a fresh xhlo context by default)."""
        return _Emitter(context or new_context()).entry_module(self)

    def as_stablehlo_text(self) -> str:
        return str(self.as_mlir_module())

    def as_mlir_text(self) -> str:  # what xhlo.compile looks for
        return self.as_stablehlo_text()

    def __str__(self) -> str:
        return self.as_stablehlo_text()


# -- computations from callables ---------------------------------------------------


def as_computation(
    computation, param_shapes: Sequence[Shape], op_name: str, name: str | None = None
) -> XlaComputation:
    """``computation`` as an XlaComputation taking ``param_shapes``.

    A Python callable is traced in a sub-builder with one parameter per shape
    (its result may be an XlaOp or a list/tuple of them, i.e. a tuple). An
    XlaComputation is checked against ``param_shapes``.
    """
    if isinstance(computation, XlaComputation):
        got = computation.parameter_shapes()
        if len(got) != len(param_shapes):
            raise TypeError(
                f"{op_name}: computation {computation.name()!r} takes {len(got)} parameters "
                f"({', '.join(map(str, got))}), {len(param_shapes)} expected "
                f"({', '.join(map(str, param_shapes))})"
            )
        for i, (g, want) in enumerate(zip(got, param_shapes)):
            if not g.equal_ignoring_layout(want):
                raise TypeError(
                    f"{op_name}: parameter {i} of computation {computation.name()!r} is {g}, expected {want}"
                )
        return computation
    if not callable(computation):
        raise TypeError(
            f"{op_name}: expected an XlaComputation or a callable, got {type(computation).__name__}"
        )
    from . import ops

    sub = XlaBuilder(
        name or f"{op_name.lower()}_{getattr(computation, '__name__', 'fn').strip('<>')}"
    )
    params = [ops.Parameter(sub, i, s) for i, s in enumerate(param_shapes)]
    args = params
    arity = _positional_arity(computation)
    if len(params) == 1 and params[0].shape.is_tuple() and arity is not None and arity[0] > 1:
        args = list(params[0])  # convenience: unpack a tuple parameter into several arguments
    if arity is not None and not arity[0] <= len(args) <= arity[1]:
        raise TypeError(
            f"{op_name}: computation {sub.name!r} takes {arity[0]} parameters, {len(args)} expected "
            f"({', '.join(str(a.shape) for a in args)})"
        )
    with sub:
        result = computation(*args)
    if isinstance(result, (list, tuple)):
        result = ops.Tuple(sub, [ops._as_op(r, builder=sub) for r in result])
    elif not isinstance(result, XlaOp):
        raise TypeError(
            f"{op_name}: the computation returned {type(result).__name__}, not an XlaOp"
        )
    return sub.build(result)


def _positional_arity(fn) -> tuple[int, float] | None:
    """(required, maximum) positional arguments of ``fn`` (None if unknown)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(1 for p in positional if p.default is p.empty)
    varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
    return required, (float("inf") if varargs else len(positional))


# -- emission ----------------------------------------------------------------------


def flatten(value) -> list[ir.Value]:
    """The MLIR values of a (possibly nested tuple) emitted value."""
    if isinstance(value, list):
        return [v for item in value for v in flatten(item)]
    return [value]


def unflatten(shape: Shape, values: Sequence[ir.Value]):
    """Rebuild the nested-list value of ``shape`` from its flat MLIR values."""
    it = iter(values)

    def build(s: Shape):
        return [build(e) for e in s.tuple_shapes()] if s.is_tuple() else next(it)

    return build(shape)


class _Emitter:
    """Emits computations into one module; every method works at the current
    insertion point and location."""

    def __init__(self, context: ir.Context):
        self.context = context
        self.module: ir.Module | None = None
        self._functions: dict[int, str] = {}
        self._symbols: set[str] = set()

    # types
    def element_type(self, name: str) -> ir.Type:
        return ir.Type.parse(shp.mlir_element_type(name))

    def token_type(self) -> ir.Type:
        return sh.token_type()

    def tensor_type(self, shape: Shape, dims: Sequence[int] | None = None) -> ir.RankedTensorType:
        return sh.tensor_type(
            shape.dimensions() if dims is None else dims, self.element_type(shape.element_type())
        )

    def types(self, shape: Shape) -> list[ir.Type]:
        return [
            self.token_type() if leaf.is_token() else self.tensor_type(leaf)
            for leaf in shape.leaves()
        ]

    # computations
    def values(self, comp: XlaComputation, args: Sequence) -> Any:
        """Emit ``comp``'s ops with its parameters bound to ``args``; its root's value."""
        env: dict[int, Any] = {id(p): a for p, a in zip(comp.params, args)}
        for op in comp.ops:
            if id(op) in env:
                continue
            env[id(op)] = op._emit(self, *[env[id(o)] for o in op.operands])
        return env[id(comp.root)]

    def region(
        self,
        region: ir.Region,
        comp: XlaComputation,
        captured: Sequence = (),
        pick: int | None = None,
    ) -> None:
        """Fill ``region`` with a block taking ``comp``'s flattened parameters and
        returning its flattened root (reduction bodies, comparators, loops).

        ``captured`` values from the enclosing scope bind the trailing parameters;
        ``pick`` returns only that leaf of the root.
        """
        params = comp.params[: len(comp.params) - len(captured)]
        arg_types = [t for p in params for t in self.types(p.shape)]
        block = region.blocks.append(*arg_types)
        with ir.InsertionPoint(block):
            args, flat = [], list(block.arguments)
            for p in params:
                n = len(p.shape.leaves())
                args.append(unflatten(p.shape, flat[:n]))
                flat = flat[n:]
            results = flatten(self.values(comp, args + list(captured)))
            sh.create("stablehlo.return", results if pick is None else [results[pick]], [])

    def captured_region(self, region: ir.Region, comp: XlaComputation, args: Sequence) -> None:
        """A region without arguments computing ``comp(*args)`` on values from
        the enclosing scope (``stablehlo.if``/``case`` branches)."""
        block = region.blocks.append()
        with ir.InsertionPoint(block):
            sh.create("stablehlo.return", flatten(self.values(comp, args)), [])

    def function(self, comp: XlaComputation) -> str:
        """The symbol of a private ``func.func`` computing ``comp`` (emitted once)."""
        key = id(comp)
        if key not in self._functions:
            symbol = self._unique_symbol(comp.name())
            self._functions[key] = symbol
            with ir.InsertionPoint(self.module.body):
                self._emit_function(comp, symbol, private=True)
        return self._functions[key]

    def _unique_symbol(self, name: str) -> str:
        base = "".join(c if c.isalnum() or c in "_." else "_" for c in name) or "computation"
        symbol, n = base, 0
        while symbol in self._symbols or symbol == "main":
            n += 1
            symbol = f"{base}_{n}"
        self._symbols.add(symbol)
        return symbol

    def _emit_function(
        self, comp: XlaComputation, symbol: str, *, private: bool, layouts: bool = False
    ):
        param_types = []
        for p in comp.params:
            for leaf in p.shape.leaves():
                if leaf.is_token():
                    param_types.append(self.token_type())
                else:
                    param_types.append(
                        self._boundary_type(leaf) if layouts else self.tensor_type(leaf)
                    )
        ftype = ir.FunctionType.get(param_types, [])
        attrs = {"sym_name": ir.StringAttr.get(symbol), "function_type": ir.TypeAttr.get(ftype)}
        if private:
            attrs["sym_visibility"] = ir.StringAttr.get("private")
        func = ir.Operation.create("func.func", attributes=attrs, regions=1)
        block = func.regions[0].blocks.append(*param_types)
        with ir.InsertionPoint(block):
            flat = list(block.arguments)
            if layouts:
                leaves = [leaf for p in comp.params for leaf in p.shape.leaves()]
                flat = [from_boundary(v, leaf) for v, leaf in zip(flat, leaves)]
            args = []
            for p in comp.params:
                n = len(p.shape.leaves())
                args.append(unflatten(p.shape, flat[:n]))
                flat = flat[n:]
            results = flatten(self.values(comp, args))
            if layouts:
                results = [
                    to_boundary(v, leaf, layout)
                    for v, leaf, layout in zip(
                        results, comp.root.shape.leaves(), comp.result_layouts
                    )
                ]
            sh.create("func.return", results, [])
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(param_types, [r.type for r in results])
        )
        return func

    def _boundary_type(self, leaf: Shape) -> ir.Type:
        if leaf.has_default_layout():
            return self.tensor_type(leaf)
        return self.tensor_type(leaf, shp.physical_dimensions(leaf))

    def entry_module(self, comp: XlaComputation) -> ir.Module:
        with self.context, ir.Location.unknown():
            self.module = ir.Module.create()
            self._symbols.add("main")
            with ir.InsertionPoint(self.module.body):
                self._emit_function(comp, "main", private=False, layouts=True)
            self.module.operation.verify()
            return self.module


# -- layouts at the entry boundary (SEMANTICS 3.7) ---------------------------------


def _physical_steps(leaf: Shape):
    """The layout as array steps from logical to physical (pad/reshape/transpose)."""
    layout = leaf.layout()
    order = list(reversed(layout.minor_to_major))
    steps = [("transpose", order)]
    bounds = [leaf.dimensions()[d] for d in order]
    padded = [(layout.padded_dimensions or leaf.dimensions())[d] for d in order]
    if padded != bounds:
        steps.append(("pad", padded))
        bounds = padded
    for tile in layout.tiles:
        k = len(tile)
        lead, tail = bounds[:-k], bounds[-k:]
        merged, kept, carry = [], [], 1
        for b, t in zip(tail, tile):
            carry *= b
            if t != shp.COMBINE:
                merged.append(carry)
                kept.append(t)
                carry = 1
        if merged != tail:
            steps.append(("reshape", lead + merged))
        full = [-(-b // t) * t for b, t in zip(merged, kept)]
        if full != merged:
            steps.append(("pad", lead + full))
        counts = [f // t for f, t in zip(full, kept)]
        split = lead + [x for c, t in zip(counts, kept) for x in (c, t)]
        steps.append(("reshape", split))
        n = len(lead)
        perm = (
            list(range(n))
            + [n + 2 * i for i in range(len(kept))]
            + [n + 2 * i + 1 for i in range(len(kept))]
        )
        steps.append(("transpose", perm))
        bounds = lead + counts + kept
    return steps


def to_boundary(value: ir.Value, leaf: Shape, layout: Layout | None) -> ir.Value:
    """Logical result -> its physical buffer in ``layout``."""
    if layout is None or layout.is_default():
        return value
    shape = leaf.with_layout(layout)
    fill = sh.constant(layout.padding_value, sh.element_type(value))
    for kind, arg in _physical_steps(shape):
        if kind == "transpose":
            if arg != sorted(arg):
                value = sh.transpose(value, arg)
        elif kind == "reshape":
            value = sh.reshape(value, arg)
        else:
            cur = sh.shape_of(value)
            value = sh.pad(
                value, fill, [0] * len(cur), [p - c for p, c in zip(arg, cur)], [0] * len(cur)
            )
    return value


def from_boundary(value: ir.Value, leaf: Shape) -> ir.Value:
    """Physical parameter buffer -> the logical array."""
    if leaf.has_default_layout():
        return value
    steps = _physical_steps(leaf)
    shapes = [list(leaf.dimensions())]
    for kind, arg in steps:  # the shape before each step, to undo it
        cur = shapes[-1]
        if kind == "transpose":
            shapes.append([cur[p] for p in arg])
        else:
            shapes.append(list(arg))
    for (kind, arg), before in zip(reversed(steps), reversed(shapes[:-1])):
        if kind == "transpose":
            inverse = [arg.index(i) for i in range(len(arg))]
            if inverse != sorted(inverse):
                value = sh.transpose(value, inverse)
        elif kind == "reshape":
            value = sh.reshape(value, before)
        else:
            value = sh.slice(value, [0] * len(before), before)
    return value

"""Typed builders for StableHLO ops, over the provider's generic op creation.

The bindings wheel ships no generated StableHLO op classes, so every op is made
with ``ir.Operation.create``; these helpers compute result types and attribute
encodings once. They insert at the current ``ir.InsertionPoint`` with the
current ``ir.Location`` (use ``with ir.InsertionPoint(op), op.location:``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from xhlo._mlir import ir, stablehlo_api

# -- types -------------------------------------------------------------------------


def tensor_type(shape: Sequence[int], element_type: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element_type)


def shape_of(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def element_type(value: ir.Value) -> ir.Type:
    return ir.RankedTensorType(value.type).element_type


def i1() -> ir.Type:
    return ir.IntegerType.get_signless(1)


def i32() -> ir.Type:
    return ir.IntegerType.get_signless(32)


def i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def scalar_type(t: ir.Type) -> ir.Type:
    """The element type of a shaped (tensor, vector, memref) type; a scalar type itself."""
    return ir.ShapedType(t).element_type if isinstance(t, ir.ShapedType) else t


def with_element(t: ir.Type, element: ir.Type) -> ir.Type:
    """A vector type ``t`` with another element type; ``element`` for a scalar type."""
    if isinstance(t, ir.VectorType):
        return ir.VectorType.get(ir.VectorType(t).shape, element)
    return element


def is_integer(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType)


def is_half_float(t: ir.Type) -> bool:
    """bf16 or f16 (an element type): what XLA:CPU, and xhlo, compute on in f32."""
    return isinstance(t, (ir.BF16Type, ir.F16Type))


def is_unsigned(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).is_unsigned


def integer_range(width: int, signed: bool) -> tuple[int, int]:
    """(lowest, highest) value of a ``width``-bit integer."""
    return (-(2 ** (width - 1)), 2 ** (width - 1) - 1) if signed else (0, 2**width - 1)


def dense_i64(values: Sequence[int]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def dense_bool(values: Sequence[bool]) -> ir.Attribute:
    return ir.DenseBoolArrayAttr.get([bool(v) for v in values])


# -- rank-0 tensors and scalars ------------------------------------------------------


def element_of(value: ir.Value) -> ir.Value:
    """``tensor<T>`` -> ``T`` (``tensor.extract``): a predicate, an index, loop state."""
    return ir.Operation.create("tensor.extract", results=[element_type(value)], operands=[value]).result


def tensor_of(scalar: ir.Value) -> ir.Value:
    """``T`` -> ``tensor<T>`` (``tensor.from_elements``); canonicalization folds it into an
    ``element_of`` that reads it."""
    t = ir.RankedTensorType.get([], scalar.type)
    return ir.Operation.create("tensor.from_elements", results=[t], operands=[scalar]).result


# -- generic creation ----------------------------------------------------------------


def create(
    name: str,
    operands: Sequence[ir.Value],
    result_types: Sequence[ir.Type],
    attributes: dict[str, ir.Attribute] | None = None,
    regions: int = 0,
) -> ir.Operation:
    """Create ``name`` at the current insertion point."""
    return ir.Operation.create(
        name,
        results=list(result_types),
        operands=list(operands),
        attributes=attributes or {},
        regions=regions,
    )


def _one(name, operands, result_type, attributes=None) -> ir.Value:
    return create(name, operands, [result_type], attributes).result


# -- constants ---------------------------------------------------------------------


def constant(value, like: ir.Type) -> ir.Value:
    """A splat constant of tensor type ``like`` (or of a scalar element type -> 0-d)."""
    ttype = like if isinstance(like, ir.RankedTensorType) else tensor_type([], like)
    elem = ttype.element_type
    if isinstance(elem, ir.IntegerType):
        if ir.IntegerType(elem).width == 1:
            scalar = ir.BoolAttr.get(bool(value))
        else:
            scalar = ir.IntegerAttr.get(elem, int(value))
    elif isinstance(elem, ir.ComplexType):
        # the bindings cannot wrap a complex DenseElementsAttr (Attribute.parse raises
        # "Can't cast unknown element type"): build it from two real splats instead
        part_type = tensor_type(ttype.shape, ir.ComplexType(elem).element_type)
        re, im = constant(complex(value).real, part_type), constant(complex(value).imag, part_type)
        return _one("stablehlo.complex", [re, im], ttype)
    else:
        scalar = ir.FloatAttr.get(elem, float(value))
    attr = ir.DenseElementsAttr.get_splat(ttype, scalar)
    return _one("stablehlo.constant", [], ttype, {"value": attr})


def constant_array(array: np.ndarray, elem: ir.Type | None = None) -> ir.Value:
    """A dense constant from a numpy array (int and float dtypes)."""
    array = np.ascontiguousarray(array)
    if elem is None:
        attr = ir.DenseElementsAttr.get(array)
    else:
        attr = ir.DenseElementsAttr.get(array, type=elem)
    return _one("stablehlo.constant", [], attr.type, {"value": attr})


def index_scalar(value: int, elem: ir.Type | None = None) -> ir.Value:
    """A 0-d i32 (or ``elem``) constant, e.g. a dynamic_slice start."""
    return constant(value, elem or i32())


# -- elementwise -------------------------------------------------------------------


def unary(name: str, x: ir.Value) -> ir.Value:
    return _one(f"stablehlo.{name}", [x], x.type)


def binary(name: str, a: ir.Value, b: ir.Value) -> ir.Value:
    return _one(f"stablehlo.{name}", [a, b], a.type)


def add(a, b):
    return binary("add", a, b)


def subtract(a, b):
    return binary("subtract", a, b)


def multiply(a, b):
    return binary("multiply", a, b)


def maximum(a, b):
    return binary("maximum", a, b)


def minimum(a, b):
    return binary("minimum", a, b)


def and_(a, b):
    return binary("and", a, b)


def or_(a, b):
    return binary("or", a, b)


def compare(direction: str, a: ir.Value, b: ir.Value, compare_type: str | None = None) -> ir.Value:
    """``direction`` in EQ/NE/LT/LE/GT/GE; ``compare_type`` FLOAT/TOTALORDER/SIGNED/UNSIGNED."""
    attrs = {"comparison_direction": ir.Attribute.parse(f"#stablehlo<comparison_direction {direction}>")}
    if compare_type:
        attrs["compare_type"] = ir.Attribute.parse(f"#stablehlo<comparison_type {compare_type}>")
    return _one("stablehlo.compare", [a, b], tensor_type(shape_of(a), i1()), attrs)


def select(pred: ir.Value, on_true: ir.Value, on_false: ir.Value) -> ir.Value:
    return _one("stablehlo.select", [pred, on_true, on_false], on_true.type)


def convert(x: ir.Value, elem: ir.Type) -> ir.Value:
    return _one("stablehlo.convert", [x], tensor_type(shape_of(x), elem))


def clamp(lo: ir.Value, x: ir.Value, hi: ir.Value) -> ir.Value:
    return _one("stablehlo.clamp", [lo, x, hi], x.type)


# -- shapes ------------------------------------------------------------------------


def reshape(x: ir.Value, shape: Sequence[int]) -> ir.Value:
    """``x`` as ``shape``; ``x`` itself when it has that shape (the upstream linalg lowering
    crashes on a rank-0 to rank-0 reshape of an unsigned type, which no pass folds)."""
    if tuple(shape) == shape_of(x):
        return x
    return _one("stablehlo.reshape", [x], tensor_type(shape, element_type(x)))


def broadcast_in_dim(x: ir.Value, shape: Sequence[int], dims: Sequence[int]) -> ir.Value:
    return _one(
        "stablehlo.broadcast_in_dim",
        [x],
        tensor_type(shape, element_type(x)),
        {"broadcast_dimensions": dense_i64(dims)},
    )


def transpose(x: ir.Value, permutation: Sequence[int]) -> ir.Value:
    shape = shape_of(x)
    return _one(
        "stablehlo.transpose",
        [x],
        tensor_type([shape[p] for p in permutation], element_type(x)),
        {"permutation": dense_i64(permutation)},
    )


def slice(x: ir.Value, start: Sequence[int], limit: Sequence[int], strides: Sequence[int] | None = None):  # noqa: A001
    strides = list(strides or [1] * len(start))
    shape = [-(-(hi - lo) // s) for lo, hi, s in zip(start, limit, strides)]
    return _one(
        "stablehlo.slice",
        [x],
        tensor_type(shape, element_type(x)),
        {"start_indices": dense_i64(start), "limit_indices": dense_i64(limit), "strides": dense_i64(strides)},
    )


def slice_along(x: ir.Value, axis: int, start: int, stop: int) -> ir.Value:
    """``x[..., start:stop, ...]`` along ``axis``, every other dimension whole."""
    shape = shape_of(x)
    return slice(x, [start if d == axis else 0 for d in range(len(shape))],
                 [stop if d == axis else n for d, n in enumerate(shape)])


def dynamic_slice(x: ir.Value, starts: Sequence[ir.Value], sizes: Sequence[int]) -> ir.Value:
    """Starts are 0-d integer tensors; they are clamped so the slice fits (spec)."""
    return _one(
        "stablehlo.dynamic_slice",
        [x, *starts],
        tensor_type(sizes, element_type(x)),
        {"slice_sizes": dense_i64(sizes)},
    )


def dynamic_update_slice(x: ir.Value, update: ir.Value, starts: Sequence[ir.Value]) -> ir.Value:
    return _one("stablehlo.dynamic_update_slice", [x, update, *starts], x.type)


def concatenate(values: Sequence[ir.Value], dimension: int) -> ir.Value:
    shape = list(shape_of(values[0]))
    shape[dimension] = sum(shape_of(v)[dimension] for v in values)
    return _one(
        "stablehlo.concatenate",
        list(values),
        tensor_type(shape, element_type(values[0])),
        {"dimension": ir.IntegerAttr.get(i64(), dimension)},
    )


def iota(shape: Sequence[int], dimension: int, elem: ir.Type) -> ir.Value:
    return _one(
        "stablehlo.iota", [], tensor_type(shape, elem), {"iota_dimension": ir.IntegerAttr.get(i64(), dimension)}
    )


# -- regions -----------------------------------------------------------------------


def build_region(
    region: ir.Region, arg_types: Sequence[ir.Type], body: Callable[..., Sequence[ir.Value]]
) -> None:
    """Fill ``region`` with one block whose terminator returns ``body(*args)``."""
    block = region.blocks.append(*arg_types)
    with ir.InsertionPoint(block):
        results = body(*block.arguments)
        create("stablehlo.return", list(results), [])


def while_loop(
    init: Sequence[ir.Value],
    cond: Callable[..., ir.Value],
    body: Callable[..., Sequence[ir.Value]],
) -> list[ir.Value]:
    """``stablehlo.while``: ``cond(*state) -> tensor<i1>``, ``body(*state) -> state``."""
    types = [v.type for v in init]
    op = create("stablehlo.while", list(init), types, regions=2)
    build_region(op.regions[0], types, lambda *a: [cond(*a)])
    build_region(op.regions[1], types, body)
    return list(op.results)


def inline_region(region: ir.Region, args: Sequence[ir.Value]) -> list[ir.Value]:
    """Clone ``region``'s single block at the insertion point with its arguments
    bound to ``args``; returns the values its ``stablehlo.return`` (or, of a function,
    ``func.return``) yields."""
    block = region.blocks[0]
    mapping = {block.arguments[i]: args[i] for i in range(len(args))}
    results: list[ir.Value] = []
    for op in block.operations:
        if op.operation.name in ("stablehlo.return", "func.return"):
            results = [_lookup(mapping, v) for v in op.operands]
            break
        clone = op.operation.clone()
        for i, operand in enumerate(clone.operands):
            mapped = _lookup(mapping, operand, None)
            if mapped is not None:
                clone.operands[i] = mapped
        _remap_nested(clone, mapping)
        for old, new in zip(op.results, clone.results):
            mapping[old] = new
    return results


def apply_region_elementwise(region: ir.Region, lhs: Sequence[ir.Value], rhs: Sequence[ir.Value]) -> list[ir.Value]:
    """``region(lhs..., rhs...)`` element by element (a reduce/scatter body on whole tensors).

    One-element tensors inline the region on 0-d tensors; larger ones use
    ``stablehlo.map`` (one per result, as map has a single result).
    """
    shape = shape_of(lhs[0])
    if int(np.prod(shape)) == 1:
        scalars = [reshape(v, []) for v in (*lhs, *rhs)]
        return [reshape(v, shape) for v in inline_region(region, scalars)]
    arg_types = [arg.type for arg in region.blocks[0].arguments]
    results = []
    for j in range(len(lhs)):
        result_type = tensor_type(shape, ir.RankedTensorType(arg_types[j]).element_type)
        dims = {"dimensions": dense_i64(range(len(shape)))}
        mapped = create("stablehlo.map", [*lhs, *rhs], [result_type], dims, regions=1)
        build_region(mapped.regions[0], arg_types, lambda *args, j=j: [inline_region(region, args)[j]])
        results.append(mapped.result)
    return results


def splice_block(op: ir.Operation, block: ir.Block, args: Sequence[ir.Value] = ()) -> list[ir.Value]:
    """Move ``block``'s operations before ``op``, its arguments bound to ``args``;
    returns the values its terminator yields (the terminator stays behind, and
    goes when the caller erases ``op``)."""
    for arg, value in zip(block.arguments, args):
        arg.replace_all_uses_with(value)
    operations = list(block.operations)
    for inner in operations[:-1]:
        inner.operation.move_before(op)
    return list(operations[-1].operands)


def token_type() -> ir.Type:
    return ir.Type.parse("!stablehlo.token")


def is_token(t: ir.Type) -> bool:
    return str(t) == "!stablehlo.token"


def splat_integer(value: ir.Value) -> int | None:
    """The integer (a bool as 0/1) every element of a ``stablehlo.constant`` holds, else None."""
    if not isinstance(value, ir.OpResult) or value.owner.name != "stablehlo.constant":
        return None
    attr = ir.DenseElementsAttr(value.owner.attributes["value"])
    if not attr.is_splat:
        return None
    scalar = attr.get_splat_value()
    if isinstance(scalar, ir.BoolAttr):
        return int(scalar.value)
    return ir.IntegerAttr(scalar).value if isinstance(scalar, ir.IntegerAttr) else None


def constant_integers(value: ir.Value) -> list[int] | None:
    """The integers of a ``stablehlo.constant`` of any shape, row-major; None for other values."""
    if not isinstance(value, ir.OpResult) or value.owner.name != "stablehlo.constant":
        return None
    if not isinstance(element_type(value), ir.IntegerType):
        return None
    attr = ir.DenseIntElementsAttr(value.owner.attributes["value"])
    count = math.prod(shape_of(value))
    return [int(attr[0])] * count if attr.is_splat else [int(attr[i]) for i in range(count)]


def _lookup(mapping, value, default=...):
    found = mapping.get(value)
    if found is not None:
        return found
    return value if default is ... else default


def _remap_nested(op: ir.Operation, mapping) -> None:
    """Ops nested in a cloned op may use values defined above it: remap those too."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                for i, operand in enumerate(inner.operands):
                    mapped = _lookup(mapping, operand, None)
                    if mapped is not None:
                        inner.operands[i] = mapped
                _remap_nested(inner.operation, mapping)


# -- reductions, contractions, complex parts -------------------------------------------


def reduce(
    inputs: Sequence[ir.Value],
    inits: Sequence[ir.Value],
    dimensions: Sequence[int],
    body: Callable[..., Sequence[ir.Value]],
) -> list[ir.Value]:
    """``stablehlo.reduce`` over ``dimensions``; ``body(*accs, *elems)`` gets 0-d tensors."""
    kept = [d for d in range(len(shape_of(inputs[0]))) if d not in set(dimensions)]
    result_types = [tensor_type([shape_of(x)[d] for d in kept], element_type(x)) for x in inputs]
    attributes = {"dimensions": dense_i64(dimensions)}
    op = create("stablehlo.reduce", [*inputs, *inits], result_types, attributes, regions=1)
    scalar_types = [tensor_type([], element_type(x)) for x in inputs]
    build_region(op.regions[0], scalar_types * 2, body)
    return list(op.results)


# The binary ops a reduction body may be for the passes that reassociate it.
COMBINERS = ("add", "multiply", "maximum", "minimum", "and", "or", "xor")
_SCALAR_VIEWS = ("stablehlo.broadcast_in_dim", "stablehlo.reshape")  # of a 0-d value or a splat: the same scalar


def region_combiner(region: ir.Region) -> str | None:
    """The name (``add``, ``maximum``, ...: ``COMBINERS``) of the one binary op a
    reduction body applies to its two arguments; None for any other body."""
    block = region.blocks[0]
    ops = [o.operation for o in block.operations]
    if len(ops) != 2 or ops[1].name != "stablehlo.return" or len(block.arguments) != 2:
        return None
    op = ops[0]
    name = op.name.removeprefix("stablehlo.")
    if name not in COMBINERS or set(op.operands) != set(block.arguments):
        return None
    return name if list(ops[1].operands) == [op.results[0]] else None


def _constant_behind_views(value: ir.Value) -> tuple[ir.Value, ir.Operation] | None:
    """The ``stablehlo.constant`` that ``value`` reshapes or broadcasts (or is), with its
    result, else None."""
    owner = value.owner
    while isinstance(owner, (ir.Operation, ir.OpView)) and owner.name in _SCALAR_VIEWS:
        value = owner.operands[0]
        owner = value.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or owner.name != "stablehlo.constant":
        return None
    return value, owner


def scalar_constant(value: ir.Value):
    """The scalar of a 0-d ``stablehlo.constant`` (seen through 0-d reshapes and
    broadcasts; integers as unsigned bits), None otherwise."""
    found = _constant_behind_views(value)
    if found is None:
        return None
    value, owner = found
    attr = owner.attributes["value"]
    elem = element_type(value)
    if isinstance(elem, ir.IntegerType):
        return int(ir.DenseIntElementsAttr(attr)[0]) % (2 ** ir.IntegerType(elem).width)
    if isinstance(elem, ir.FloatType):  # a 0-d constant is a splat (which reads bf16 too)
        return float(ir.FloatAttr(ir.DenseElementsAttr(attr).get_splat_value()).value)
    return None


def splat_element(value: ir.Value) -> ir.Attribute | None:
    """The attribute every element of ``value`` holds when it is a splat
    ``stablehlo.constant`` (seen through broadcasts and reshapes), else None."""
    found = _constant_behind_views(value)
    if found is None:
        return None
    _, owner = found
    try:
        attr = ir.DenseElementsAttr(owner.attributes["value"])
        return attr.get_splat_value() if attr.is_splat else None
    except (TypeError, ValueError):  # element types the bindings cannot wrap (complex)
        return None


def identity(combiner: str, elem: ir.Type):
    """The identity of ``combiner`` on ``elem`` (integers as unsigned bits), None if it
    has none there (a float ``and``). Float ``add``'s is -0.0: -0.0 + x == x for every x."""
    if isinstance(elem, ir.FloatType):
        return {"add": -0.0, "multiply": 1.0, "maximum": -np.inf, "minimum": np.inf}.get(combiner)
    t = ir.IntegerType(elem)
    width, unsigned = t.width, t.is_unsigned or t.width == 1
    ones = 2**width - 1
    signed_min, signed_max = 2 ** (width - 1), 2 ** (width - 1) - 1  # as unsigned bits
    return {
        "add": 0, "or": 0, "xor": 0, "and": ones, "multiply": 1,
        "maximum": 0 if unsigned else signed_min,
        "minimum": ones if unsigned else signed_max,
    }.get(combiner)


def is_identity(combiner: str, elem: ir.Type, value) -> bool:
    """Is ``value`` (``scalar_constant``'s form) the identity of ``combiner`` on ``elem``?
    (A float sum's 0.0 counts: it changes only the sign of an all -0.0 sum.)"""
    return value is not None and value == identity(combiner, elem)


def constant_bits(bits: int, like: ir.Type) -> ir.Value:
    """A 0-d constant of element type ``like`` holding ``bits`` (``identity``'s form:
    integers as unsigned bits)."""
    if isinstance(like, ir.IntegerType) and ir.IntegerType(like).width > 1:
        width = ir.IntegerType(like).width
        if not ir.IntegerType(like).is_unsigned and bits >= 2 ** (width - 1):
            bits -= 2**width  # IntegerAttr takes the signed value of a signed/signless type
    return constant(bits, like)


def reduce_sum(x: ir.Value, dimensions: Sequence[int]) -> ir.Value:
    """Sum of ``x`` over ``dimensions`` (the other dimensions keep their order)."""
    if not dimensions:  # the upstream linalg lowering rejects a reduce over no dimension
        return x
    zero = constant(0, element_type(x))
    return reduce([x], [zero], dimensions, lambda acc, elem: [add(acc, elem)])[0]


def dot_general(
    lhs: ir.Value,
    rhs: ir.Value,
    *,
    batch: tuple[Sequence[int], Sequence[int]] = ((), ()),
    contract: tuple[Sequence[int], Sequence[int]],
) -> ir.Value:
    """``stablehlo.dot_general``; result dims are batch, lhs free, rhs free (spec order)."""
    (lhs_batch, rhs_batch), (lhs_contract, rhs_contract) = batch, contract
    lhs_shape, rhs_shape = shape_of(lhs), shape_of(rhs)
    lhs_free = [d for d in range(len(lhs_shape)) if d not in (*lhs_batch, *lhs_contract)]
    rhs_free = [d for d in range(len(rhs_shape)) if d not in (*rhs_batch, *rhs_contract)]
    shape = [lhs_shape[d] for d in (*lhs_batch, *lhs_free)] + [rhs_shape[d] for d in rhs_free]

    def dims(values: Sequence[int]) -> str:
        return "[" + ", ".join(str(v) for v in values) + "]"

    numbers = ir.Attribute.parse(
        f"#stablehlo.dot<lhs_batching_dimensions = {dims(lhs_batch)}, "
        f"rhs_batching_dimensions = {dims(rhs_batch)}, "
        f"lhs_contracting_dimensions = {dims(lhs_contract)}, "
        f"rhs_contracting_dimensions = {dims(rhs_contract)}>"
    )
    result_type = tensor_type(shape, element_type(lhs))
    return _one("stablehlo.dot_general", [lhs, rhs], result_type, {"dot_dimension_numbers": numbers})


def contracted_length(op: ir.Operation) -> int:
    """How many products each result element of a ``dot``/``dot_general`` sums."""
    lhs_shape = shape_of(op.operands[0])
    if op.name == "stablehlo.dot":
        return lhs_shape[-1]
    numbers = stablehlo_api.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    return int(np.prod([lhs_shape[d] for d in numbers.lhs_contracting_dimensions]))


def real(x: ir.Value) -> ir.Value:
    """Real part of a complex tensor (identity on real tensors)."""
    elem = element_type(x)
    if not isinstance(elem, ir.ComplexType):
        return x
    return _one("stablehlo.real", [x], tensor_type(shape_of(x), ir.ComplexType(elem).element_type))


def conj(x: ir.Value) -> ir.Value:
    """Complex conjugate (identity on real tensors)."""
    elem = element_type(x)
    if not isinstance(elem, ir.ComplexType):
        return x
    part_type = tensor_type(shape_of(x), ir.ComplexType(elem).element_type)
    re = _one("stablehlo.real", [x], part_type)
    im = _one("stablehlo.imag", [x], part_type)
    return _one("stablehlo.complex", [re, unary("negate", im)], x.type)


# -- padding, mapping, complex parts ----------------------------------------------------


def pad(x: ir.Value, fill: ir.Value, low: Sequence[int], high: Sequence[int], interior: Sequence[int]) -> ir.Value:
    """``stablehlo.pad``; ``fill`` is a 0-d tensor of x's element type."""
    shape = [
        lo + hi + (n - 1) * (i + 1) + 1 if n else lo + hi
        for n, lo, hi, i in zip(shape_of(x), low, high, interior)
    ]
    return _one(
        "stablehlo.pad",
        [x, fill],
        tensor_type(shape, element_type(x)),
        {"edge_padding_low": dense_i64(low), "edge_padding_high": dense_i64(high), "interior_padding": dense_i64(interior)},
    )


def map_region(region: ir.Region, operands: Sequence[ir.Value], result_elem: ir.Type) -> ir.Value:
    """``stablehlo.map`` over all dims whose body is a clone of ``region`` (a scalar computation)."""
    shape = shape_of(operands[0])
    op = create(
        "stablehlo.map",
        list(operands),
        [tensor_type(shape, result_elem)],
        {"dimensions": dense_i64(range(len(shape)))},
        regions=1,
    )
    arg_types = [a.type for a in region.blocks[0].arguments]
    build_region(op.regions[0], arg_types, lambda *args: inline_region(region, args))
    return op.result


def imag(x: ir.Value) -> ir.Value:
    """Imaginary part of a complex tensor."""
    return _one("stablehlo.imag", [x], tensor_type(shape_of(x), ir.ComplexType(element_type(x)).element_type))


def complex_from_parts(re: ir.Value, im: ir.Value) -> ir.Value:
    """``stablehlo.complex``: a complex tensor from real and imaginary parts."""
    return _one("stablehlo.complex", [re, im], tensor_type(shape_of(re), ir.ComplexType.get(element_type(re))))


def fft_attributes(kind: str, lengths: Sequence[int]) -> dict[str, ir.Attribute]:
    """``stablehlo.fft``'s attributes: ``kind`` FFT, IFFT, RFFT or IRFFT over ``lengths``."""
    return {"fft_type": ir.Attribute.parse(f"#stablehlo<fft_type {kind}>"), "fft_length": dense_i64(lengths)}


def fft(x: ir.Value, kind: str, lengths: Sequence[int], result_type: ir.Type | None = None) -> ir.Value:
    """``stablehlo.fft`` of x's last ``len(lengths)`` dims (result type: x's unless given)."""
    return _one("stablehlo.fft", [x], result_type or x.type, fft_attributes(kind, lengths))


def reverse(x: ir.Value, dimensions: Sequence[int]) -> ir.Value:
    """``stablehlo.reverse``: x with the order of ``dimensions`` reversed."""
    return _one("stablehlo.reverse", [x], x.type, {"dimensions": dense_i64(dimensions)})


def bitcast_convert(x: ir.Value, elem: ir.Type) -> ir.Value:
    """Reinterpret the bits of ``x`` as ``elem``: the same width keeps the shape, a
    narrower ``elem`` adds a minor dimension, a wider one consumes it (as the spec says)."""
    old, new = element_type(x).width, elem.width
    shape = list(shape_of(x))
    if old > new:
        shape.append(old // new)
    elif old < new:
        shape.pop()
    return _one("stablehlo.bitcast_convert", [x], tensor_type(shape, elem))

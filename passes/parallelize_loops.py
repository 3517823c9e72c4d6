"""xhlo-parallelize-loops: run large parallel loops on all cores through xhlo's own parallel-for.

Every loop of a compiled program used to run on the calling thread, so a
fused elementwise chain or a row-wise softmax used one core of several. The
wheel has neither libomp (the OpenMP lowering) nor ``mlir_async_runtime``
(``async-parallel-for``), so xhlo brings its own: this pass outlines a loop's
body into a function over a sub-range and hands it to ``xhlo_parallel_for``,
which the Executable points at a native thread pool (``xhlo.runtime.parallel``,
``xhlo.runtime.native_pool``).

Which loops: ``xhlo-vectorize`` marks the tile loops of parallel dimensions
that every output of the tiled op indexes (``xhlo.parallel_loop``), so their
iterations write disjoint slices. Of those, the outermost ones are taken when

* they carry no values (no ``iter_args``) and have constant bounds,
* their nest does at least ``min-work`` element operations (the lanes of every
  op, a math function counting ``MATH_WEIGHT`` times, loops multiplied out, a
  loop of unknown trip count once), so small loops keep plain code: handing a
  loop to the (native) pool costs about a microsecond, and the caller then
  reads what another core wrote,
* their body makes no calls (a BLAS call runs its own threads; a collective
  must be made by the device's own thread) other than calls of functions
  marked ``xhlo.thread_safe`` (a library that may run on any thread; the
  loop's ``xhlo.work`` attribute then gives the element operations per
  iteration the calls do), and
* every value the body uses from outside is a memref, a scalar, a 1-D vector
  or a constant (constants are cloned into the body).

The loop ``scf.for %i = %lb to %ub step %s`` becomes

    %fn = func.constant @<func>_parallel_<k> : (!llvm.ptr, index, index) -> ()
    call @xhlo_parallel_for(%fn, %captures, %lb, %ub, %s)

with the captured values stored in a struct on the caller's stack (a memref
as the aligned pointer and the dynamic parts of its LLVM descriptor, through
``unrealized_conversion_cast``s the LLVM lowering resolves). ``@<func>_parallel_<k>(%captures, %begin, %end)`` loads
them back and runs the loop from ``%begin`` to ``%end``. ``xhlo_parallel_for``
calls the function pointer in the module's ``xhlo_parallel_dispatch`` slot
(whose address ``xhlo_parallel_dispatch_slot()`` returns), or, while the slot
is null (no runtime installed), the body over the whole range. Outlined
bodies may allocate with ``malloc`` (thread-safe); the scratch arena only
holds buffers of a function's top level, which the body sees as captured
memrefs like any other.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo._mlir import arith, ir

from .base import ModulePass, append_definitions, symbol_names, walk_ops
from .vectorize import PARALLEL_LOOP

DISPATCH_SLOT = "xhlo_parallel_dispatch"
SLOT_ADDRESS = "xhlo_parallel_dispatch_slot"  # returns the slot's address (the JIT looks up functions only)
PARALLEL_FOR = "xhlo_parallel_for"
BODY_ATTR = "xhlo.parallel_body"  # on outlined bodies

_BODY_TYPE = "(!llvm.ptr, index, index) -> ()"
_RUNTIME = f"""
llvm.mlir.global external @{DISPATCH_SLOT}() {{addr_space = 0 : i32, alignment = 8 : i64}} : !llvm.ptr {{
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.return %null : !llvm.ptr
}}
func.func private @{SLOT_ADDRESS}() -> !llvm.ptr {{
  %slot = llvm.mlir.addressof @{DISPATCH_SLOT} : !llvm.ptr
  return %slot : !llvm.ptr
}}
func.func private @{PARALLEL_FOR}(%body: {_BODY_TYPE}, %captures: !llvm.ptr,
                                   %begin: index, %end: index, %step: index) {{
  %slot = llvm.mlir.addressof @{DISPATCH_SLOT} : !llvm.ptr
  %dispatch = llvm.load %slot {{alignment = 8 : i64}} : !llvm.ptr -> !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %no_runtime = llvm.icmp "eq" %dispatch, %null : !llvm.ptr
  cf.cond_br %no_runtime, ^serial, ^threads
^serial:
  func.call_indirect %body(%captures, %begin, %end) : {_BODY_TYPE}
  return
^threads:
  %body_ptr = builtin.unrealized_conversion_cast %body : {_BODY_TYPE} to !llvm.ptr
  %b = arith.index_cast %begin : index to i64
  %e = arith.index_cast %end : index to i64
  %s = arith.index_cast %step : index to i64
  llvm.call %dispatch(%body_ptr, %captures, %b, %e, %s) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
  return
}}
"""

# Ops without operands whose copy in the outlined body is as good as the value.
_CLONABLE = frozenset({"arith.constant", "ub.poison", "llvm.mlir.constant", "llvm.mlir.zero",
                       "llvm.mlir.undef", "llvm.mlir.poison"})
# Ops that only describe values (views, constants, casts): no work of their own.
_FREE_OPS = frozenset({"memref.subview", "memref.reinterpret_cast", "memref.cast", "memref.view",
                       "memref.collapse_shape", "memref.expand_shape", "scf.yield", "arith.constant",
                       "ub.poison", "vector.shape_cast", "arith.index_cast"})
MATH_WEIGHT = 8  # a math function (exp, tanh, ...) becomes a polynomial of about this many ops
_CALLS = frozenset({"func.call", "func.call_indirect", "llvm.call", "llvm.invoke"})
THREAD_SAFE_ATTR = "xhlo.thread_safe"  # on a function that may run on any thread
WORK_ATTR = "xhlo.work"  # on a loop: element operations per iteration the pass cannot see (calls)


def _op(owner) -> ir.Operation:
    return owner.operation if hasattr(owner, "operation") else owner


def _callee(call: ir.Operation) -> str | None:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value if "callee" in call.attributes else None


def _constant_index(value: ir.Value) -> int | None:
    owner = value.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)):
        return None
    owner = _op(owner)
    if owner.name != "arith.constant" or not isinstance(owner.attributes["value"], ir.IntegerAttr):
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def _trip_count(loop: ir.Operation) -> int | None:
    lb, ub, step = (_constant_index(v) for v in list(loop.operands)[:3])
    if lb is None or ub is None or not step or step < 0:
        return None
    return max(0, -(-(ub - lb) // step))


def _lanes(op: ir.Operation) -> int:
    if op.name == "memref.copy":  # a memcpy: one operation per element
        return math.prod(ir.MemRefType(op.operands[0].type).shape)
    for value in list(op.results) + list(op.operands):
        if isinstance(value.type, ir.VectorType):
            return math.prod(ir.VectorType(value.type).shape)
    return 1


def own_work(op: ir.Operation) -> int:
    """The element operations ``op``'s ``xhlo.work`` attribute declares (0 without one)."""
    return ir.IntegerAttr(op.attributes[WORK_ATTR]).value if WORK_ATTR in op.attributes else 0


def work(block: ir.Block) -> int:
    """Element operations of ``block``: the lanes of its ops, loops multiplied out."""
    total = 0
    for op in block.operations:
        op = op.operation
        if not op.regions and op.name not in _FREE_OPS:
            total += _lanes(op) * (MATH_WEIGHT if op.name.startswith("math.") else 1)
        inner = own_work(op) + sum(work(b) for region in op.regions for b in region.blocks)
        if op.name == "scf.for":
            inner *= _trip_count(op) or 1
        total += inner
    return total


def _defined_inside(ops: list[ir.Operation]) -> set:
    values = set()
    for op in ops:
        values.update(op.results)
        for region in op.regions:
            for block in region.blocks:
                values.update(block.arguments)
    return values


def _captured(loop: ir.Operation, ops: list[ir.Operation]) -> list[ir.Value]:
    """Values the loop's body (and its step and initial iter_args) use from outside, in
    first-use order."""
    inside = _defined_inside(ops)
    seen, captured = set(), []
    uses = list(loop.operands)[2:] + [v for op in ops if op != loop for v in op.operands]
    for value in uses:
        if value not in inside and value not in seen:
            seen.add(value)
            captured.append(value)
    return captured


def _is_clonable(value: ir.Value) -> bool:
    owner = value.owner
    return isinstance(owner, (ir.Operation, ir.OpView)) and _op(owner).name in _CLONABLE


def _descriptor_type(t: ir.MemRefType) -> ir.Type:
    rank = len(t.shape)
    arrays = f", array<{rank} x i64>, array<{rank} x i64>" if rank else ""
    return ir.Type.parse(f"!llvm.struct<(ptr, ptr, i64{arrays})>")


_PTR = "!llvm.ptr"
_ALIGNED = (1,)  # the descriptor's aligned pointer; (0,) is the allocated one, which bodies never free


def _layout_parts(t: ir.Type) -> list[tuple[tuple[int, ...], int | None]] | None:
    """A strided memref's offset, sizes and strides: (position in its descriptor, the
    constant or None if dynamic); None for other types and layouts."""
    if not isinstance(t, ir.MemRefType):
        return None
    try:
        strides, offset = ir.MemRefType(t).get_strides_and_offset()
    except RuntimeError:  # not a strided layout
        return None
    dynamic, dynamic_size = ir.ShapedType.get_dynamic_stride_or_offset(), ir.ShapedType.get_dynamic_size()
    parts = [((2,), None if offset == dynamic else offset)]
    parts += [((3, i), None if size == dynamic_size else size) for i, size in enumerate(ir.MemRefType(t).shape)]
    parts += [((4, i), None if stride == dynamic else stride) for i, stride in enumerate(strides)]
    return parts


def _field_types(t: ir.Type) -> list[ir.Type] | None:
    """How a captured value travels in the struct; None if it cannot.

    A strided memref travels as its aligned pointer and the dynamic parts of
    its layout (one pointer for a static shape, not the descriptor's 3 + 2 *
    rank fields; the body rebuilds the descriptor from constants): the caller
    stores less, and LLVM has fewer stores to split, forward and check for
    dead ones (attention: 38 -> 29 ms of LLVM IR optimisation). Other layouts
    travel as the whole descriptor.
    """
    if isinstance(t, ir.MemRefType) and ir.MemRefType(t).memory_space is not None:
        return None
    parts = _layout_parts(t)
    if parts is not None:
        i64 = ir.IntegerType.get_signless(64)
        return [ir.Type.parse(_PTR)] + [i64 for _, constant in parts if constant is None]
    if isinstance(t, ir.MemRefType):
        return [_descriptor_type(ir.MemRefType(t))]
    if isinstance(t, ir.IndexType):
        return [ir.IntegerType.get_signless(64)]
    if isinstance(t, (ir.IntegerType, ir.FloatType)):
        return [t]
    if isinstance(t, ir.VectorType) and ir.VectorType(t).rank == 1 and not ir.VectorType(t).scalable:
        vector = ir.VectorType(t)
        if isinstance(vector.element_type, ir.IndexType):  # travels as i64 lanes, as an index does
            return [ir.VectorType.get(vector.shape, ir.IntegerType.get_signless(64))]
        return [t]
    return None


def _has_index_elements(t: ir.Type) -> bool:
    return isinstance(t, ir.IndexType) or isinstance(t, ir.VectorType) and isinstance(ir.VectorType(t).element_type, ir.IndexType)


def _create(name: str, result: ir.Type | None, operands: list, **attributes) -> ir.Operation:
    return ir.Operation.create(name, results=[result] if result else [], operands=operands,
                               attributes=attributes)


def _cast(value: ir.Value, to: ir.Type) -> ir.Value:
    """Into or out of the struct: memref <-> descriptor, index <-> i64 (lanes too), the rest as is."""
    if value.type == to:
        return value
    if _has_index_elements(value.type) or _has_index_elements(to):
        return arith.index_cast(to, value)
    return _create("builtin.unrealized_conversion_cast", to, [value]).result


def _position(position: tuple[int, ...]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get(list(position))


def _pack(value: ir.Value, types: list[ir.Type]) -> list[ir.Value]:
    """The struct fields of ``value`` (``_field_types``)."""
    parts = _layout_parts(value.type)
    if parts is None:
        return [_cast(value, types[0])]
    descriptor = _cast(value, _descriptor_type(ir.MemRefType(value.type)))
    positions = [_ALIGNED] + [position for position, constant in parts if constant is None]
    return [_create("llvm.extractvalue", t, [descriptor], position=_position(position)).result
            for position, t in zip(positions, types)]


def _unpack(fields: list[ir.Value], t: ir.Type) -> ir.Value:
    """The captured value of type ``t`` again, from its struct fields."""
    parts = _layout_parts(t)
    if parts is None:
        return _cast(fields[0], t)
    struct = _descriptor_type(ir.MemRefType(t))
    i64 = ir.IntegerType.get_signless(64)
    dynamic = iter(fields[1:])
    descriptor = _create("llvm.mlir.poison", struct, []).result
    for position, constant in [((0,), None), (_ALIGNED, None), *parts]:
        if position in ((0,), _ALIGNED):
            field = fields[0]
        elif constant is None:
            field = next(dynamic)
        else:
            field = _create("llvm.mlir.constant", i64, [], value=ir.IntegerAttr.get(i64, constant)).result
        descriptor = _create("llvm.insertvalue", struct, [descriptor, field], position=_position(position)).result
    return _cast(descriptor, t)


def _enclosing_function(op: ir.Operation) -> ir.Operation:
    parent = op.parent
    while parent.name != "func.func":
        parent = parent.parent
    return _op(parent)


def loop_owners(module: ir.Operation) -> list[ir.Operation]:
    """The module's defined functions other than outlined bodies."""
    return [op.operation for op in module.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)
            and BODY_ATTR not in op.operation.attributes]


@dataclasses.dataclass(frozen=True)
class ParallelizeLoops(ModulePass):
    """Outline large disjoint-write loops and run them through the xhlo_parallel_for thread pool."""

    NAME = "xhlo-parallelize-loops"
    # Element operations a loop nest needs to be worth the pool: about 10 us of serial work,
    # ~15x what handing it to the native pool costs (~0.6 us).
    min_work: int = 262_144

    def run(self, module: ir.Operation) -> None:
        safe = {ir.StringAttr(op.operation.attributes["sym_name"]).value
                for op in module.regions[0].blocks[0].operations if THREAD_SAFE_ATTR in op.operation.attributes}
        nests = [nest for func in loop_owners(module) for nest in self._candidates(func, safe)]
        if not nests:
            return
        names = symbol_names(module)
        self._add_runtime(module, names)
        for nest in nests:
            func = _enclosing_function(nest.loop)
            name = fresh_name(ir.StringAttr(func.attributes["sym_name"]).value, names, "parallel")
            _Outliner(module, func, nest, name).run()

    def _candidates(self, root: ir.Operation, safe: set[str]) -> list[Nest]:
        """The outermost eligible loops below ``root`` (``safe``: functions any thread may call)."""
        found: list[Nest] = []
        for region in root.regions:
            for block in region.blocks:
                for op in block.operations:
                    op = op.operation
                    nest = self._eligible(op, safe)
                    if nest is not None:
                        found.append(nest)
                    else:
                        found.extend(self._candidates(op, safe))
        return found

    def _eligible(self, op: ir.Operation, safe: set[str]) -> Nest | None:
        if op.name != "scf.for" or PARALLEL_LOOP not in op.attributes or len(op.results):
            return None
        trips = _trip_count(op)
        if not trips or trips < 2:
            return None
        if trips * (own_work(op) + work(op.regions[0].blocks[0])) < self.min_work:
            return None
        nest = Nest.of(op)
        if any(inner.name in _CALLS and _callee(inner) not in safe for inner in nest.ops):
            return None
        return nest if nest.travels() else None

    @staticmethod
    def _add_runtime(module: ir.Operation, names: set[str]) -> None:
        if PARALLEL_FOR in names:
            return
        append_definitions(module, _RUNTIME)
        names.update({PARALLEL_FOR, DISPATCH_SLOT, SLOT_ADDRESS})


def fresh_name(base: str, names: set[str], kind: str) -> str:
    """``<base>_<kind>_<k>`` for the first k no symbol has (added to ``names``)."""
    k = 0
    while f"{base}_{kind}_{k}" in names:
        k += 1
    names.add(f"{base}_{kind}_{k}")
    return f"{base}_{kind}_{k}"


@dataclasses.dataclass
class Nest:
    """A loop nest, its ops and the outside values it uses: walked once, for the
    eligibility checks and the outlining."""

    loop: ir.Operation
    ops: list[ir.Operation]
    captured: list[ir.Value]

    @classmethod
    def of(cls, loop: ir.Operation) -> "Nest":
        ops = walk_ops(loop, None)
        return cls(loop, ops, _captured(loop, ops))

    def travels(self) -> bool:
        """Every captured value can be cloned or packed into the captures struct."""
        return all(_is_clonable(v) or _field_types(v.type) is not None for v in self.captured)


class _Outliner:
    """Moves one loop into its own function and calls xhlo_parallel_for in its place
    (``serial``: calls the function itself, over the loop's whole range)."""

    def __init__(self, module: ir.Operation, func: ir.Operation, nest: Nest, name: str, serial: bool = False):
        self.module, self.func, self.loop, self.name, self.serial = module, func, nest.loop, name, serial
        self.nested = nest.ops
        captured = nest.captured
        self.constants = [v for v in captured if _is_clonable(v)]
        self.fields = [v for v in captured if not _is_clonable(v)]
        self.field_types = [_field_types(v.type) for v in self.fields]  # per captured value
        flat = [t for types in self.field_types for t in types]
        self.struct = ir.Type.parse(f"!llvm.struct<({', '.join(map(str, flat))})>")

    def run(self) -> None:
        with self.loop.location:
            body_type = ir.TypeAttr.parse(_BODY_TYPE).value
            outlined, captures, begin, end = self._new_function(body_type)
            with ir.InsertionPoint(self.loop):
                self._call(body_type)
            self._move_loop(outlined, captures, begin, end)

    def _new_function(self, body_type: ir.Type):
        ptr = ir.Type.parse("!llvm.ptr")
        index = ir.IndexType.get()
        func = ir.Operation.create(
            "func.func", regions=1,
            attributes={"sym_name": ir.StringAttr.get(self.name), "function_type": ir.TypeAttr.get(body_type),
                        "sym_visibility": ir.StringAttr.get("private"), BODY_ATTR: ir.UnitAttr.get()},
            ip=ir.InsertionPoint(self.module.regions[0].blocks[0]))
        block = ir.Block.create_at_start(func.regions[0], [ptr, index, index], [self.loop.location] * 3)
        with ir.InsertionPoint(block):
            _create("func.return", None, [])
        return func, block.arguments[0], block.arguments[1], block.arguments[2]

    def _call(self, body_type: ir.Type) -> None:
        """Pack the captured values on the stack and call the runtime with the outlined body."""
        if self.fields:
            captures = self._stack_slot()
            packed = _create("llvm.mlir.poison", self.struct, []).result
            fields = [field for value, types in zip(self.fields, self.field_types) for field in _pack(value, types)]
            for i, field in enumerate(fields):
                packed = _create("llvm.insertvalue", self.struct, [packed, field], position=_position((i,))).result
            _create("llvm.store", None, [packed, captures])
        else:
            captures = _create("llvm.mlir.zero", ir.Type.parse("!llvm.ptr"), []).result
        body = _create("func.constant", body_type, [], value=ir.FlatSymbolRefAttr.get(self.name)).result
        lb, ub, step = list(self.loop.operands)[:3]
        if self.serial:  # through the pointer, as xhlo-partition-codegen expects of a body
            _create("func.call_indirect", None, [body, captures, lb, ub])
        else:
            _create("func.call", None, [body, captures, lb, ub, step], callee=ir.FlatSymbolRefAttr.get(PARALLEL_FOR))

    def _stack_slot(self) -> ir.Value:
        """One struct-sized alloca in the function's entry block (not in a loop: no stack growth)."""
        entry = self.func.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(entry):
            one = _create("llvm.mlir.constant", ir.IntegerType.get_signless(64), [],
                          value=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1)).result
            return _create("llvm.alloca", ir.Type.parse("!llvm.ptr"), [one],
                           elem_type=ir.TypeAttr.get(self.struct)).result

    def _move_loop(self, outlined: ir.Operation, captures: ir.Value, begin: ir.Value, end: ir.Value) -> None:
        block = outlined.regions[0].blocks[0]
        terminator = block.operations[0]
        replacement = {}
        with ir.InsertionPoint(terminator):
            for value in self.constants:
                replacement[value] = _op(value.owner).clone().results[0]
            if self.fields:
                packed = _create("llvm.load", self.struct, [captures]).result
                i = 0
                for value, types in zip(self.fields, self.field_types):
                    fields = [_create("llvm.extractvalue", t, [packed], position=_position((i + k,))).result
                              for k, t in enumerate(types)]
                    replacement[value] = _unpack(fields, value.type)
                    i += len(types)
        self.loop.move_before(terminator)
        self.loop.operands[0] = begin
        self.loop.operands[1] = end
        if PARALLEL_LOOP in self.loop.attributes:
            del self.loop.attributes[PARALLEL_LOOP]
        for op in self.nested:
            for i, value in enumerate(op.operands):
                if value in replacement:
                    op.operands[i] = replacement[value]

"""xhlo-lapack-to-openblas: JAX's LAPACK custom calls call OpenBLAS's LAPACK, as XLA does.

``jnp.linalg`` on the CPU exports ``stablehlo.custom_call @lapack_<t><routine>_ffi``,
which XLA links to LAPACK. The OpenBLAS library xhlo already calls for matmuls
(``scipy-openblas32``, ``xhlo.blas``) carries LAPACK and its C interface, so each
call this pass knows becomes, at the call site,

    %in  = bufferization.to_buffer %operand read_only      (flattened to [batch, ...])
    %out = memref.alloc()                                  (one per result)
    func.call @xhlo_lapack<k>(%in..., %out...)
    %res = bufferization.to_tensor %out restrict writable

and ``@xhlo_lapack<k>`` copies the operand a routine overwrites into its result
and calls ``LAPACKE_<t><routine>`` (``cblas_<t>trsm`` for ``trsm``) once per
matrix of the batch with ``LAPACK_ROW_MAJOR``: LAPACKE transposes to LAPACK's
column-major order and back, so every routine sees the logical matrix, as JAX's
column-major operand layout gives it to LAPACK, and the results (``ipiv``
1-based, ``info``, reflectors, eigenvectors in columns) are LAPACK's own.

Handled: ``getrf``, ``potrf``, ``geqrf``, ``orgqr``/``ungqr``, ``syevd``/``heevd``
and ``gesdd`` for s/d/c/z, and ``trsm`` for s/d. The others (complex ``trsm``, ``gtsv``,
``geev``, ``gees``), and every call when the library is missing, are left to
``xhlo-legalize-lapack-custom-calls``, which computes them with StableHLO loops.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

from xhlo import blas
from xhlo._mlir import arith, ir, memref, scf
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops
from .gemm_to_blas import declare_external, index_constant, pointer
from .legalize_lapack_custom_calls import TARGET, backend_config
from .lower_collectives import element_bytes
from .lower_runtime_calls import alloc_buffer, to_buffer, to_tensor

SYMBOL_PREFIX = "xhlo_lapack"
LAPACK_ROW_MAJOR, LAPACK_COL_MAJOR = 101, 102
# cblas_?trsm's enums, by LAPACK's character codes (JAX's backend_config keeps the characters)
CBLAS_SIDE = {ord("L"): 141, ord("R"): 142}
CBLAS_UPLO = {ord("U"): 121, ord("L"): 122}
CBLAS_TRANS = {ord("N"): 111, ord("T"): 112, ord("C"): 113}
CBLAS_DIAG = {ord("N"): 131, ord("U"): 132}
_INT32_MAX = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class _Site:
    """One call's values inside its ``@xhlo_lapack<k>`` body, for one matrix of the batch."""

    operands: list[ir.Value]  # !llvm.ptr to the matrix (vector) of operand i
    results: list[ir.Value]  # !llvm.ptr to result i
    shapes: list[tuple[int, ...]]  # per-matrix shapes of the operands
    result_shapes: list[tuple[int, ...]]
    config: dict[str, int]
    element: ir.Type

    def char(self, key: str, default: str) -> ir.Value:
        return _int(8, self.config.get(key, ord(default)))


@dataclasses.dataclass(frozen=True)
class _Routine:
    """How one routine is called: its C symbol, the operand each result starts from
    (LAPACK overwrites it), its arguments, and the result its return value is (``info``)."""

    symbol: str  # with {t} for the element prefix
    starts_from: dict[int, int]  # result -> operand copied into it first
    arguments: Callable[[_Site], list[ir.Value]]
    info_result: int | None = None  # the result the call's return value is stored to
    returns_int: bool = True  # LAPACKE returns info; cblas returns nothing
    prefixes: str = "sdcz"


def _int(width: int, value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(width), value)


def _i32(value: int) -> ir.Value:
    return _int(32, value)


def _layout() -> ir.Value:
    return _i32(LAPACK_ROW_MAJOR)


def _getrf(s: _Site) -> list[ir.Value]:
    m, n = s.shapes[0]
    return [_layout(), _i32(m), _i32(n), s.results[0], _i32(n), s.results[1]]


def _potrf(s: _Site) -> list[ir.Value]:
    """Column-major with the other triangle: the row-major buffer of a symmetric A, read
    column-major, is A^T = A, and the factor U = L^T of that triangle, stored column-major,
    is L row-major. LAPACKE transposes nothing."""
    n = s.shapes[0][1]
    flipped = {ord("L"): ord("U"), ord("U"): ord("L")}[s.config.get("uplo", ord("L"))]
    return [_i32(LAPACK_COL_MAJOR), _int(8, flipped), _i32(n), s.results[0], _i32(n)]


def _geqrf(s: _Site) -> list[ir.Value]:
    m, n = s.shapes[0]
    return [_layout(), _i32(m), _i32(n), s.results[0], _i32(n), s.results[1]]


def _orgqr(s: _Site) -> list[ir.Value]:
    m, n = s.shapes[0]
    (k,) = s.shapes[1]
    return [_layout(), _i32(m), _i32(n), _i32(k), s.results[0], _i32(n), s.operands[1]]


def _syevd(s: _Site) -> list[ir.Value]:
    n = s.shapes[0][1]
    return [_layout(), s.char("mode", "V"), s.char("uplo", "L"), _i32(n), s.results[0], _i32(n), s.results[1]]


def _gesdd(s: _Site) -> list[ir.Value]:
    m, n = s.shapes[0]
    u_columns, vt_columns = s.result_shapes[2][1], s.result_shapes[3][1]
    return [
        _layout(), s.char("mode", "A"), _i32(m), _i32(n), s.results[0], _i32(n), s.results[1],
        s.results[2], _i32(max(u_columns, 1)), s.results[3], _i32(max(vt_columns, 1)),
    ]


def _trsm(s: _Site) -> list[ir.Value]:
    m, n = s.shapes[1]
    c = s.config
    return [
        _i32(blas.ROW_MAJOR), _i32(CBLAS_SIDE[c.get("side", ord("L"))]),
        _i32(CBLAS_UPLO[c.get("uplo", ord("L"))]), _i32(CBLAS_TRANS[c.get("trans_x", ord("N"))]),
        _i32(CBLAS_DIAG[c.get("diag", ord("N"))]), _i32(m), _i32(n), arith.constant(s.element, 1.0),  # alpha
        s.operands[0], _i32(s.shapes[0][1]), s.results[0], _i32(n),
    ]


ROUTINES: dict[str, _Routine] = {
    "getrf": _Routine("scipy_LAPACKE_{t}getrf", {0: 0}, _getrf, info_result=2),
    "potrf": _Routine("scipy_LAPACKE_{t}potrf", {0: 0}, _potrf, info_result=1),
    "geqrf": _Routine("scipy_LAPACKE_{t}geqrf", {0: 0}, _geqrf),
    "orgqr": _Routine("scipy_LAPACKE_{t}orgqr", {0: 0}, _orgqr, prefixes="sd"),
    "ungqr": _Routine("scipy_LAPACKE_{t}ungqr", {0: 0}, _orgqr, prefixes="cz"),
    "syevd": _Routine("scipy_LAPACKE_{t}syevd", {0: 0}, _syevd, info_result=2, prefixes="sd"),
    "heevd": _Routine("scipy_LAPACKE_{t}heevd", {0: 0}, _syevd, info_result=2, prefixes="cz"),
    "gesdd": _Routine("scipy_LAPACKE_{t}gesdd", {0: 0}, _gesdd, info_result=4),
    "trsm": _Routine("scipy_cblas_{t}trsm", {0: 1}, _trsm, returns_int=False, prefixes="sd"),
}
# per-matrix rank of each operand / result (what is not batch): matrices 2, vectors 1, info 0
_OPERAND_RANKS = {"orgqr": (2, 1), "ungqr": (2, 1), "trsm": (2, 2)}
_RESULT_RANKS = {
    "getrf": (2, 1, 0), "potrf": (2, 0), "geqrf": (2, 1), "orgqr": (2,), "ungqr": (2,),
    "syevd": (2, 1, 0), "heevd": (2, 1, 0), "gesdd": (2, 1, 2, 2, 0), "trsm": (2,),
}


def _split(t: ir.Type, rank: int, batch: Sequence[int]) -> tuple[int, ...] | None:
    """The per-matrix shape of a ``[*batch, ...]`` tensor, None if its batch differs."""
    shape = tuple(ir.RankedTensorType(t).shape)
    if len(shape) != len(batch) + rank or list(shape[: len(batch)]) != list(batch):
        return None
    return shape[len(batch) :]


def _plan(op: ir.Operation, routine: str) -> tuple[list[int], list[tuple], list[tuple]] | None:
    """(batch, per-matrix operand shapes, per-matrix result shapes), None if not callable."""
    types = [v.type for v in (*op.operands, *op.results)]
    if not all(isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).has_static_shape for t in types):
        return None
    first = tuple(ir.RankedTensorType(op.operands[0].type).shape)
    if len(first) < 2 or 0 in first[-2:]:
        return None
    batch = list(first[:-2])
    operand_ranks = _OPERAND_RANKS.get(routine, (2,))
    result_ranks = _RESULT_RANKS[routine]
    if len(operand_ranks) != len(op.operands) or len(result_ranks) != len(op.results):
        return None
    operands = [_split(v.type, r, batch) for v, r in zip(op.operands, operand_ranks)]
    results = [_split(v.type, r, batch) for v, r in zip(op.results, result_ranks)]
    if any(s is None for s in (*operands, *results)):
        return None
    if any(math.prod(s) > _INT32_MAX for s in (*operands, *results)):  # 32-bit LAPACK integers
        return None
    return batch, operands, results


def _flat(value: ir.Value, batch_size: int, shape: tuple[int, ...]) -> ir.Value:
    return sh.reshape(value, [batch_size, *shape])


def _matrix_pointers(bases: list[ir.Value], buffers: list[ir.Value], shapes: list[tuple], batch: ir.Value) -> list[ir.Value]:
    """Pointers to matrix ``batch`` of each ``[batch, ...]`` buffer (``bases``: their addresses)."""
    pointers = []
    for base, buffer, shape in zip(bases, buffers, shapes):
        stride = math.prod(shape) * element_bytes(ir.MemRefType(buffer.type).element_type)
        pointers.append(pointer(base, stride, batch))
    return pointers


def _define_body(module: ir.Operation, name: str, routine: _Routine, symbol: str, buffers: tuple[list, list],
                 shapes: tuple[list, list], op: ir.Operation, batch_size: int) -> None:
    """``func.func private @name(inputs..., outputs...)``: copies, then one call per matrix
    (``shapes``: per-matrix operand and result shapes; ``op``: the call, for its config)."""
    inputs, outputs = [b.type for b in buffers[0]], [b.type for b in buffers[1]]
    with ir.InsertionPoint(module.regions[0].blocks[0]), ir.Location.unknown():
        func = ir.Operation.create(
            "func.func",
            attributes={
                "sym_name": ir.StringAttr.get(name),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get(inputs + outputs, [])),
                "sym_visibility": ir.StringAttr.get("private"),
            },
            regions=1,
        )
    block = func.regions[0].blocks.append(*inputs, *outputs)
    ins, outs = list(block.arguments)[: len(inputs)], list(block.arguments)[len(inputs) :]
    with ir.InsertionPoint(block), ir.Location.unknown():
        for result, operand in routine.starts_from.items():
            memref.copy(ins[operand], outs[result])
        in_bases = [memref.extract_aligned_pointer_as_index(b) for b in ins]
        out_bases = [memref.extract_aligned_pointer_as_index(b) for b in outs]
        loop = scf.ForOp(index_constant(0), index_constant(batch_size), index_constant(1))
        with ir.InsertionPoint(loop.body):
            b = loop.induction_variable
            site = _Site(
                _matrix_pointers(in_bases, ins, shapes[0], b), _matrix_pointers(out_bases, outs, shapes[1], b),
                shapes[0], shapes[1], backend_config(op), sh.element_type(op.operands[0]),
            )
            arguments = routine.arguments(site)
            returned = [ir.IntegerType.get_signless(32)] if routine.returns_int else []
            declare_external(module, symbol, [a.type for a in arguments], returned)
            call = ir.Operation.create(
                "func.call", results=returned, operands=arguments,
                attributes={"callee": ir.FlatSymbolRefAttr.get(symbol)},
            )
            if routine.info_result is not None:
                memref.store(call.result, outs[routine.info_result], [b])
            scf.yield_([])
        ir.Operation.create("func.return")


def _lower(module: ir.Operation, op: ir.Operation, name: str, prefix: str, routine_name: str) -> bool:
    routine = ROUTINES.get(routine_name)
    if routine is None or prefix not in routine.prefixes:
        return False
    planned = _plan(op, routine_name)
    if planned is None:
        return False
    batch, operand_shapes, result_shapes = planned
    batch_size = math.prod(batch)
    with ir.InsertionPoint(op), op.location:
        inputs = [to_buffer(_flat(v, batch_size, s)) for v, s in zip(op.operands, operand_shapes)]
        flat_types = [sh.tensor_type([batch_size, *s], sh.element_type(r)) for r, s in zip(op.results, result_shapes)]
        outputs = [alloc_buffer(t) for t in flat_types]
        sh.create("func.call", [*inputs, *outputs], [], {"callee": ir.FlatSymbolRefAttr.get(name)})
        results = [
            sh.reshape(to_tensor(buffer, t), sh.shape_of(old))
            for buffer, t, old in zip(outputs, flat_types, op.results)
        ]
    symbol = routine.symbol.format(t=prefix)
    _define_body(module, name, routine, symbol, (inputs, outputs), (operand_shapes, result_shapes), op, batch_size)
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()
    return True


@dataclasses.dataclass(frozen=True)
class LapackToOpenblas(ModulePass):
    """Call OpenBLAS's LAPACK (LAPACKE, cblas trsm) for JAX's lapack_*_ffi custom calls."""

    NAME = "xhlo-lapack-to-openblas"

    def run(self, module: ir.Operation) -> None:
        if not blas.available():
            return
        count = 0
        for op in walk_ops(module, "stablehlo.custom_call"):
            match = TARGET.match(ir.StringAttr(op.attributes["call_target_name"]).value)
            if match and _lower(module, op, f"{SYMBOL_PREFIX}{count}", match.group(1), match.group(2)):
                count += 1

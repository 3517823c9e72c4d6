"""xhlo-fft-to-pocketfft: stablehlo.fft calls numpy's pocketfft, as XLA:CPU calls DUCC.

``xhlo-lower-fft`` computes FFTs in StableHLO (DFT-matrix products): exact for
every length, but 2-5x slower than XLA on rows of 1024 and 100-400 ms to
compile. A real FFT library does better on both, and numpy ships one
(``xhlo.pocketfft``). Each ``stablehlo.fft`` (FFT/IFFT/RFFT/IRFFT, 1-3 axes,
f32/f64) becomes, at the call site,

    %in  = bufferization.to_buffer %operand read_only
    %out = memref.alloc()
    func.call @xhlo_fft<k>(%in, %out)
    %res = bufferization.to_tensor %out restrict writable

and ``@xhlo_fft<k>`` transforms one axis after another: the innermost from
``%in`` to ``%out`` (RFFT: real to complex; IRFFT goes last, complex to real,
from a scratch copy), the others in place. Each axis is a loop over blocks of
lines: iteration ``t`` calls ``@xhlo_pocketfft_lines`` (pocketfft's gufunc loop,
through the table ``xhlo.pocketfft.install`` fills) for up to ``block`` lines,
which pocketfft runs SIMD across. The loop is marked for
``xhlo-parallelize-loops`` (the calls are thread-safe), so large transforms use
every core.

Every buffer is addressed through byte strides per logical dim, so JAX's
``transpose, fft, transpose`` (its transforms of other axes than the last)
reads the untransposed operand and writes the transposed result directly.

A long complex transform of few lines (past ``long-length``), which pocketfft
would run on one core, is first split four-step style in StableHLO: n = n1 *
n2 as [n1, n2], transforms of the n2 columns, a twiddle multiply, transforms
of the n1 rows; both are many lines again. A long real one of even length is
first a complex one of half the length (the even and odd samples as real and
imaginary parts, untangled after; tangled before for IRFFT).

Left to ``xhlo-lower-fft``: everything when numpy lacks the gufuncs, empty
shapes, and long real transforms of odd length or over several axes.
"""

from __future__ import annotations

import dataclasses
import math

from xhlo import pocketfft
from xhlo._mlir import arith, ir, memref, scf
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, append_definitions, defining_op, symbol_names, walk_ops
from .gemm_to_blas import index_constant, pointer
from .lower_collectives import element_bytes
from .lower_fft import (
    AxisTransforms,
    ComplexParts,
    _check_shapes,
    _deinterleave,
    _fft_type,
    _interleave,
    _source_and_dims,
    _split_factor,
    _tangle_spectrum,
    _transposing_user,
    _untangle_spectrum,
)
from .lower_runtime_calls import alloc_buffer, to_buffer, to_tensor
from .memref_copy_to_linalg import row_major_strides
from .parallelize_loops import THREAD_SAFE_ATTR, WORK_ATTR
from .vectorize import PARALLEL_LOOP

SYMBOL_PREFIX = "xhlo_fft"
TABLE = "xhlo_pocketfft_table"
LINES = "xhlo_pocketfft_lines"

# The loop table (filled by xhlo.pocketfft.install), its address for the host, and
# @xhlo_pocketfft_lines(entry, forward, in, out, lines, n_in, n_out, line stride in,
# line stride out, element stride in, element stride out, scale): the gufunc call.
_RUNTIME = f"""
llvm.mlir.global internal @{TABLE}() {{addr_space = 0 : i32, alignment = 8 : i64}} : !llvm.array<{pocketfft.TABLE_SIZE} x ptr> {{
  %zero = llvm.mlir.zero : !llvm.array<{pocketfft.TABLE_SIZE} x ptr>
  llvm.return %zero : !llvm.array<{pocketfft.TABLE_SIZE} x ptr>
}}
func.func private @{pocketfft.TABLE_ADDRESS}() -> !llvm.ptr {{
  %table = llvm.mlir.addressof @{TABLE} : !llvm.ptr
  return %table : !llvm.ptr
}}
func.func private @{LINES}(%entry: i64, %forward: i8, %in: !llvm.ptr, %out: !llvm.ptr, %lines: i64,
    %n_in: i64, %n_out: i64, %line_in: i64, %line_out: i64, %step_in: i64, %step_out: i64, %scale: f64)
    attributes {{{THREAD_SAFE_ATTR}}} {{
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c3 = llvm.mlir.constant(3 : i64) : i64
  %c5 = llvm.mlir.constant(5 : i64) : i64
  %zero = llvm.mlir.constant(0 : i64) : i64
  %args = llvm.alloca %c3 x !llvm.ptr : (i64) -> !llvm.ptr
  %dims = llvm.alloca %c3 x i64 : (i64) -> !llvm.ptr
  %steps = llvm.alloca %c5 x i64 : (i64) -> !llvm.ptr
  %scale64 = llvm.alloca %c1 x f64 : (i64) -> !llvm.ptr
  %scale32 = llvm.alloca %c1 x f32 : (i64) -> !llvm.ptr
  %direction = llvm.alloca %c1 x i8 : (i64) -> !llvm.ptr
  llvm.store %scale, %scale64 : f64, !llvm.ptr
  %narrow = llvm.fptrunc %scale : f64 to f32
  llvm.store %narrow, %scale32 : f32, !llvm.ptr
  llvm.store %forward, %direction : i8, !llvm.ptr
  %odd = llvm.and %entry, %c1 : i64
  %double = llvm.icmp "ne" %odd, %zero : i64
  %scale_ptr = llvm.select %double, %scale64, %scale32 : i1, !llvm.ptr
  %a1 = llvm.getelementptr %args[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %a2 = llvm.getelementptr %args[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  llvm.store %in, %args : !llvm.ptr, !llvm.ptr
  llvm.store %scale_ptr, %a1 : !llvm.ptr, !llvm.ptr
  llvm.store %out, %a2 : !llvm.ptr, !llvm.ptr
  %d1 = llvm.getelementptr %dims[1] : (!llvm.ptr) -> !llvm.ptr, i64
  %d2 = llvm.getelementptr %dims[2] : (!llvm.ptr) -> !llvm.ptr, i64
  llvm.store %lines, %dims : i64, !llvm.ptr
  llvm.store %n_in, %d1 : i64, !llvm.ptr
  llvm.store %n_out, %d2 : i64, !llvm.ptr
  %s1 = llvm.getelementptr %steps[1] : (!llvm.ptr) -> !llvm.ptr, i64
  %s2 = llvm.getelementptr %steps[2] : (!llvm.ptr) -> !llvm.ptr, i64
  %s3 = llvm.getelementptr %steps[3] : (!llvm.ptr) -> !llvm.ptr, i64
  %s4 = llvm.getelementptr %steps[4] : (!llvm.ptr) -> !llvm.ptr, i64
  llvm.store %line_in, %steps : i64, !llvm.ptr
  llvm.store %zero, %s1 : i64, !llvm.ptr
  llvm.store %line_out, %s2 : i64, !llvm.ptr
  llvm.store %step_in, %s3 : i64, !llvm.ptr
  llvm.store %step_out, %s4 : i64, !llvm.ptr
  %table = llvm.mlir.addressof @{TABLE} : !llvm.ptr
  %slot = llvm.getelementptr %table[%entry] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
  %loop = llvm.load %slot {{alignment = 8 : i64}} : !llvm.ptr -> !llvm.ptr
  llvm.call %loop(%args, %dims, %steps, %direction) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  return
}}
"""


@dataclasses.dataclass(frozen=True)
class _Buffer:
    """A buffer seen in the transform's logical dims: its address and byte stride per dim."""

    memref: ir.Value
    strides: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class _Step:
    """One axis of a transform: ``sizes`` are the logical dims (the axis' own entry unused)."""

    transform: str  # a gufunc of xhlo.pocketfft.TRANSFORMS
    double: bool
    forward: bool
    axis: int
    sizes: tuple[int, ...]
    n_in: int
    n_out: int
    scale: float


def _permuted_strides(shape: list[int], elem_bytes: int, dims: list[int]) -> tuple[int, ...]:
    """Byte strides of the logical dims of a row-major ``shape`` whose dim ``dims[i]`` is logical dim i."""
    strides = row_major_strides(shape)
    return tuple(strides[d] * elem_bytes for d in dims)


def _steps(kind: str, lengths: list[int], in_shape: list[int], out_shape: list[int], double: bool) -> list[_Step]:
    """The axis transforms in order (the first reads the operand; IRFFT's last writes the result)."""
    rank, count = len(in_shape), len(lengths)
    outer_axes = list(range(rank - count, rank - 1))
    inverse = kind in ("IFFT", "IRFFT")
    n = lengths[-1]

    def c2c(axis: int, sizes: list[int]) -> _Step:
        size = sizes[axis]
        return _Step("fft", double, not inverse, axis, tuple(sizes), size, size, 1.0 / size if inverse else 1.0)

    if kind in ("FFT", "IFFT"):
        return [c2c(rank - 1, out_shape)] + [c2c(a, out_shape) for a in reversed(outer_axes)]
    if kind == "RFFT":
        first = _Step("rfft_n_even" if n % 2 == 0 else "rfft_n_odd", double, True, rank - 1,
                      tuple(out_shape), n, n // 2 + 1, 1.0)
        return [first] + [c2c(a, out_shape) for a in reversed(outer_axes)]
    last = _Step("irfft", double, False, rank - 1, tuple(out_shape), n // 2 + 1, n, 1.0 / n)
    return [c2c(a, in_shape) for a in reversed(outer_axes)] + [last]


@dataclasses.dataclass(frozen=True)
class FftToPocketfft(ModulePass):
    """Call numpy's pocketfft for stablehlo.fft (all cores, SIMD across lines)."""

    NAME = "xhlo-fft-to-pocketfft"

    # transforms longer than this with fewer than ``few_lines`` lines stay with xhlo-lower-fft
    long_length: int = 1 << 16
    few_lines: int = 4
    # lines per call: at least ``block`` and enough for ``elements_per_call`` elements
    block: int = 16
    elements_per_call: int = 1 << 15

    def __post_init__(self):
        if self.block < 1 or self.elements_per_call < 1:
            raise ValueError(f"pass '{self.NAME}': block and elements-per-call must be at least 1, "
                             f"got {self.block} and {self.elements_per_call}")

    def run(self, module: ir.Operation) -> None:
        if not walk_ops(module, "stablehlo.fft") or not pocketfft.available():
            return
        for op in walk_ops(module, "stablehlo.fft"):
            self._halve_long_real_line(op)
        for op in walk_ops(module, "stablehlo.fft"):
            self._split_long_line(op)
        count = 0
        for op in walk_ops(module, "stablehlo.fft"):
            if self._lower(module, op, f"{SYMBOL_PREFIX}{count}"):
                count += 1
        if count and LINES not in symbol_names(module):
            append_definitions(module, _RUNTIME)

    def _few_long_lines(self, shape: list[int], n: int) -> bool:
        return n > self.long_length and 0 not in shape and math.prod(shape) // shape[-1] < self.few_lines

    def _halve_long_real_line(self, op: ir.Operation) -> None:
        """A long RFFT/IRFFT of few lines and even length n as a complex transform of n/2
        points (the even and odd samples as real and imaginary parts, untangled after or
        tangled before, as ``xhlo-lower-fft`` does), which ``_split_long_line`` then splits."""
        kind, lengths = _fft_type(op), list(ir.DenseI64ArrayAttr(op.attributes["fft_length"]))
        if kind not in ("RFFT", "IRFFT") or len(lengths) != 1 or lengths[-1] % 2:
            return
        real = op.operands[0] if kind == "RFFT" else op.results[0]
        if not all(ir.RankedTensorType(v.type).has_static_shape for v in (op.operands[0], op.results[0])):
            return
        shape, n = list(sh.shape_of(real)), lengths[-1]
        if not self._few_long_lines(shape, n):
            return
        r, real_elem = len(shape) - 1, sh.element_type(real)
        with ir.InsertionPoint(op), op.location:
            if kind == "RFFT":
                even, odd = _deinterleave(op.operands[0], r, n // 2)
                z = sh.fft(sh.complex_from_parts(even, odd), "FFT", [n // 2])
                parts = _untangle_spectrum(ComplexParts(sh.real(z), sh.imag(z)), r, n, real_elem)
                result = sh.complex_from_parts(parts.re, parts.im)
            else:
                x = op.operands[0]
                parts = _tangle_spectrum(ComplexParts(sh.real(x), sh.imag(x)), r, n, real_elem)
                z = sh.fft(sh.complex_from_parts(parts.re, parts.im), "IFFT", [n // 2])
                result = _interleave(ComplexParts(sh.real(z), sh.imag(z)), r)
        op.results[0].replace_all_uses_with(result)
        op.erase()

    def _split_long_line(self, op: ir.Operation) -> None:
        """A long FFT/IFFT of few lines as two transforms of many lines: with input index
        j = j1 * n2 + j2 and output index k = k1 + n1 * k2, X[k] is the n2-point
        transform over j2 of w^(j2 k1) times the n1-point transform over j1."""
        kind, lengths = _fft_type(op), list(ir.DenseI64ArrayAttr(op.attributes["fft_length"]))
        if kind not in ("FFT", "IFFT") or len(lengths) != 1:
            return
        if not ir.RankedTensorType(op.operands[0].type).has_static_shape:
            return
        shape, n = list(sh.shape_of(op.operands[0])), lengths[-1]
        n1 = _split_factor(n)
        if not self._few_long_lines(shape, n) or n1 == 1:
            return
        n2, r = n // n1, len(shape) - 1
        swap = [*range(r), r + 1, r]
        real_elem = ir.ComplexType(sh.element_type(op.operands[0])).element_type
        with ir.InsertionPoint(op), op.location:
            x = sh.transpose(sh.reshape(op.operands[0], [*shape[:-1], n1, n2]), swap)  # [j2, j1]
            x = sh.fft(x, kind, [n1])  # [j2, k1]
            parts = AxisTransforms(real_elem, n1).times_twiddles(
                ComplexParts(sh.real(x), sh.imag(x)), n1, n2, n, kind == "IFFT", k1_dim=r + 1, j2_dim=r)
            x = sh.fft(sh.transpose(sh.complex_from_parts(parts.re, parts.im), swap), kind, [n2])  # [k1, k2]
            result = sh.reshape(sh.transpose(x, swap), shape)  # [k2, k1]
        op.results[0].replace_all_uses_with(result)
        op.erase()

    def _takes(self, op: ir.Operation, kind: str, lengths: list[int]) -> bool:
        operand, result = (ir.RankedTensorType(v.type) for v in (op.operands[0], op.results[0]))
        if not (operand.has_static_shape and result.has_static_shape):
            return False
        if 0 in operand.shape or 0 in result.shape:
            return False
        complex_side = operand if kind != "RFFT" else result
        part = ir.ComplexType(complex_side.element_type).element_type if isinstance(
            complex_side.element_type, ir.ComplexType) else None
        if not isinstance(part, (ir.F32Type, ir.F64Type)):
            return False
        return not self._few_long_lines(list(operand.shape), lengths[-1])

    def _lower(self, module: ir.Operation, op: ir.Operation, name: str) -> bool:
        kind = _fft_type(op)
        lengths = list(ir.DenseI64ArrayAttr(op.attributes["fft_length"]))
        _check_shapes(op, kind, lengths)
        if not self._takes(op, kind, lengths):
            return False
        in_shape, out_shape = list(sh.shape_of(op.operands[0])), list(sh.shape_of(op.results[0]))
        rank = len(in_shape)
        # read the untransposed operand / write the transposed result, strides doing the moves
        producer = defining_op(op.operands[0], "stablehlo.transpose")
        source, dims = _source_and_dims(op.operands[0])
        source_dims = [dims.index(d) for d in range(rank)]  # the source dim of each operand dim
        user = _transposing_user(op)
        result_type = ir.RankedTensorType((user or op).results[0].type)
        result_dims = list(range(rank))
        if user is not None:
            permutation = list(ir.DenseI64ArrayAttr(user.attributes["permutation"]))
            result_dims = [permutation.index(d) for d in range(rank)]
        in_elem, out_elem = sh.element_type(source), result_type.element_type
        double = isinstance(ir.ComplexType(out_elem if kind != "IRFFT" else in_elem).element_type, ir.F64Type)
        steps = _steps(kind, lengths, in_shape, out_shape, double)
        with ir.InsertionPoint(op), op.location:
            buffers = [to_buffer(source), alloc_buffer(result_type)]
            if kind == "IRFFT" and len(steps) > 1:  # its complex steps' scratch
                buffers.append(alloc_buffer(sh.tensor_type(in_shape, in_elem)))
            sh.create("func.call", buffers, [], {"callee": ir.FlatSymbolRefAttr.get(name)})
            result = to_tensor(buffers[1], result_type)
        strides = [
            _permuted_strides(sh.shape_of(source), element_bytes(in_elem), source_dims),
            _permuted_strides(list(result_type.shape), element_bytes(out_elem), result_dims),
            _permuted_strides(in_shape, element_bytes(in_elem), list(range(rank))),
        ]
        self._define_body(module, name, buffers, strides, steps)
        (user or op).results[0].replace_all_uses_with(result)
        if user is not None:
            user.erase()
        op.erase()
        if producer is not None and not list(producer.results[0].uses):
            producer.erase()
        return True

    def _define_body(self, module: ir.Operation, name: str, buffers: list[ir.Value],
                     strides: list[tuple[int, ...]], steps: list[_Step]) -> None:
        """``func.func private @name(%in, %out[, %scratch])``: the steps, each a loop over
        blocks of lines (``strides``: of each buffer, per logical dim)."""
        types = [b.type for b in buffers]
        with ir.InsertionPoint(module.regions[0].blocks[0]), ir.Location.unknown():
            func = sh.create("func.func", [], [], {
                "sym_name": ir.StringAttr.get(name),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get(types, [])),
                "sym_visibility": ir.StringAttr.get("private"),
            }, regions=1)
        block = func.regions[0].blocks.append(*types)
        source, target, *scratch = (_Buffer(b, s) for b, s in zip(block.arguments, strides))
        with ir.InsertionPoint(block), ir.Location.unknown():
            for index, step in enumerate(steps):
                if not scratch:  # the first step reads the operand, every step writes the result
                    reads, writes = (source if index == 0 else target), target
                else:  # IRFFT: the complex steps in the scratch buffer, the last one into the result
                    reads = source if index == 0 else scratch[0]
                    writes = target if index == len(steps) - 1 else scratch[0]
                self._emit_step(step, reads, writes)
            sh.create("func.return", [], [])

    def _lines_per_call(self, step: _Step, size: int) -> int:
        wanted = max(self.block, -(-self.elements_per_call // max(step.n_out, 1)))
        wanted = -(-wanted // self.block) * self.block
        return max(1, min(size, wanted))

    def _emit_step(self, step: _Step, reads: _Buffer, writes: _Buffer) -> None:
        """A loop over blocks of lines along the outer dim with the smallest written stride,
        times every other outer dim; each iteration one call."""
        outer = [d for d in range(len(step.sizes)) if d != step.axis and step.sizes[d] > 1]
        lined = min(outer, key=lambda d: writes.strides[d]) if outer else None
        others = [d for d in outer if d != lined]
        lines = step.sizes[lined] if lined is not None else 1
        per_call = self._lines_per_call(step, lines)
        blocks = -(-lines // per_call)
        trips = blocks * math.prod(step.sizes[d] for d in others)
        in_base = memref.extract_aligned_pointer_as_index(reads.memref)
        out_base = memref.extract_aligned_pointer_as_index(writes.memref)
        loop = scf.ForOp(index_constant(0), index_constant(trips), index_constant(1))
        if trips > 1:
            loop.operation.attributes[PARALLEL_LOOP] = ir.UnitAttr.get()
        with ir.InsertionPoint(loop.body):
            rest = loop.induction_variable
            block_index = arith.remui(rest, index_constant(blocks))
            rest = arith.divui(rest, index_constant(blocks))
            first_line = arith.muli(block_index, index_constant(per_call))
            offsets = [arith.muli(first_line, index_constant(b.strides[lined] if lined is not None else 0))
                       for b in (reads, writes)]
            for d in reversed(others):
                position = arith.remui(rest, index_constant(step.sizes[d]))
                rest = arith.divui(rest, index_constant(step.sizes[d]))
                offsets = [arith.addi(o, arith.muli(position, index_constant(b.strides[d])))
                           for o, b in zip(offsets, (reads, writes))]
            count = arith.minui(index_constant(per_call), arith.subi(index_constant(lines), first_line))
            line_strides = [b.strides[lined] if lined is not None else 0 for b in (reads, writes)]
            arguments = [
                _i64(pocketfft.entry(step.transform, step.double)),
                arith.constant(ir.IntegerType.get_signless(8), int(step.forward)),
                pointer(in_base, 1, offsets[0]), pointer(out_base, 1, offsets[1]),
                arith.index_cast(ir.IntegerType.get_signless(64), count),
                _i64(step.n_in), _i64(step.n_out), _i64(line_strides[0]), _i64(line_strides[1]),
                _i64(reads.strides[step.axis]), _i64(writes.strides[step.axis]),
                arith.constant(ir.F64Type.get(), step.scale),
            ]
            sh.create("func.call", arguments, [], {"callee": ir.FlatSymbolRefAttr.get(LINES)})
            scf.yield_([])
        work = per_call * step.n_out * max(1, math.ceil(math.log2(max(step.n_out, 2))))
        loop.operation.attributes[WORK_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), work)


def _i64(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(64), value)




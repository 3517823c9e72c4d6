"""xhlo-lower-fft: stablehlo.fft as products with constant DFT matrices.

The upstream linalg lowering has no FFT and xhlo links no FFT library, so each
transformed axis becomes a ``dot_general`` with its discrete Fourier transform
matrix, computed here in numpy. That is O(n^2) per axis instead of O(n log n),
but exact in its semantics for every length (no power-of-two restriction) and
made of ops the rest of the pipeline already lowers.

* FFT / IFFT: complex-to-complex over the last ``len(fft_length)`` axes; IFFT
  scales by 1/n per axis.
* RFFT: the innermost axis first, real input times the first n//2+1 columns of
  the DFT matrix (its other columns are the conjugate mirror); the outer axes
  are then complex-to-complex.
* IRFFT: the outer axes complex-to-complex first, the innermost axis last,
  rebuilding the n real outputs from n//2+1 inputs by Hermitian symmetry. As in
  numpy and XLA, the imaginary parts of the DC term (and of the Nyquist term for
  even n) are ignored.

Twiddles are computed in float64 from exact integer phases (j*k mod n) and
rounded once to the element type; complex products are split into real
``dot_general``s on the real and imaginary parts.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops

# -- DFT matrices (numpy, float64) -----------------------------------------------------


def roots_of_unity(rows: int, cols: int, n: int) -> np.ndarray:
    """exp(2*pi*i * (j*k mod n) / n) for j < rows, k < cols, in float64.

    The phase is reduced exactly in integers to the nearest quarter turn plus a
    remainder of at most 1/8 turn, so quarter turns give exact 0 and +-1 and
    symmetric entries are bitwise symmetric (as in FFT libraries' twiddles).
    """
    turns = np.outer(np.arange(rows, dtype=np.int64), np.arange(cols, dtype=np.int64)) % n
    quarter = (4 * turns + n // 2) // n  # nearest multiple of n/4, in quarter turns
    rest = 2.0 * np.pi * (4 * turns - quarter * n) / (4.0 * n)  # |rest| <= pi/4
    c, s = np.cos(rest), np.sin(rest)
    rotated = {0: (c, s), 1: (-s, c), 2: (-c, -s), 3: (s, -c)}
    quarter %= 4
    real = np.select([quarter == q for q in range(4)], [rotated[q][0] for q in range(4)])
    imag = np.select([quarter == q for q in range(4)], [rotated[q][1] for q in range(4)])
    return real + 1j * imag


def dft_matrix(n: int, inverse: bool = False) -> np.ndarray:
    """M[j, k] = exp(-+2*pi*i*j*k/n) (/ n for the inverse): ``x @ M`` transforms x."""
    roots = roots_of_unity(n, n, n)
    return roots / n if inverse else np.conj(roots)


def rfft_matrix(n: int) -> np.ndarray:
    """The n//2+1 non-redundant columns of the forward DFT matrix (real input)."""
    return dft_matrix(n)[:, : n // 2 + 1]


def irfft_matrices(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) with ``real(X) @ A + imag(X) @ B`` = the n real outputs of IRFFT of X[: n//2+1].

    Terms 1..ceil(n/2)-1 stand for themselves and their conjugate mirror
    (weight 2); the DC and Nyquist terms appear once and only by their real part.
    """
    m = n // 2 + 1
    weight = np.full(m, 2.0)
    weight[0] = 1.0
    if n % 2 == 0:
        weight[m - 1] = 1.0
    roots = roots_of_unity(m, n, n)
    cos_part = weight[:, None] * roots.real / n
    sin_part = -weight[:, None] * roots.imag / n
    sin_part[0] = 0.0
    if n % 2 == 0:
        sin_part[m - 1] = 0.0
    return cos_part, sin_part


# -- IR building -----------------------------------------------------------------------


def _real_constant(matrix: np.ndarray, real_elem: ir.Type) -> ir.Value:
    dtype = np.float64 if isinstance(real_elem, ir.F64Type) else np.float32
    return sh.constant_array(np.ascontiguousarray(matrix.astype(dtype)))


def _contract(x: ir.Value, axis: int, matrix: ir.Value) -> ir.Value:
    """x's ``axis`` times ``matrix`` (rows); the new axis is appended last."""
    return sh.dot_general(x, matrix, contract=([axis], [0]))


def _slice_axis(x: ir.Value, axis: int, start: int, stop: int) -> ir.Value:
    shape = sh.shape_of(x)
    begin = [start if d == axis else 0 for d in range(len(shape))]
    limit = [stop if d == axis else n for d, n in enumerate(shape)]
    return sh.slice(x, begin, limit)


def _split_factor(n: int) -> int:
    """The largest divisor of n not above sqrt(n) (1 for primes)."""
    for d in range(math.isqrt(n), 1, -1):
        if n % d == 0:
            return d
    return 1


@dataclasses.dataclass(frozen=True)
class ComplexParts:
    """A complex tensor kept as real and imaginary parts between transforms."""

    re: ir.Value
    im: ir.Value | None  # None: purely real (RFFT input)

    def map(self, fn) -> ComplexParts:
        return ComplexParts(fn(self.re), fn(self.im) if self.im is not None else None)

    def times_matrix(self, axis: int, matrix: np.ndarray, real_elem: ir.Type) -> ComplexParts:
        """Contract ``axis`` with a complex matrix; the new axis goes last."""
        m_re = _real_constant(matrix.real, real_elem)
        m_im = _real_constant(matrix.imag, real_elem)
        re = _contract(self.re, axis, m_re)
        im = _contract(self.re, axis, m_im)
        if self.im is not None:
            re = sh.subtract(re, _contract(self.im, axis, m_im))
            im = sh.add(im, _contract(self.im, axis, m_re))
        return ComplexParts(re, im)

    def times_elementwise(
        self, factor: np.ndarray, dims: list[int], real_elem: ir.Type
    ) -> ComplexParts:
        """Multiply by a complex constant broadcast along ``dims``."""
        shape = sh.shape_of(self.re)
        f_re = sh.broadcast_in_dim(_real_constant(factor.real, real_elem), shape, dims)
        f_im = sh.broadcast_in_dim(_real_constant(factor.imag, real_elem), shape, dims)
        if self.im is None:
            return ComplexParts(sh.multiply(self.re, f_re), sh.multiply(self.re, f_im))
        return ComplexParts(
            sh.subtract(sh.multiply(self.re, f_re), sh.multiply(self.im, f_im)),
            sh.add(sh.multiply(self.re, f_im), sh.multiply(self.im, f_re)),
        )


@dataclasses.dataclass(frozen=True)
class AxisTransforms:
    """One-axis transforms; each contracts ``axis`` and appends the result axis last.

    Lengths up to ``direct_limit`` (and primes) use one DFT matrix. Longer
    composite lengths n = n1 * n2 are split Cooley-Tukey style: length-n1 DFTs,
    a twiddle multiply, length-n2 DFTs (recursively), keeping constants and work
    at O(n * (n1 + n2)) instead of O(n^2).
    """

    real_elem: ir.Type
    direct_limit: int

    def _direct(self, n: int) -> bool:
        return n <= self.direct_limit or _split_factor(n) == 1

    def c2c(self, x: ComplexParts, axis: int, n: int, inverse: bool) -> ComplexParts:
        if self._direct(n):
            return x.times_matrix(axis, dft_matrix(n, inverse), self.real_elem)
        n1 = _split_factor(n)
        n2 = n // n1
        # Input index j = j1 * n2 + j2, output index k = k1 + n1 * k2.
        shape = list(sh.shape_of(x.re))
        split = shape[:axis] + [n1, n2] + shape[axis + 1 :]
        x = x.map(lambda v: sh.reshape(v, split))
        x = self.c2c(x, axis, n1, inverse)  # over j1: [.., j2, .., k1]
        last = len(split) - 1
        roots = roots_of_unity(n2, n1, n)  # [j2, k1]
        twiddle = roots if inverse else np.conj(roots)
        x = x.times_elementwise(twiddle, [axis, last], self.real_elem)
        x = self.c2c(x, axis, n2, inverse)  # over j2: [.., k1, k2]
        rank = len(split) - 1
        swap = list(range(rank - 1)) + [rank, rank - 1]
        merged = shape[:axis] + shape[axis + 1 :] + [n]
        return x.map(lambda v: sh.reshape(sh.transpose(v, swap), merged))

    def rfft(self, x: ir.Value, axis: int, n: int) -> ComplexParts:
        """Real input: the n//2+1 non-redundant outputs."""
        if self._direct(n):
            return ComplexParts(x, None).times_matrix(axis, rfft_matrix(n), self.real_elem)
        full = self.c2c(ComplexParts(x, None), axis, n, inverse=False)
        last = len(sh.shape_of(x)) - 1
        return full.map(lambda v: _slice_axis(v, last, 0, n // 2 + 1))

    def irfft(self, x: ComplexParts, axis: int, n: int) -> ir.Value:
        """n real outputs from the n//2+1 leading terms of a Hermitian spectrum."""
        if self._direct(n):
            cos_part, sin_part = irfft_matrices(n)
            return sh.add(
                _contract(x.re, axis, _real_constant(cos_part, self.real_elem)),
                _contract(x.im, axis, _real_constant(sin_part, self.real_elem)),
            )
        m = n // 2 + 1
        keep_imag = np.ones(m)
        keep_imag[0] = 0.0  # DC (and Nyquist) count by their real part only
        if n % 2 == 0:
            keep_imag[m - 1] = 0.0
        im = sh.multiply(
            x.im,
            sh.broadcast_in_dim(
                _real_constant(keep_imag, self.real_elem), sh.shape_of(x.im), [axis]
            ),
        )
        # X[k] = conj(X[n - k]) for k = m .. n-1.
        mirror_re = sh.reverse(_slice_axis(x.re, axis, 1, n - m + 1), [axis])
        mirror_im = sh.unary("negate", sh.reverse(_slice_axis(x.im, axis, 1, n - m + 1), [axis]))
        full = ComplexParts(
            sh.concatenate([x.re, mirror_re], axis), sh.concatenate([im, mirror_im], axis)
        )
        return self.c2c(full, axis, n, inverse=True).re


def _fft_type(op: ir.Operation) -> str:
    """``#stablehlo<fft_type IRFFT>`` -> ``IRFFT``."""
    return str(op.attributes["fft_type"]).rstrip(">").split()[-1]


def _check_shapes(op: ir.Operation, kind: str, lengths: list[int]) -> None:
    for value in (op.operands[0], op.results[0]):
        if not ir.RankedTensorType(value.type).has_static_shape:
            raise PassError(op, f"'stablehlo.fft' needs static shapes, got {value.type}")
    operand_shape = list(sh.shape_of(op.operands[0]))
    count = len(lengths)
    if not 1 <= count <= 3 or count > len(operand_shape):
        raise PassError(
            op, f"fft_length must name 1 to 3 of the operand's {len(operand_shape)} dims"
        )
    expected = list(lengths)
    if kind == "IRFFT":
        expected[-1] = lengths[-1] // 2 + 1
    if operand_shape[-count:] != expected:
        raise PassError(
            op,
            f"operand dims {operand_shape[-count:]} do not match {kind} with fft_length {lengths}",
        )


def _lower(op: ir.Operation, kind: str, lengths: list[int], direct_limit: int) -> ir.Value:
    """The replacement value of one stablehlo.fft, built at the current insertion point."""
    x = op.operands[0]
    result_type = ir.RankedTensorType(op.results[0].type)
    if 0 in sh.shape_of(x) or 0 in result_type.shape:
        return sh.constant(0, result_type)
    elem = result_type.element_type if kind != "RFFT" else sh.element_type(x)
    real_elem = ir.ComplexType(elem).element_type if isinstance(elem, ir.ComplexType) else elem
    axes = AxisTransforms(real_elem, direct_limit)
    rank, count = len(sh.shape_of(x)), len(lengths)
    first = rank - count  # the outermost transformed axis

    # Transforming position `first` moves that axis last; doing so for each of the
    # c2c axes in turn rotates them back into their original order.
    if kind in ("FFT", "IFFT"):
        parts = ComplexParts(sh.real(x), sh.imag(x))
        for n in lengths:
            parts = axes.c2c(parts, first, n, inverse=kind == "IFFT")
        return sh.complex_from_parts(parts.re, parts.im)
    if kind == "RFFT":
        parts = axes.rfft(x, rank - 1, lengths[-1])
        for n in lengths[:-1]:
            parts = axes.c2c(parts, first, n, inverse=False)
        result = sh.complex_from_parts(parts.re, parts.im)
        if count == 1:
            return result
        # The innermost axis now sits at `first`, followed by the outer axes.
        permutation = list(range(first)) + list(range(first + 1, rank)) + [first]
        return sh.transpose(result, permutation)
    # IRFFT: outer axes (rotating), then the innermost axis, which lands last.
    parts = ComplexParts(sh.real(x), sh.imag(x))
    for n in lengths[:-1]:
        parts = axes.c2c(parts, first, n, inverse=True)
    return axes.irfft(parts, first, lengths[-1])


@dataclasses.dataclass(frozen=True)
class LowerFft(ModulePass):
    """Lower stablehlo.fft (FFT/IFFT/RFFT/IRFFT, 1-3 axes) to dot_general with DFT matrices."""

    NAME = "xhlo-lower-fft"

    direct_limit: int = 64  # longer composite axes are split (Cooley-Tukey) into shorter DFTs

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.fft"):
            kind = _fft_type(op)
            lengths = list(ir.DenseI64ArrayAttr(op.attributes["fft_length"]))
            _check_shapes(op, kind, lengths)
            with ir.InsertionPoint(op), op.location:
                result = _lower(op, kind, lengths, self.direct_limit)
            op.results[0].replace_all_uses_with(result)
            op.erase()

"""xhlo-lower-fft: stablehlo.fft as products with constant DFT matrices.

The upstream linalg lowering has no FFT and xhlo links no FFT library, so each
transformed axis becomes ``dot_general``s with discrete Fourier transform
matrices computed here in numpy, made of ops the rest of the pipeline lowers
well (GEMMs on BLAS or xhlo's small-GEMM loops, fused elementwise twiddles,
blocked transposes). Lengths up to ``direct-limit`` (and primes) take one DFT
matrix; longer composite lengths are split Cooley-Tukey style, recursively,
which keeps the work at O(n * (n1 + n2)) per element for n = n1 * n2. Exact in
its semantics for every length (no power-of-two restriction).

* FFT / IFFT: complex-to-complex over the last ``len(fft_length)`` axes; IFFT
  scales by 1/n per axis.
* RFFT: the innermost axis first, real input times the first n//2+1 columns of
  the DFT matrix (its other columns are the conjugate mirror), or, for a split
  even length, a complex transform of half the length of the even and odd
  samples, untangled after; the outer axes are then complex-to-complex.
* IRFFT: the outer axes complex-to-complex first, the innermost axis last,
  rebuilding the n real outputs from n//2+1 inputs by Hermitian symmetry (a
  split even length: the inverse of RFFT's half-length transform). As in
  numpy and XLA, the imaginary parts of the DC term (and of the Nyquist term for
  even n) are ignored.

Where each axis is transformed (in place, or moved to the front so every
product is one large GEMM) is ``AxisTransforms``' choice; a ``Layout`` tracks
the moves and one transpose at the end restores the order. Twiddles are
computed in float64 from exact integer phases (j*k mod n) and rounded once to
the element type; complex products are split into real ``dot_general``s on
the real and imaginary parts.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, defining_op, walk_ops

# -- DFT matrices (numpy, float64) -----------------------------------------------------


def roots_of_unity(rows: int, cols: int, n: int, row_step: int = 1) -> np.ndarray:
    """exp(2*pi*i * (row_step*j*k mod n) / n) for j < rows, k < cols, in float64.

    The phase is reduced exactly in integers to the nearest quarter turn plus a
    remainder of at most 1/8 turn, so quarter turns give exact 0 and +-1 and
    symmetric entries are bitwise symmetric (as in FFT libraries' twiddles).
    """
    turns = np.outer(np.arange(rows, dtype=np.int64) * row_step, np.arange(cols, dtype=np.int64)) % n
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


def _matrix(matrix: np.ndarray, lead: bool, real_elem: ir.Type) -> ir.Value:
    """The constant ``_times`` multiplies by: [j, k], or [k, j] when it leads."""
    return _real_constant(matrix.T if lead else matrix, real_elem)


def _times(x: ir.Value, position: int, matrix: ir.Value, lead: bool) -> ir.Value:
    """Contract x's dim ``position`` with a matrix built by ``_matrix``.

    Leading (x's dim 0 only), the matrix is the left operand: one GEMM over all
    the other dims, and k stays first. Otherwise k is appended last (the
    spec's dot_general order: free dims of x, then the matrix's).
    """
    if lead:
        assert position == 0
        return sh.dot_general(matrix, x, contract=([1], [0]))
    return sh.dot_general(x, matrix, contract=([position], [0]))


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

    @property
    def shape(self) -> list[int]:
        return list(sh.shape_of(self.re))

    def times_matrix(
        self, position: int, matrix: np.ndarray, real_elem: ir.Type, lead: bool = False
    ) -> ComplexParts:
        """Contract dim ``position`` with a complex matrix [j, k] (see ``_times``)."""
        m_re = _matrix(matrix.real, lead, real_elem)
        m_im = _matrix(matrix.imag, lead, real_elem)
        re = _times(self.re, position, m_re, lead)
        im = _times(self.re, position, m_im, lead)
        if self.im is not None:
            re = sh.subtract(re, _times(self.im, position, m_im, lead))
            im = sh.add(im, _times(self.im, position, m_re, lead))
        return ComplexParts(re, im)

    def times_elementwise(
        self, factor: np.ndarray, dims: list[int], real_elem: ir.Type
    ) -> ComplexParts:
        """Multiply by a complex constant broadcast along ``dims``."""
        shape = self.shape
        f_re = sh.broadcast_in_dim(_real_constant(factor.real, real_elem), shape, dims)
        f_im = sh.broadcast_in_dim(_real_constant(factor.imag, real_elem), shape, dims)
        if self.im is None:
            return ComplexParts(sh.multiply(self.re, f_re), sh.multiply(self.re, f_im))
        return ComplexParts(
            sh.subtract(sh.multiply(self.re, f_re), sh.multiply(self.im, f_im)),
            sh.add(sh.multiply(self.re, f_im), sh.multiply(self.im, f_re)),
        )


@dataclasses.dataclass
class Layout:
    """The parts and which operand dim each of their dims holds.

    Transforms move their axis: to the front for the leading-axis algorithm, or
    last when a direct DFT contracts it in place; ``dims[p]`` remembers the
    operand dim at position p, and ``restore`` transposes back once at the end.
    """

    parts: ComplexParts
    dims: list[int]

    def position(self, axis: int) -> int:
        return self.dims.index(axis)

    def move_to_front(self, axis: int) -> None:
        """A transpose (a reshape when only unit dims precede the axis)."""
        position = self.position(axis)
        if position == 0:
            return
        permutation = [position] + [p for p in range(len(self.dims)) if p != position]
        shape = self.parts.shape
        if math.prod(shape[:position]) == 1:
            new_shape = [shape[p] for p in permutation]
            self.parts = self.parts.map(lambda v: sh.reshape(v, new_shape))
        else:
            self.parts = self.parts.map(lambda v: sh.transpose(v, permutation))
        self.dims = [self.dims[p] for p in permutation]

    def moved_last(self, axis: int) -> None:
        """The transform at ``axis``'s position appended its result last."""
        self.dims.remove(axis)
        self.dims.append(axis)

    def restore(self, order: list[int] | None = None) -> ComplexParts:
        """The parts with their dims in ``order`` (operand dims; their own order by default)."""
        permutation = [self.dims.index(d) for d in (order or sorted(self.dims))]
        if permutation == sorted(permutation):
            return self.parts
        return self.parts.map(lambda v: sh.transpose(v, permutation))


@dataclasses.dataclass(frozen=True)
class AxisTransforms:
    """One-axis transforms on a ``Layout``; each picks where its axis goes.

    * ``in place``: a direct DFT (lengths up to ``direct_limit``, and primes) of
      the last dim, or of a middle dim with at least ``MIN_PANEL`` trailing
      elements or at most ``MAX_BATCH`` leading ones, multiplies by the DFT
      matrix where the axis is (one GEMM per real product, or a batch over the
      leading dims); the result dim goes last.
    * ``last``: in a one-axis transform, a longer length n = n1 * n2 of the
      last dim, with n1 direct and a multiple of ``PANEL_MULTIPLE``, is split
      Cooley-Tukey style where it is: a batch of length-n1 DFTs on the middle
      dim of [..., n1, n2], a twiddle multiply, a swap of the two last dims,
      length-n2 DFTs on the last dim (recursively), a swap back. No transpose
      of the whole operand.
    * ``leading``: otherwise the axis is moved to the front (a transpose) and
      split there: length-n1 DFTs on the leading dim, a twiddle multiply, a swap
      of the two leading dims, length-n2 DFTs on the leading dim (recursively).
      Every product is then one large GEMM over all the other dims.

    Split lengths cost O(n * (n1 + n2)) per element instead of O(n^2). Measured
    (``benchmarks/bench_ops.py`` and by hand): ``last`` beat ``leading`` 1.5-3x
    on rows of 1024 and 4096 (two transposes of the operand saved), lost 4x on
    rows of 1000 (n1 = 25: the batch of 25-column GEMMs runs far below BLAS
    speed), and made a 512x512 rfft2 2-3x slower (its rows' output feeds the
    column transform's products in a layout they take badly).
    """

    real_elem: ir.Type
    direct_limit: int
    one_axis: bool = True  # the op transforms a single axis (``last`` allowed)

    MIN_PANEL = 64  # trailing elements that make an in-place middle-dim product worth it
    MAX_BATCH = 16  # ... or leading elements few enough (a batch of that many GEMMs)
    TWIDDLE_TABLE = 1 << 16  # entries of the largest twiddle constant
    PANEL_MULTIPLE = 8  # n1 that batches of middle-dim GEMMs run well with

    def _direct(self, n: int) -> bool:
        return n <= self.direct_limit or _split_factor(n) == 1

    def _strategy(self, layout: Layout, axis: int, n: int) -> str:
        position = layout.position(axis)
        last = position == len(layout.dims) - 1
        if self._direct(n):
            shape = layout.parts.shape
            trailing, leading = math.prod(shape[position + 1 :]), math.prod(shape[:position])
            worth_it = trailing >= self.MIN_PANEL or leading <= self.MAX_BATCH
            return "in place" if last or (position > 0 and worth_it) else "leading"
        n1 = _split_factor(n)
        if self.one_axis and last and self._direct(n1) and n1 % self.PANEL_MULTIPLE == 0:
            return "last"
        return "leading"

    def c2c(self, layout: Layout, axis: int, n: int, inverse: bool, rows: int | None = None) -> None:
        """Complex DFT of ``axis`` (its first ``rows`` outputs)."""
        rows = n if rows is None else rows
        strategy = self._strategy(layout, axis, n)
        if strategy == "leading":
            layout.move_to_front(axis)
            layout.parts = self.leading_c2c(layout.parts, n, inverse, rows)
            return
        position = layout.position(axis)
        if strategy == "last":
            layout.parts = self.last_c2c(layout.parts, n, inverse, rows)
            return
        matrix = dft_matrix(n, inverse)[:, :rows]
        layout.parts = layout.parts.times_matrix(position, matrix, self.real_elem)
        layout.moved_last(axis)

    def leading_c2c(self, x: ComplexParts, n: int, inverse: bool, rows: int) -> ComplexParts:
        """DFT of the leading dim: [n, *rest] -> [rows, *rest]."""
        if self._direct(n):
            return x.times_matrix(0, dft_matrix(n, inverse)[:, :rows], self.real_elem, lead=True)
        n1 = _split_factor(n)
        n2 = n // n1
        # Input index j = j1 * n2 + j2, output index k = k1 + n1 * k2.
        rest = x.shape[1:]
        x = x.map(lambda v: sh.reshape(v, [n1, n2, *rest]))
        x = self.leading_c2c(x, n1, inverse, n1)  # [k1, j2, *rest]
        x = self.times_twiddles(x, n1, n2, n, inverse, k1_dim=0, j2_dim=1)
        x = x.map(lambda v: sh.transpose(v, [1, 0, *range(2, len(rest) + 2)]))  # [j2, k1, *rest]
        k2_rows = -(-rows // n1)
        x = self.leading_c2c(x, n2, inverse, k2_rows)  # [k2, k1, *rest]
        return _merge_and_keep(x, 0, k2_rows * n1, rows)

    def last_c2c(self, x: ComplexParts, n: int, inverse: bool, rows: int) -> ComplexParts:
        """DFT of the last dim: [*rest, n] -> [*rest, rows]."""
        r = len(x.shape) - 1
        if self._direct(n):
            return x.times_matrix(r, dft_matrix(n, inverse)[:, :rows], self.real_elem)
        n1 = _split_factor(n)
        n2 = n // n1
        rest = x.shape[:-1]
        x = x.map(lambda v: sh.reshape(v, [*rest, n1, n2]))
        x = x.times_matrix(r, dft_matrix(n1, inverse), self.real_elem)  # [*rest, j2, k1]
        x = self.times_twiddles(x, n1, n2, n, inverse, k1_dim=r + 1, j2_dim=r)
        swap = [*range(r), r + 1, r]
        x = x.map(lambda v: sh.transpose(v, swap))  # [*rest, k1, j2]
        k2_rows = -(-rows // n1)
        x = self.last_c2c(x, n2, inverse, k2_rows)  # [*rest, k1, k2]
        x = x.map(lambda v: sh.transpose(v, swap))  # [*rest, k2, k1]
        full, partial = divmod(rows, n1)
        if not partial:
            return _merge_and_keep(x, r, rows, rows)
        # k = k2 * n1 + k1 < rows: the first `full` rows of k2 whole, then the first
        # `partial` of the next, joined by a concatenation (a slice of the merged
        # last dim would be a strided view, which the products after it read badly).
        head = _merge_and_keep(x.map(lambda v: sh.slice_along(v, r, 0, full)), r, full * n1, full * n1)
        tail = x.map(lambda v: sh.slice_along(sh.slice_along(v, r, full, full + 1), r + 1, 0, partial))
        tail = tail.map(lambda v: sh.reshape(v, [*rest, partial]))
        def joined(h: ir.Value | None, t: ir.Value | None) -> ir.Value | None:
            return None if h is None else sh.concatenate([h, t], r)

        return ComplexParts(joined(head.re, tail.re), joined(head.im, tail.im))

    def times_twiddles(
        self, x: ComplexParts, n1: int, n2: int, n: int, inverse: bool, k1_dim: int, j2_dim: int
    ) -> ComplexParts:
        """x times exp(-+2 pi i k1 j2 / n) over its dims k1 (n1) and j2 (n2).

        A table of more than ``TWIDDLE_TABLE`` entries (8 MB of constants for
        n = 2^20, which LLVM took ~0.4 s to compile) is the product of two
        smaller ones: with k1 = a * m + b, w^(k1 j2) = w^(m a j2) * w^(b j2).
        """
        def signed(roots: np.ndarray) -> np.ndarray:
            return roots if inverse else np.conj(roots)

        m = _split_factor(n1) if n1 * n2 > self.TWIDDLE_TABLE else 1
        if m == 1:
            return _times_table(x, signed(roots_of_unity(n1, n2, n)), k1_dim, j2_dim, self.real_elem)
        shape = x.shape
        split = [*shape[:k1_dim], n1 // m, m, *shape[k1_dim + 1 :]]
        j2_split = j2_dim + (j2_dim > k1_dim)
        x = x.map(lambda v: sh.reshape(v, split))
        coarse = signed(roots_of_unity(n1 // m, n2, n, row_step=m))  # [a, j2]
        fine = signed(roots_of_unity(m, n2, n))  # [b, j2]
        x = _times_table(x, coarse, k1_dim, j2_split, self.real_elem)
        x = _times_table(x, fine, k1_dim + 1, j2_split, self.real_elem)
        return x.map(lambda v: sh.reshape(v, shape))

    def rfft(self, layout: Layout, axis: int, n: int) -> None:
        """Real input: the n//2+1 non-redundant outputs.

        A split even length is a complex transform of half the length: the even
        and odd samples as real and imaginary parts, untangled afterwards
        (half the products of transforming the real input as complex).
        """
        if n % 2 or self._direct(n):
            self.c2c(layout, axis, n, inverse=False, rows=n // 2 + 1)
            return
        even, odd = _deinterleave(layout.parts.re, layout.position(axis), n // 2)
        layout.parts = ComplexParts(even, odd)
        self.c2c(layout, axis, n // 2, inverse=False)
        layout.parts = _untangle_spectrum(layout.parts, layout.position(axis), n, self.real_elem)

    def irfft(self, layout: Layout, axis: int, n: int) -> None:
        """n real outputs (in ``parts.re``) from the n//2+1 leading terms of a Hermitian spectrum.

        A split even length is the inverse of ``rfft``'s: a complex inverse
        transform of half the length, whose real and imaginary parts are the
        even and odd outputs.
        """
        if n % 2 == 0 and not self._direct(n):
            layout.parts = _tangle_spectrum(layout.parts, layout.position(axis), n, self.real_elem)
            self.c2c(layout, axis, n // 2, inverse=True)
            layout.parts = ComplexParts(_interleave(layout.parts, layout.position(axis)), None)
            return
        strategy = self._strategy(layout, axis, n)
        if strategy == "leading":
            layout.move_to_front(axis)
        position = layout.position(axis)
        x = layout.parts
        if self._direct(n):
            cos_part, sin_part = irfft_matrices(n)
            lead = strategy == "leading"
            re = sh.add(
                _times(x.re, position, _matrix(cos_part, lead, self.real_elem), lead),
                _times(x.im, position, _matrix(sin_part, lead, self.real_elem), lead),
            )
            layout.parts = ComplexParts(re, None)
            if not lead:
                layout.moved_last(axis)
            return
        full = _hermitian_spectrum(x, position, n, self.real_elem)
        split = self.leading_c2c if strategy == "leading" else self.last_c2c
        layout.parts = ComplexParts(split(full, n, True, n).re, None)


def _half(v: ir.Value) -> ir.Value:
    return sh.multiply(v, sh.constant(0.5, v.type))


def _times_half_turn_roots(x: ComplexParts, position: int, n: int, real_elem: ir.Type,
                           conjugate: bool = False) -> ComplexParts:
    """x times exp(-2 pi i k / n) (its conjugate if ``conjugate``) along dim ``position``,
    k = 0 .. n/2. Past ``AxisTransforms.TWIDDLE_TABLE`` entries (4 MB of constants for
    n = 2^20, which LLVM took ~0.4 s to compile) the first n/2 are the product of two
    smaller tables over [n/2 / m, m] (k = a * m + b), and the last, -1, is a negation."""
    h = n // 2

    def roots(count: int, step: int = 1) -> np.ndarray:  # w^(step k), k < count
        table = roots_of_unity(2, count, n, row_step=step)[1]
        return table if conjugate else np.conj(table)

    m = _split_factor(h)
    if h + 1 <= AxisTransforms.TWIDDLE_TABLE or m == 1:
        return x.times_elementwise(roots(h + 1), [position], real_elem)
    shape = x.shape
    body = x.map(lambda v: sh.reshape(sh.slice_along(v, position, 0, h), [*shape[:position], h // m, m,
                                                                        *shape[position + 1:]]))
    body = body.times_elementwise(roots(h // m, m), [position], real_elem)  # w^(a m)
    body = body.times_elementwise(roots(m), [position + 1], real_elem)  # w^b
    body = body.map(lambda v: sh.reshape(v, [*shape[:position], h, *shape[position + 1:]]))
    last = x.map(lambda v: sh.unary("negate", sh.slice_along(v, position, h, h + 1)))  # w^h = -1
    return ComplexParts(*(sh.concatenate([a, b], position) for a, b in ((body.re, last.re), (body.im, last.im))))


def _deinterleave(x: ir.Value, position: int, h: int) -> tuple[ir.Value, ir.Value]:
    """The even and odd elements of dim ``position`` (2h long)."""
    shape = list(sh.shape_of(x))
    pairs = sh.reshape(x, [*shape[:position], h, 2, *shape[position + 1 :]])
    halved = [*shape[:position], h, *shape[position + 1 :]]
    return tuple(sh.reshape(sh.slice_along(pairs, position + 1, k, k + 1), halved) for k in (0, 1))


def _interleave(z: ComplexParts, position: int) -> ir.Value:
    """Real parts at the even, imaginary parts at the odd places of dim ``position``."""
    shape = z.shape
    column = [*shape[: position + 1], 1, *shape[position + 1 :]]
    pairs = sh.concatenate([sh.reshape(z.re, column), sh.reshape(z.im, column)], position + 1)
    return sh.reshape(pairs, [*shape[:position], 2 * shape[position], *shape[position + 1 :]])


def _untangle_spectrum(z: ComplexParts, position: int, n: int, real_elem: ir.Type) -> ComplexParts:
    """X[k], k <= n/2, of a real x from Z = the n/2-point DFT of x[2m] + i x[2m+1]:
    X[k] = E[k] + w^k O[k] with E = (Z[k] + conj Z[-k]) / 2, O = (Z[k] - conj Z[-k]) / 2i."""
    a = z.map(lambda v: sh.concatenate([v, sh.slice_along(v, position, 0, 1)], position))  # Z[k mod h]
    b = a.map(lambda v: sh.reverse(v, [position]))  # Z[-k mod h]
    even = ComplexParts(_half(sh.add(a.re, b.re)), _half(sh.subtract(a.im, b.im)))
    odd = ComplexParts(_half(sh.add(a.im, b.im)), _half(sh.subtract(b.re, a.re)))
    odd = _times_half_turn_roots(odd, position, n, real_elem)
    return ComplexParts(sh.add(even.re, odd.re), sh.add(even.im, odd.im))


def _tangle_spectrum(x: ComplexParts, position: int, n: int, real_elem: ir.Type) -> ComplexParts:
    """Z[k], k < n/2, whose inverse n/2-point DFT holds the even samples of the real
    inverse of X (k <= n/2) as real parts and the odd ones as imaginary parts:
    Z = E + i O with E = (X[k] + conj X[h-k]) / 2, O = (X[k] - conj X[h-k]) / 2 * w^-k.
    The imaginary parts of X[0] and X[h] are ignored, as numpy and XLA do."""
    h = n // 2
    keep = np.ones(h + 1)
    keep[0] = keep[h] = 0.0
    im = sh.multiply(x.im, sh.broadcast_in_dim(_real_constant(keep, real_elem), x.shape, [position]))
    b = ComplexParts(sh.reverse(x.re, [position]), sh.reverse(im, [position]))
    even = ComplexParts(_half(sh.add(x.re, b.re)), _half(sh.subtract(im, b.im)))
    odd = ComplexParts(_half(sh.subtract(x.re, b.re)), _half(sh.add(im, b.im)))
    odd = _times_half_turn_roots(odd, position, n, real_elem, conjugate=True)
    z = ComplexParts(sh.subtract(even.re, odd.im), sh.add(even.im, odd.re))
    return z.map(lambda v: sh.slice_along(v, position, 0, h))


def _times_table(x: ComplexParts, table: np.ndarray, row_dim: int, col_dim: int, real_elem: ir.Type) -> ComplexParts:
    """x times a complex constant indexed [row, col], broadcast along x's other dims."""
    if row_dim < col_dim:
        return x.times_elementwise(table, [row_dim, col_dim], real_elem)
    return x.times_elementwise(table.T, [col_dim, row_dim], real_elem)


def _merge_and_keep(x: ComplexParts, position: int, size: int, rows: int) -> ComplexParts:
    """Merge dims ``position`` and ``position + 1`` (size elements) and keep the first ``rows``."""
    shape = x.shape
    merged = [*shape[:position], size, *shape[position + 2 :]]
    x = x.map(lambda v: sh.reshape(v, merged))
    if size > rows:
        x = x.map(lambda v: sh.slice_along(v, position, 0, rows))
    return x


def _hermitian_spectrum(x: ComplexParts, position: int, n: int, real_elem: ir.Type) -> ComplexParts:
    """All n terms along ``position`` from its n//2+1 leading ones: X[k] = conj(X[n - k]).

    The imaginary parts of the DC (and, for even n, the Nyquist) term are
    ignored, as numpy and XLA do.
    """
    m = n // 2 + 1
    keep_imag = np.ones(m)
    keep_imag[0] = 0.0
    if n % 2 == 0:
        keep_imag[m - 1] = 0.0
    keep = sh.broadcast_in_dim(_real_constant(keep_imag, real_elem), x.shape, [position])
    im = sh.multiply(x.im, keep)
    mirror_re = sh.reverse(sh.slice_along(x.re, position, 1, n - m + 1), [position])
    mirror_im = sh.unary("negate", sh.reverse(sh.slice_along(x.im, position, 1, n - m + 1), [position]))
    return ComplexParts(
        sh.concatenate([x.re, mirror_re], position), sh.concatenate([im, mirror_im], position)
    )


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


def _source_and_dims(x: ir.Value) -> tuple[ir.Value, list[int]]:
    """x, or the operand of the ``stablehlo.transpose`` that made x, and which dim
    of x each of its dims is: JAX's transforms of other axes than the last come
    as transpose, fft, transpose, and the transposes of complex data run as
    scalar loops. A ``Layout`` starts from the untransposed data instead."""
    transpose = defining_op(x, "stablehlo.transpose")
    if transpose is not None:
        permutation = list(ir.DenseI64ArrayAttr(transpose.attributes["permutation"]))
        return transpose.operands[0], [permutation.index(q) for q in range(len(permutation))]
    return x, list(range(len(sh.shape_of(x))))


def _complex_parts(x: ir.Value) -> ComplexParts:
    """x's real and imaginary parts (the operands of the ``stablehlo.complex`` that
    made x: another transform's result)."""
    complex_op = defining_op(x, "stablehlo.complex")
    if complex_op is not None:
        return ComplexParts(complex_op.operands[0], complex_op.operands[1])
    return ComplexParts(sh.real(x), sh.imag(x))


def _transposing_user(op: ir.Operation) -> ir.Operation | None:
    """The result's one user when that is a ``stablehlo.transpose`` (the transform then
    ends in the user's order), unless only FFTs read that transpose: each of them
    starts from the untransposed data instead, at no cost."""
    uses = list(op.results[0].uses)
    if len(uses) != 1 or uses[0].owner.name != "stablehlo.transpose":
        return None
    user = uses[0].owner
    readers = [use.owner.name for use in user.results[0].uses]
    return None if readers and all(name == "stablehlo.fft" for name in readers) else user


def _lower(op: ir.Operation, kind: str, lengths: list[int], direct_limit: int, order: list[int] | None) -> ir.Value:
    """The replacement value of one stablehlo.fft (its dims in ``order``: a user's
    transpose folded in), built at the current insertion point."""
    x, dims = _source_and_dims(op.operands[0])
    result_type = ir.RankedTensorType(op.results[0].type)
    if 0 in sh.shape_of(x) or 0 in result_type.shape:
        shape = [result_type.shape[d] for d in order] if order else result_type.shape
        return sh.constant(0, ir.RankedTensorType.get(shape, result_type.element_type))
    elem = result_type.element_type if kind != "RFFT" else sh.element_type(x)
    real_elem = ir.ComplexType(elem).element_type if isinstance(elem, ir.ComplexType) else elem
    rank, count = len(dims), len(lengths)
    axes = AxisTransforms(real_elem, direct_limit, one_axis=count == 1)
    first = rank - count  # the outermost transformed axis

    # Outer axes first: each in-place product moves its axis last, so a run of
    # them rotates the axes back into their order; ``restore`` does the rest.
    outer = list(range(first, rank - 1))
    if kind == "RFFT":
        layout = Layout(ComplexParts(x, None), dims)
        axes.rfft(layout, rank - 1, lengths[-1])
    else:
        layout = Layout(_complex_parts(x), dims)
    c2c_axes = outer + [rank - 1] if kind in ("FFT", "IFFT") else outer
    for axis in c2c_axes:
        axes.c2c(layout, axis, lengths[axis - first], inverse=kind in ("IFFT", "IRFFT"))
    if kind == "IRFFT":
        axes.irfft(layout, rank - 1, lengths[-1])
        return layout.restore(order).re
    parts = layout.restore(order)
    return sh.complex_from_parts(parts.re, parts.im)


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
            user = _transposing_user(op)
            order = list(ir.DenseI64ArrayAttr(user.attributes["permutation"])) if user else None
            producer = defining_op(op.operands[0], "stablehlo.transpose")
            with ir.InsertionPoint(op), op.location:
                result = _lower(op, kind, lengths, self.direct_limit, order)
            (user or op).results[0].replace_all_uses_with(result)
            if user:
                user.erase()
            op.erase()
            if producer is not None and not list(producer.results[0].uses):
                producer.erase()  # the operand's transpose, folded in and now unused

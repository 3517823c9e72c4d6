"""xhlo-legalize-complex-ops: complex ops the upstream linalg lowering crashes on, gets wrong or lacks.

* ``bitcast_convert`` between complex types: the pinned wheel's lowering
  dereferences null on it, even when the two types are equal (which is how JAX
  exports ``lax.bitcast_convert_type`` of a complex array to its own type).
  The spec allows complex to complex only, so there are two cases. The same
  element type is the identity. ``complex<f64>`` <-> ``complex<f32>`` (a minor
  dimension of 2 appears or goes): the 128 bits of one ``complex<f64>`` are its
  real part's 64 bits, then its imaginary part's, and the same bytes read as
  two ``complex<f32>`` are (low, high) half of the real part, then of the
  imaginary part. So each real part bitcasts between f64 and ``2 x f32``
  (which upstream lowers), and the halves trade places as a 2x2 transpose of
  (part, half).
* ``maximum``/``minimum``: the spec orders complex numbers lexicographically
  by (real, imaginary); upstream's lowering takes the first operand whenever
  the real parts are equal, whatever the imaginary parts. The rewrite compares
  the parts itself (JAX's ``lax.max`` emits the same comparisons).
* ``cbrt``: upstream has no complex lowering; the principal cube root is
  ``exp(log(z) / 3)`` (the logarithm's parts divided by 3 one by one, so
  0 stays finite), as the reference interpreter computes it.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops


def _regroup(pair: tuple[ir.Value, ir.Value]) -> tuple[ir.Value, ...]:
    """(a, b) with minor dimension 2 -> ([a0, b0], [a1, b1]): the 2x2 (part, half) transpose."""
    minor = len(sh.shape_of(pair[0])) - 1
    return tuple(sh.concatenate([sh.slice_along(v, minor, i, i + 1) for v in pair], minor) for i in (0, 1))


def _width_changing(x: ir.Value, to: ir.Type) -> ir.Value:
    """``complex<f64>`` <-> ``[..., 2] x complex<f32>``: real parts bitcast, halves regrouped."""
    parts = (sh.real(x), sh.imag(x))
    if ir.ComplexType(sh.element_type(x)).element_type.width > to.width:  # each part -> (low, high)
        return sh.complex_from_parts(*_regroup(tuple(sh.bitcast_convert(p, to) for p in parts)))
    return sh.complex_from_parts(*(sh.bitcast_convert(bits, to) for bits in _regroup(parts)))


def _bitcast(op: ir.Operation) -> ir.Value:
    source, result = op.operands[0], op.results[0]
    if source.type == result.type:
        return source
    return _width_changing(source, ir.ComplexType(sh.element_type(result)).element_type)


def _lexicographic(op: ir.Operation) -> ir.Value:
    """``a`` where (re a, im a) is the larger (maximum) or smaller (minimum) pair, else ``b``."""
    a, b = op.operands
    strict, tie = ("GT", "GE") if op.name == "stablehlo.maximum" else ("LT", "LE")
    re_a, re_b = sh.real(a), sh.real(b)
    by_real = sh.compare(strict, re_a, re_b)
    by_imag = sh.and_(sh.compare("EQ", re_a, re_b), sh.compare(tie, sh.imag(a), sh.imag(b)))
    return sh.select(sh.or_(by_real, by_imag), a, b)


def _cbrt(op: ir.Operation) -> ir.Value:
    log = sh.unary("log", op.operands[0])
    # the parts divided one by one: a complex product with 1/3 + 0i makes log(0) = -inf + 0i NaN
    re, im = sh.real(log), sh.imag(log)
    third = sh.constant(1.0 / 3.0, re.type)
    return sh.unary("exponential", sh.complex_from_parts(sh.multiply(re, third), sh.multiply(im, third)))


_REWRITES = {
    "stablehlo.bitcast_convert": _bitcast,
    "stablehlo.maximum": _lexicographic,
    "stablehlo.minimum": _lexicographic,
    "stablehlo.cbrt": _cbrt,
}


@dataclasses.dataclass(frozen=True)
class LegalizeComplexOps(ModulePass):
    """Rewrite complex bitcast_convert, maximum, minimum and cbrt into ops upstream lowers correctly."""

    NAME = "xhlo-legalize-complex-ops"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, tuple(_REWRITES)):
            if not isinstance(sh.element_type(op.operands[0]), ir.ComplexType):
                continue
            with ir.InsertionPoint(op), op.location:
                replacement = _REWRITES[op.name](op)
            op.results[0].replace_all_uses_with(replacement)
            op.erase()

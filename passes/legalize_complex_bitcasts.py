"""xhlo-legalize-complex-bitcasts: ``bitcast_convert`` between complex types on real parts.

The upstream linalg lowering crashes (a null dereference in the pinned wheel)
on a ``bitcast_convert`` whose operand and result are complex, even when the
two types are equal, which is how JAX exports ``lax.bitcast_convert_type`` of a
complex array to its own type. The spec allows complex to complex only
(real <-> complex is rejected by the verifier), so there are two cases:

* the same element type: the op is the identity;
* ``complex<f64>`` <-> ``complex<f32>`` (a minor dimension of 2 appears or
  goes): the 128 bits of one ``complex<f64>`` are its real part's 64 bits, then
  its imaginary part's, and the same bytes read as two ``complex<f32>`` are
  (low, high) half of the real part, then of the imaginary part. So each real
  part bitcasts between f64 and ``2 x f32`` (which upstream lowers), and the
  halves trade places as a 2x2 transpose of (part, half).
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, walk_ops


def _halves(x: ir.Value, index: int) -> ir.Value:
    """``x[..., index]`` of a tensor whose minor dimension is 2, keeping that dimension (size 1)."""
    shape = sh.shape_of(x)
    start = [0] * len(shape)
    start[-1] = index
    return sh.slice(x, start, [*shape[:-1], index + 1])


def _cast_part(part: ir.Value, to: ir.Type) -> ir.Value:
    """Bitcast a real tensor to float type ``to`` of half or twice its width."""
    shape = sh.shape_of(part)
    narrowing = ir.FloatType(sh.element_type(part)).width > ir.FloatType(to).width
    result_shape = [*shape, 2] if narrowing else shape[:-1]
    return sh.create("stablehlo.bitcast_convert", [part], [sh.tensor_type(result_shape, to)]).result


def _width_changing(x: ir.Value, to: ir.Type) -> ir.Value:
    """``complex<f64>`` <-> ``[..., 2] x complex<f32>``, the 2x2 (part, half) transpose."""
    parts = (sh.real(x), sh.imag(x))
    if ir.FloatType(ir.ComplexType(sh.element_type(x)).element_type).width == 64:  # narrowing
        halves = [_cast_part(p, to) for p in parts]  # [..., 2] each: (low, high)
        re = sh.concatenate([_halves(h, 0) for h in halves], len(sh.shape_of(x)))
        im = sh.concatenate([_halves(h, 1) for h in halves], len(sh.shape_of(x)))
        return sh.complex_from_parts(re, im)
    minor = len(sh.shape_of(x)) - 1
    re_bits, im_bits = (sh.concatenate([_halves(p, i) for p in parts], minor) for i in (0, 1))
    return sh.complex_from_parts(_cast_part(re_bits, to), _cast_part(im_bits, to))


@dataclasses.dataclass(frozen=True)
class LegalizeComplexBitcasts(ModulePass):
    """Rewrite complex-to-complex stablehlo.bitcast_convert into real-part ops."""

    NAME = "xhlo-legalize-complex-bitcasts"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.bitcast_convert"):
            source, result = op.operands[0], op.results[0]
            if not isinstance(sh.element_type(source), ir.ComplexType):
                continue
            if source.type == result.type:
                replacement = source
            else:
                with ir.InsertionPoint(op), op.location:
                    part = ir.ComplexType(sh.element_type(result)).element_type
                    replacement = _width_changing(source, part)
            result.replace_all_uses_with(replacement)
            op.erase()

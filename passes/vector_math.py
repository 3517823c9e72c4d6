"""xhlo-vector-math: f32 ``math.exp``/``tanh``/``log``/``log1p``/``expm1``/``atan``/``atan2``/``sin``/``cos``/``tan``
on vectors as polynomials.

LLVM has no vector exp, tanh or log: ``llvm.exp.v16f32`` becomes sixteen calls
of libm's ``expf``, which leaves a vectorized softmax or GELU as slow as scalar
code, and its vector ``log1p``/``expm1`` lose all precision near 0 (so
xhlo-vectorize vectorizes those only in f32, for this pass). This pass expands
the f32 vector forms into arithmetic that stays in SIMD registers (scalars and
f64 keep libm):

* ``exp(x)``: ``x = k ln2 + r`` with ``k = round(x log2 e)`` and ``|r| <= ln2/2``
  (``ln2`` split in two for an exact reduction, fused multiply-adds), then
  ``e^r = 1 + r + r^2 q(r)`` with a degree-4 ``q`` fitted for relative error
  (below 4e-9 on the interval, well under f32's 6e-8 half-ulp) and ``2^k``
  built from exponent bits in two factors, so results down in the subnormal
  range and up to ``FLT_MAX`` come out right. ``x`` is clamped to
  [-104, 89] first (``exp`` is 0 and infinity beyond) and NaN passes through.
* ``tanh(x)``: ``e / (e + 2)`` with ``e = expm1(2|x|)`` and the sign of ``x``:
  one division and one exponential (``2^k (1 + p) - 1`` with ``p = expm1(r)``
  from a degree-4 polynomial fitted for relative error, 1.7e-8, so small ``x``
  keep their precision); ``|x|`` is clamped at 9.01, from where tanh is exactly
  ±1 in f32. The old form, a polynomial below 1 and ``1 - 2 / (exp(2|x|) + 1)``
  above, selected per lane and so computed both: half again the arithmetic,
  and GELU is bound by it (4M floats: 2.25 -> 1.33 ms).
* ``log(x)``: ``e ln2 + log(1 + f)`` with ``f = m - 1`` for the mantissa ``m`` in
  [sqrt(1/2), sqrt(2)) (exact), Cephes' degree-8 polynomial; ``log1p(x)`` is
  ``log(u) (x / (u - 1))`` with ``u = 1 + x``, which cancels ``u``'s rounding;
  ``expm1(x)`` is tanh's ``2^k (1 + p) - 1`` over [-18, 17], ``exp(x)`` above
  (softplus, 4M floats: 52 -> 1.8 ms).
* ``atan2(y, x)``: ``r = atan(t)`` of ``t = min(|x|, |y|) / max(|x|, |y|)`` in
  [0, 1] (Cephes' atanf: a degree-4 polynomial, on ``(t - 1) / (t + 1)`` plus
  pi/4 above tan(pi/8)), placed in its octant in one step (``r``, ``pi/2 - r``,
  ``pi - r`` or ``pi/2 + r``, each constant as an f32 part plus the rest) with
  the sign of ``y``; signed zeros, infinities and NaN as IEEE says. ``atan(x)``
  is ``atan(1/|x|)`` reflected above 1 (1M atan2: 23.7 -> 1.3 ms, XLA 12.7).
* ``sin(x)``/``cos(x)``: ``|x| = j pi/4 + z`` with ``j`` even (the reduction in
  f64, pi/4 in two parts, so ``z`` is right to f32's relative precision even
  where the result is near 0), Cephes' sin or cos polynomial on ``z`` by the
  octant, and the sign. A vector with a lane beyond 8192 (or inf, NaN) calls
  libm for all its lanes instead, behind an ``scf.if`` (2M sin: 6 -> 1.2 ms).
  ``tan(x)`` is their quotient from the one reduction.

Measured against float64 (``tests/test_vector_math.py``: a sweep of every f32
binade, and a dense one of each op's interesting interval): exp and log stay
below one ulp, expm1 and sin/cos below 1.6, log1p below 2.4, atan2 below 2.6, tan below 3.6 (atan2 83% correctly
rounded; XLA's is off by millions of ulp where |y/x| is tiny or huge), tanh below 2.5 ulp (the
rounding of ``e + 2`` and of the division, largest for small ``|x|``; 86%
correctly rounded). XLA:CPU's tanh, on the same inputs: 4.7 ulp,
37% correctly rounded.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import arith, ir

from .base import ModulePass, walk_ops

# Coefficients fitted for this pass (weighted least squares on Chebyshev nodes, float64).
EXP_Q = (0.49999988079071045, 0.166665181517601, 0.04166953265666962, 0.008368918672204018, 0.00137514085508883)
EXPM1_Q = (0.4999999701976776, 0.1666654348373413, 0.04166720062494278, 0.00836651399731636, 0.0013882522471249104)
TANH_SATURATES = 9.01  # tanh is exactly 1 in f32 from here on
LOG2E = 1.4426950408889634
LN2_HI = 0.693145751953125  # ln 2 with its low 12 mantissa bits zero: k * LN2_HI is exact
LN2_LO = 1.4286068203094173e-06
EXP_MIN, EXP_MAX = -104.0, 89.0
# log(1 + f) = f - f^2/2 + f^3 P(f) for f in [sqrt(1/2) - 1, sqrt(2) - 1]: Cephes' logf
# coefficients (S. Moshier), P's highest degree first.
LOG_P = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
         -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
LN2_LOG_HI, LN2_LOG_LO = 0.693359375, -2.12194440e-4  # ln 2 = HI + LO, HI exact in 9 bits
SQRT_HALF = 0.70710678118654752
FLT_MIN = 1.17549435e-38
EXPM1_MIN, EXPM1_MAX = -18.0, 17.0  # expm1 is -1 below (in f32), exp(x) above
SHIFTER = 8388735.0  # 2^23 + 127: adding it to an integer-valued float puts k + 127 in the low bits
# atan(u) = u + u z P(z), z = u^2, |u| <= tan(pi/8): Cephes' atanf coefficients, lowest degree first.
ATAN_P = (-3.33329491539e-1, 1.99777106478e-1, -1.38776856032e-1, 8.05374449538e-2)
TAN_PI_8 = 0.4142135623730950
# pi, pi/2, pi/4 as an f32 part and the rest: c - r computed as (hi - r) + lo keeps the
# constant's own rounding (up to half an ulp of c) out of the result.
# sin/cos: Cephes' sinf/cosf polynomials (S. Moshier) on |x| = j pi/4 + z, j even; the
# reduction runs in f64 with pi/4 in two parts, so z keeps f32's relative precision
# even where sin or cos is near 0 (in f32 it kept only an absolute one: 16 ulp there).
SINCOS_LIMIT = 8192.0  # beyond (and for inf/NaN) the vector calls libm for all its lanes
FOUR_OVER_PI = 1.2732395447351628
PI_4_F64 = (0.7853981633974483, 3.061616997868383e-17)
SIN_P = (-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4)  # sin z = z + z^3 P(z^2)
COS_P = (4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5)  # cos z = 1 - z^2/2 + z^4 P
PI = (3.1415927410125732, -8.742278012618954e-08)
PI_2 = (1.5707963705062866, -4.371139006309477e-08)
PI_4 = (0.7853981852531433, -2.1855695031547384e-08)


class _Builder:
    """Arith/math ops on one vector type."""

    def __init__(self, vtype: ir.Type):
        self.type = vtype
        shape = ir.VectorType(vtype).shape
        self.int_type = ir.VectorType.get(shape, ir.IntegerType.get_signless(32))
        self.bool_type = ir.VectorType.get(shape, ir.IntegerType.get_signless(1))

    def const(self, value: float) -> ir.Value:
        f32 = ir.F32Type.get()
        return arith.constant(self.type, ir.DenseElementsAttr.get_splat(self.type, ir.FloatAttr.get(f32, value)))

    def int_const(self, value: int) -> ir.Value:
        i32 = ir.IntegerType.get_signless(32)
        return arith.constant(self.int_type, ir.DenseElementsAttr.get_splat(self.int_type, ir.IntegerAttr.get(i32, value)))

    def op(self, name: str, *operands: ir.Value, result: ir.Type | None = None) -> ir.Value:
        return ir.Operation.create(name, results=[result or self.type], operands=list(operands)).result

    def add(self, a, b):
        return self.op("arith.addf", a, b)

    def sub(self, a, b):
        return self.op("arith.subf", a, b)

    def mul(self, a, b):
        return self.op("arith.mulf", a, b)

    def div(self, a, b):
        return self.op("arith.divf", a, b)

    def fma(self, a, b, c):
        return self.op("math.fma", a, b, c)

    def cmp(self, predicate, a, b):
        return arith.cmpf(predicate, a, b)

    def select(self, cond, a, b):
        return arith.select(cond, a, b)

    def horner(self, z: ir.Value, coefficients) -> ir.Value:
        acc = self.const(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = self.fma(acc, z, self.const(c))
        return acc

    def reduce_ln2(self, t: ir.Value) -> tuple[ir.Value, ir.Value]:
        """``(k, r)`` with ``t = k ln2 + r``, ``k = round(t log2 e)``, ``|r| <= ln2/2``
        (``ln2`` in two parts: the reduction is exact)."""
        k = self.op("math.roundeven", self.mul(t, self.const(LOG2E)))
        r = self.fma(k, self.const(-LN2_HI), t)
        return k, self.fma(k, self.const(-LN2_LO), r)

    def expm1_reduced(self, r: ir.Value, coefficients) -> ir.Value:
        """``e^r - 1 = r + r^2 q(r)`` for a reduced ``r``."""
        return self.fma(self.mul(r, r), self.horner(r, coefficients), r)

    def pow2(self, k: ir.Value) -> ir.Value:
        """2^k for integer-valued ``k`` in [-126, 127], from exponent bits."""
        shifted = self.add(k, self.const(SHIFTER))
        bits = self.op("arith.bitcast", shifted, result=self.int_type)
        exponent = self.op("arith.shli", bits, self.int_const(23), result=self.int_type)
        return self.op("arith.bitcast", exponent)


def _exp(b: _Builder, x: ir.Value) -> ir.Value:
    clamped = b.op("arith.minimumf", b.op("arith.maximumf", x, b.const(EXP_MIN)), b.const(EXP_MAX))
    k, r = b.reduce_ln2(clamped)
    poly = b.add(b.expm1_reduced(r, EXP_Q), b.const(1.0))  # one rounding near 1
    half = b.op("math.floor", b.mul(k, b.const(0.5)))  # k = half + (k - half), both in range
    scaled = b.mul(b.mul(poly, b.pow2(half)), b.pow2(b.sub(k, half)))
    is_nan = b.cmp(arith.CmpFPredicate.UNO, x, x)
    return b.select(is_nan, x, scaled)


def _expm1_up_to_tanh_saturation(b: _Builder, t: ir.Value) -> ir.Value:
    """``e^t - 1`` for ``t`` in [0, 2 TANH_SATURATES]: ``2^k (1 + p) - 1`` with ``p =
    expm1(r)`` from a polynomial fitted for relative error, so small ``t`` (k = 0) keep full
    precision; no clamping, subnormal or overflow handling is needed in this range."""
    k, r = b.reduce_ln2(t)
    p = b.expm1_reduced(r, EXPM1_Q)
    scale = b.pow2(k)
    return b.fma(scale, p, b.sub(scale, b.const(1.0)))


def _tanh(b: _Builder, x: ir.Value) -> ir.Value:
    magnitude = b.op("arith.minimumf", b.op("math.absf", x), b.const(TANH_SATURATES))  # NaN stays
    e = _expm1_up_to_tanh_saturation(b, b.add(magnitude, magnitude))
    ratio = b.div(e, b.add(e, b.const(2.0)))
    saturated = b.cmp(arith.CmpFPredicate.OGE, magnitude, b.const(TANH_SATURATES))
    value = b.select(saturated, b.const(1.0), ratio)  # e + 2 rounds up there: 1 - 2^-24
    return b.op("math.copysign", value, x)  # odd, and tanh(-0) = -0


def _log(b: _Builder, x: ir.Value) -> ir.Value:
    """``x = m 2^e`` with ``m`` in [sqrt(1/2), sqrt(2)): ``e ln2 + log(1 + f)``, ``f = m - 1``
    exact; subnormals are scaled by 2^23 first. Negative x and NaN give NaN, 0 gives -inf,
    +inf gives +inf."""
    tiny = b.cmp(arith.CmpFPredicate.OLT, x, b.const(FLT_MIN))
    scaled = b.select(tiny, b.mul(x, b.const(8388608.0)), x)
    bits = b.op("arith.bitcast", scaled, result=b.int_type)
    biased = b.op("arith.shrui", bits, b.int_const(23), result=b.int_type)
    exponent = b.op("arith.sitofp", b.op("arith.subi", biased, b.int_const(126), result=b.int_type))
    exponent = b.select(tiny, b.sub(exponent, b.const(23.0)), exponent)
    mantissa_bits = b.op("arith.ori", b.op("arith.andi", bits, b.int_const(0x007FFFFF), result=b.int_type),
                         b.int_const(0x3F000000), result=b.int_type)
    m = b.op("arith.bitcast", mantissa_bits)  # in [0.5, 1)
    low = b.cmp(arith.CmpFPredicate.OLT, m, b.const(SQRT_HALF))
    exponent = b.select(low, b.sub(exponent, b.const(1.0)), exponent)
    f = b.sub(b.select(low, b.add(m, m), m), b.const(1.0))  # exact (Sterbenz)
    z = b.mul(f, f)
    y = b.mul(b.mul(b.horner(f, LOG_P[::-1]), f), z)
    y = b.fma(exponent, b.const(LN2_LOG_LO), y)
    y = b.fma(z, b.const(-0.5), y)
    value = b.fma(exponent, b.const(LN2_LOG_HI), b.add(f, y))
    special = b.cmp(arith.CmpFPredicate.UGE, x, b.const(float("inf")))  # +inf or NaN: itself
    value = b.select(special, x, value)
    value = b.select(b.cmp(arith.CmpFPredicate.OLT, x, b.const(0.0)), b.const(float("nan")), value)
    return b.select(b.cmp(arith.CmpFPredicate.OEQ, x, b.const(0.0)), b.const(float("-inf")), value)


def _log1p(b: _Builder, x: ir.Value) -> ir.Value:
    """``log(u) (x / (u - 1))`` with ``u = 1 + x`` rounded (the division corrects u's
    rounding error, D. Goldberg); ``x`` itself where ``u`` is 1, ``log(u)`` where it is +inf."""
    u = b.add(x, b.const(1.0))
    log_u = _log(b, u)
    corrected = b.mul(log_u, b.div(x, b.sub(u, b.const(1.0))))  # the ratio is near 1: no overflow
    value = b.select(b.cmp(arith.CmpFPredicate.OEQ, u, b.const(float("inf"))), log_u, corrected)
    return b.select(b.cmp(arith.CmpFPredicate.OEQ, u, b.const(1.0)), x, value)


def _expm1(b: _Builder, x: ir.Value) -> ir.Value:
    """``2^k (1 + p) - 1`` (``p = expm1(r)``, as tanh's) on ``x`` clamped to [-18, 17]:
    -1 below in f32; above, ``exp(x)``, which ``- 1`` no longer changes; ``x`` itself
    where ``|x| < 2^-25``."""
    clamped = b.op("arith.minimumf", b.op("arith.maximumf", x, b.const(EXPM1_MIN)), b.const(EXPM1_MAX))
    k, r = b.reduce_ln2(clamped)
    p = b.expm1_reduced(r, EXPM1_Q)
    scale = b.pow2(k)
    small = b.fma(scale, p, b.sub(scale, b.const(1.0)))
    large = b.cmp(arith.CmpFPredicate.OGT, x, b.const(EXPM1_MAX))
    value = b.select(large, _exp(b, x), small)
    tiny = b.cmp(arith.CmpFPredicate.OLT, b.op("math.absf", x), b.const(2.0**-25))
    return b.select(tiny, x, value)  # expm1(x) rounds to x there; keeps -0


def _atan_unit(b: _Builder, t: ir.Value) -> ir.Value:
    """atan(t) for t in [0, 1]: Cephes' atanf (S. Moshier) on ``t``, or on
    ``(t - 1) / (t + 1)`` plus pi/4 above tan(pi/8)."""
    above = b.cmp(arith.CmpFPredicate.OGT, t, b.const(TAN_PI_8))
    u = b.select(above, b.div(b.sub(t, b.const(1.0)), b.add(t, b.const(1.0))), t)
    z = b.mul(u, u)
    y = b.fma(b.mul(b.horner(z, ATAN_P), z), u, u)
    return b.select(above, b.add(b.add(y, b.const(PI_4[1])), b.const(PI_4[0])), y)


def _minus(b: _Builder, constant: tuple[float, float], r: ir.Value) -> ir.Value:
    """``c - r`` for ``c = hi + lo``."""
    return b.add(b.sub(b.const(constant[0]), r), b.const(constant[1]))


def _atan(b: _Builder, x: ir.Value) -> ir.Value:
    """atan(|x|) through atan(1/|x|) = pi/2 - atan(|x|) above 1, with the sign of x."""
    magnitude = b.op("math.absf", x)
    inverted = b.cmp(arith.CmpFPredicate.OGT, magnitude, b.const(1.0))
    t = b.select(inverted, b.div(b.const(1.0), magnitude), magnitude)
    r = _atan_unit(b, t)
    return b.op("math.copysign", b.select(inverted, _minus(b, PI_2, r), r), x)


def _atan2(b: _Builder, y: ir.Value, x: ir.Value) -> ir.Value:
    """r = atan(min/max of |x|, |y|) placed in its octant in one step: r, pi/2 - r
    where |y| > |x|, pi - r where x's sign bit is set (so atan2(0, -0) = pi), pi/2 + r
    where both (two reflections in a row would round twice), then the sign of y.
    Both zero gives a ratio of 0, both infinite of 1 (IEEE's 0 / pi and pi/4 / 3pi/4);
    NaN propagates through the min and max."""
    ax, ay = b.op("math.absf", x), b.op("math.absf", y)
    largest, smallest = b.op("arith.maximumf", ax, ay), b.op("arith.minimumf", ax, ay)
    t = b.div(smallest, largest)
    t = b.select(b.cmp(arith.CmpFPredicate.OEQ, largest, b.const(0.0)), b.const(0.0), t)
    t = b.select(b.cmp(arith.CmpFPredicate.OEQ, smallest, b.const(float("inf"))), b.const(1.0), t)
    r = _atan_unit(b, t)
    steep = b.cmp(arith.CmpFPredicate.OGT, ay, ax)
    x_bits = b.op("arith.bitcast", x, result=b.int_type)
    x_negative = arith.cmpi(arith.CmpIPredicate.slt, x_bits, b.int_const(0))
    base = [b.select(x_negative, b.select(steep, b.const(h), b.const(p)), b.select(steep, b.const(h), b.const(0.0)))
            for h, p in zip(PI_2, PI)]  # (hi, lo) of 0, pi/2 or pi
    minus = arith.xori(steep, x_negative)
    signed = b.select(minus, b.op("arith.negf", r), r)
    return b.op("math.copysign", b.add(b.add(base[0], signed), base[1]), y)


def _sin_cos_in_range(b: _Builder, x: ir.Value, cosine: bool) -> ir.Value:
    """sin or cos of lanes with |x| <= SINCOS_LIMIT: octant, exact reduction, one of the
    two polynomials, sign."""
    ax = b.op("math.absf", x)
    j = b.op("arith.fptosi", b.mul(ax, b.const(FOUR_OVER_PI)), result=b.int_type)
    j = b.op("arith.andi", b.op("arith.addi", j, b.int_const(1), result=b.int_type), b.int_const(-2),
             result=b.int_type)  # the even octant at or above: z lands in [-pi/4, pi/4]
    wide = ir.VectorType.get(ir.VectorType(b.type).shape, ir.F64Type.get())
    y = b.op("arith.sitofp", j, result=wide)
    z = b.op("arith.extf", ax, result=wide)
    for part in PI_4_F64:
        minus_part = arith.constant(wide, ir.DenseElementsAttr.get_splat(wide, ir.FloatAttr.get(ir.F64Type.get(), -part)))
        z = b.op("math.fma", y, minus_part, z, result=wide)
    z = b.op("arith.truncf", z)
    octant = b.op("arith.andi", b.op("arith.addi", j, b.int_const(2 if cosine else 0), result=b.int_type),
                  b.int_const(7), result=b.int_type)
    zz = b.mul(z, z)
    sin_z = b.fma(b.mul(b.horner(zz, SIN_P), zz), z, z)
    cos_z = b.fma(b.mul(b.horner(zz, COS_P), zz), zz, b.fma(zz, b.const(-0.5), b.const(1.0)))
    use_cos = arith.cmpi(arith.CmpIPredicate.ne,
                         b.op("arith.andi", octant, b.int_const(2), result=b.int_type), b.int_const(0))
    value = b.select(use_cos, cos_z, sin_z)
    negate = arith.cmpi(arith.CmpIPredicate.sge, octant, b.int_const(4))
    if not cosine:  # odd: the sign of x too
        x_bits = b.op("arith.bitcast", x, result=b.int_type)
        negate = arith.xori(negate, arith.cmpi(arith.CmpIPredicate.slt, x_bits, b.int_const(0)))
    return b.select(negate, b.op("arith.negf", value), value)


def _in_range_or_libm(b: _Builder, x: ir.Value, name: str, in_range) -> ir.Value:
    """``in_range(x)`` when every lane is within SINCOS_LIMIT, else libm's ``name`` for
    the whole vector (large arguments need a reduction these parts of pi/4 cannot give)."""
    outside = b.cmp(arith.CmpFPredicate.UGT, b.op("math.absf", x), b.const(SINCOS_LIMIT))  # NaN too
    any_outside = ir.Operation.create(
        "vector.reduction", results=[ir.IntegerType.get_signless(1)], operands=[outside],
        attributes={"kind": ir.Attribute.parse("#vector.kind<or>")}).result
    branch = ir.Operation.create("scf.if", results=[b.type], operands=[any_outside], regions=2)
    for region, build in ((branch.regions[0], lambda: b.op(name, x)), (branch.regions[1], lambda: in_range(x))):
        block = region.blocks.append()
        with ir.InsertionPoint(block):
            ir.Operation.create("scf.yield", operands=[build()])
    return branch.result


def _sin(b: _Builder, x: ir.Value) -> ir.Value:
    return _in_range_or_libm(b, x, "math.sin", lambda v: _sin_cos_in_range(b, v, cosine=False))


def _cos(b: _Builder, x: ir.Value) -> ir.Value:
    return _in_range_or_libm(b, x, "math.cos", lambda v: _sin_cos_in_range(b, v, cosine=True))


def _tan(b: _Builder, x: ir.Value) -> ir.Value:
    """sin / cos from the same reduction (each within 1.6 ulp; the quotient within 3)."""
    return _in_range_or_libm(
        b, x, "math.tan", lambda v: b.div(_sin_cos_in_range(b, v, cosine=False), _sin_cos_in_range(b, v, cosine=True)))


_EXPANSIONS = {"math.exp": _exp, "math.sin": _sin, "math.cos": _cos, "math.tan": _tan, "math.tanh": _tanh, "math.log": _log, "math.log1p": _log1p, "math.expm1": _expm1,
               "math.atan": _atan, "math.atan2": _atan2}
# The vector forms of these are only right through this pass: xhlo-vectorize vectorizes them in f32.
EXPANDED_ONLY_HERE = frozenset({"math.log1p", "math.expm1"})


def _is_f32_vector(t: ir.Type) -> bool:
    return isinstance(t, ir.VectorType) and isinstance(ir.VectorType(t).element_type, ir.F32Type)


@dataclasses.dataclass(frozen=True)
class VectorMath(ModulePass):
    """Expand f32 vector exp/tanh/log/log1p/expm1/atan/atan2/sin/cos/tan into polynomials (scalars keep libm)."""

    NAME = "xhlo-vector-math"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, tuple(_EXPANSIONS)):
            x = op.operands[0]
            if not _is_f32_vector(x.type):
                continue
            with ir.InsertionPoint(op), op.location:
                result = _EXPANSIONS[op.name](_Builder(x.type), *op.operands)
            op.results[0].replace_all_uses_with(result)
            op.erase()

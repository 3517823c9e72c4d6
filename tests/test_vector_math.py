"""xhlo-vector-math: the polynomial exp, tanh, log, log1p and expm1 of f32 vectors,
checked against float64.

Inputs sweep every f32 binade (normal and subnormal, both signs) plus the
edges of the clamping and of the two tanh branches; the error is measured in
units in the last place of the correctly rounded result.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

RNG = np.random.default_rng(1234)


def _sweep() -> np.ndarray:
    binades = [RNG.uniform(1, 2, 64) * 2.0**e for e in range(-149, 128)]
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 88.72283, 88.72284, 89.0, 100.0, -87.33655, -103.97, -104.0,
             -200.0, 9.01, 9.02, 0.55, 0.5499999, 1e-30, 0.6931472, 1.0, 2.0]
    values = np.concatenate(binades + [edges])
    values = np.concatenate([values, -values]).astype(np.float32)
    return np.concatenate([values, np.zeros(-len(values) % 16, np.float32)])


def _ulp_error(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = exact.astype(np.float32)
        spacing = np.spacing(np.abs(rounded)).astype(np.float64)
        error = np.abs(got.astype(np.float64) - exact) / spacing
    same = (got == rounded) | (np.isnan(got) & np.isnan(rounded))
    return np.where(same, 0.0, error)


def unary(op: str, n: int) -> str:
    t = f"tensor<{n}xf32>"
    return f"""func.func @main(%a: {t}) -> {t} {{
  %0 = stablehlo.{op} %a : {t}
  return %0 : {t}
}}"""


# tanh = e / (e + 2) rounds twice after the exponential (passes/vector_math.py); log1p
# rounds log(u), x / (u - 1) and their product
ULP_BOUNDS = {"exponential": 2.0, "tanh": 2.5, "log": 1.0, "log_plus_one": 2.5, "exponential_minus_one": 2.0,
              "sine": 2.0, "cosine": 2.0, "tan": 4.0}
LIBM_NAMES = ("expf", "tanhf", "logf", "log1pf", "expm1f", "llvm.intr.exp", "llvm.intr.log")
DENSE = {
    "tanh": (-9.2, 9.2),  # where tanh is not +-1
    "log": (0.0, 4.0),
    "log_plus_one": (-0.9999, 30.0),
    "exponential_minus_one": (-20.0, 90.0),
    "sine": (-8192.0, 8192.0),  # the polynomial's range (libm beyond)
    "cosine": (-8192.0, 8192.0),
    "tan": (-8192.0, 8192.0),  # sin / cos: two polynomials and a division
}


REFERENCES = {
    "exponential": np.exp, "tanh": np.tanh, "log": np.log, "log_plus_one": np.log1p,
    "exponential_minus_one": np.expm1, "sine": np.sin, "cosine": np.cos, "tan": np.tan,
}
CASES = [(op, False) for op in REFERENCES] + [(op, True) for op in DENSE]


@pytest.mark.parametrize("op,dense", CASES, ids=[f"{op}{'-dense' if dense else ''}" for op, dense in CASES])
def test_within_a_few_ulp_of_float64_everywhere(op, dense):
    """Every binade, or (dense) 2^21 points of the op's interesting interval."""
    reference = REFERENCES[op]
    x = np.linspace(*DENSE[op], 2**21, dtype=np.float32) if dense else _sweep()
    exe = xhlo.compile(unary(op, len(x)))
    llvm = exe.ir("xhlo-lower-to-llvm")
    assert not [name for name in LIBM_NAMES if name in llvm], "the vector form should stay polynomial"
    got = exe(x)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        exact = reference(x.astype(np.float64))
    error = _ulp_error(got, exact)
    worst = int(np.argmax(error))
    assert error.max() <= ULP_BOUNDS[op], f"{op}({x[worst]!r}) = {got[worst]!r}, exact {exact[worst]!r}"


@pytest.mark.parametrize(
    "x,expected",
    [(np.inf, np.inf), (-np.inf, 0.0), (100.0, np.inf), (-200.0, 0.0), (0.0, 1.0), (-0.0, 1.0)],
)
def test_exp_special_values(x, expected):
    got = xhlo.compile(unary("exponential", 16))(np.full(16, x, np.float32))
    np.testing.assert_array_equal(got, np.float32(expected))


def test_exp_nan_and_subnormal_results():
    x = np.array([np.nan, -100.0, -103.0, -88.0] * 4, np.float32)
    got = xhlo.compile(unary("exponential", 16))(x)
    assert np.isnan(got[0])
    expected = np.exp(x[1:4].astype(np.float64)).astype(np.float32)
    assert (expected[:2] < np.finfo(np.float32).tiny).all()  # subnormal results
    np.testing.assert_array_equal(got[1:4], expected)


def test_tanh_signs_and_saturation():
    x = np.array([-0.0, 0.0, 9.5, -9.5, np.inf, -np.inf, np.nan, 1e-40] * 2, np.float32)
    got = xhlo.compile(unary("tanh", 16))(x)
    np.testing.assert_array_equal(np.signbit(got[:2]), [True, False])
    np.testing.assert_array_equal(got[2:6], [1, -1, 1, -1])
    assert np.isnan(got[6])
    assert got[7] == np.float32(1e-40)


@pytest.mark.parametrize(
    "op,reference",
    [("log", np.log), ("log_plus_one", np.log1p), ("exponential_minus_one", np.expm1)],
)
def test_log_and_expm1_special_values(op, reference):
    x = np.array([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan, 1e-40,
                  1e-30, -1e-30, 3e38, 5e36, 88.0, 89.0, -100.0, 1e-8], np.float32)
    got = xhlo.compile(unary(op, 16))(x)
    with np.errstate(all="ignore"):
        want = reference(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    np.testing.assert_allclose(got[finite], want[finite], rtol=3e-7, atol=0)
    np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))


def test_softplus_vectorizes_and_matches_jax():
    jax = pytest.importorskip("jax")
    from jax import export

    x = np.concatenate([np.linspace(-30, 30, 4093), [0.0, -0.0, 1e-30]]).astype(np.float32)
    exe = xhlo.compile(export.export(jax.jit(jax.nn.softplus), platforms=["cpu"])(x))
    assert "vector<16xf32>" in exe.ir("xhlo-fuse-and-vectorize")
    want = np.logaddexp(0.0, x.astype(np.float64))
    np.testing.assert_allclose(exe(x), want, rtol=4e-7, atol=1e-37)


def test_f64_and_scalar_code_keep_libm():
    t = "tensor<32xf64>"
    exe = xhlo.compile(f"""func.func @main(%a: {t}) -> {t} {{
  %0 = stablehlo.exponential %a : {t}
  return %0 : {t}
}}""")
    x = RNG.standard_normal(32) * 10
    np.testing.assert_allclose(exe(x), np.exp(x), rtol=1e-15)
    assert "exp" in exe.ir("xhlo-lower-to-llvm")


def _atan2_module(n: int) -> str:
    t = f"tensor<{n}xf32>"
    return f"""func.func @main(%y: {t}, %x: {t}) -> {t} {{
  %0 = stablehlo.atan2 %y, %x : {t}
  return %0 : {t}
}}"""


def test_atan2_within_a_few_ulp_everywhere():
    """Every binade of y against x from every 8th binade (and the swap), plus a dense
    grid over [-3, 3]^2: within 3 ulp (the ratio's rounding, the reduction above
    tan(pi/8) and the reflections each add some; atanf itself stays below 2)."""
    sweep = _sweep()
    xs = np.concatenate([np.float32(2.0) ** np.arange(-149, 128, 8, dtype=np.float32), [1.0, 3.0, 0.0, np.inf]])
    xs = np.concatenate([xs, -xs]).astype(np.float32)
    y = np.concatenate([np.repeat(sweep, len(xs)), np.tile(xs, len(sweep))])
    x = np.concatenate([np.tile(xs, len(sweep)), np.repeat(sweep, len(xs))])
    grid = np.linspace(-3, 3, 1024, dtype=np.float32)
    y = np.concatenate([y, np.repeat(grid, 1024)]).astype(np.float32)
    x = np.concatenate([x, np.tile(grid, 1024)]).astype(np.float32)
    exe = xhlo.compile(_atan2_module(len(x)))
    assert "atan2f" not in exe.ir("xhlo-lower-to-llvm"), "the vector form should stay polynomial"
    got = exe(y, x)
    exact = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    error = _ulp_error(got, exact)
    worst = int(np.argmax(error))
    assert error.max() <= 3.0, f"atan2({y[worst]!r}, {x[worst]!r}) = {got[worst]!r}, exact {exact[worst]!r}"


def test_atan2_special_values_follow_ieee():
    """Signed zeros, infinities and NaN: atan2(+-0, -0) = +-pi, atan2(+-inf, -inf) =
    +-3pi/4, atan2(y, +-0) = +-pi/2, ..., with the sign of y kept (float64 reference)."""
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -3e38], np.float32)
    y, x = (v.ravel() for v in np.meshgrid(special, special))
    pad = -len(y) % 16
    y, x = np.pad(y, (0, pad)), np.pad(x, (0, pad), constant_values=1.0)
    got = xhlo.compile(_atan2_module(len(y)))(y, x)
    exact = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(np.float32)
    same = ((got == exact) & (np.signbit(got) == np.signbit(exact))) | (np.isnan(got) & np.isnan(exact))
    assert same.all(), list(zip(y[~same], x[~same], got[~same], exact[~same]))

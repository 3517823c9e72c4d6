"""stablehlo.rng NORMAL expanded by xhlo-expand-rng, checked statistically.

The bits are implementation-defined, so the tests check the distribution of
N = 40000 samples: every statistic must lie within 6 standard errors of its
value under N(mu, sigma^2) (mean: sigma/sqrt(N); variance: sigma^2 sqrt(2/N);
a probability p: sqrt(p(1-p)/N); a correlation: 1/sqrt(N)). The generator is
deterministic, so these bounds cannot flake.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import xhlo

DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16}
SHAPE = (200, 200)
N = SHAPE[0] * SHAPE[1]
STANDARD_ERRORS = 6


def rng_module(elem: str, shape=SHAPE, count: int = 1) -> str:
    """@main(mu, sigma) returning ``count`` independent stablehlo.rng NORMAL samples."""
    t = f"tensor<{''.join(f'{d}x' for d in shape)}{elem}>"
    dims = ", ".join(str(d) for d in shape)
    lines = [f"  %shape = stablehlo.constant dense<[{dims}]> : tensor<{len(shape)}xi64>"]
    for i in range(count):
        lines.append(
            f"  %r{i} = stablehlo.rng %mu, %sigma, %shape, distribution = NORMAL"
            f" : (tensor<{elem}>, tensor<{elem}>, tensor<{len(shape)}xi64>) -> {t}"
        )
    results = ", ".join([t] * count)
    names = ", ".join(f"%r{i}" for i in range(count))
    body = "\n".join(lines)
    return f"""func.func @main(%mu: tensor<{elem}>, %sigma: tensor<{elem}>) -> ({results}) {{
{body}
  return {names} : {results}
}}"""


def normal_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def assert_within(value: float, expected: float, standard_error: float, what: str):
    assert abs(value - expected) <= STANDARD_ERRORS * standard_error, (
        f"{what}: {value} vs {expected} +- {STANDARD_ERRORS} x {standard_error}"
    )


@pytest.mark.parametrize("elem", list(DTYPES))
@pytest.mark.parametrize("mu,sigma", [(0.0, 1.0), (3.0, 2.0), (-1.5, 0.25)])
def test_moments_and_quantiles(elem, mu, sigma):
    dtype = DTYPES[elem]
    samples = xhlo.compile(rng_module(elem))(dtype(mu), dtype(sigma))
    assert samples.shape == SHAPE and samples.dtype == dtype
    x = samples.astype(np.float64).ravel()
    assert np.isfinite(x).all()
    assert_within(x.mean(), mu, sigma / math.sqrt(N), "mean")
    assert_within(x.var(), sigma**2, sigma**2 * math.sqrt(2 / N), "variance")
    z = (x - mu) / sigma
    for bound in (0.5, 1.0, 2.0, 3.0):
        p = normal_cdf(bound) - normal_cdf(-bound)
        fraction = float((np.abs(z) < bound).mean())
        assert_within(fraction, p, math.sqrt(p * (1 - p) / N), f"P(|z| < {bound})")
    p = 0.5
    assert_within(float((z < 0).mean()), p, math.sqrt(p * (1 - p) / N), "P(z < 0)")


def test_ops_are_independent_and_samples_uncorrelated():
    first, second = xhlo.compile(rng_module("f64", count=2))(np.float64(0), np.float64(1))
    a, b = first.ravel(), second.ravel()
    assert not np.array_equal(a, b)
    error = 1 / math.sqrt(N)
    assert_within(float(np.corrcoef(a, b)[0, 1]), 0.0, error, "correlation between ops")
    assert_within(float(np.corrcoef(a[:-1], a[1:])[0, 1]), 0.0, error, "lag-1 autocorrelation")
    assert_within(float(np.corrcoef(a, a**2)[0, 1]), 0.0, error, "skew (x vs x^2)")


def test_scalar_and_odd_shapes():
    outputs = []
    for shape in [(), (7,), (3, 1, 5)]:
        got = xhlo.compile(rng_module("f32", shape))(np.float32(10), np.float32(0))
        assert got.shape == shape
        outputs.append(got)
    # sigma = 0: every sample is mu exactly
    for got in outputs:
        np.testing.assert_array_equal(got, np.full(got.shape, 10, np.float32))


def test_dynamic_result_shape_is_a_compile_error():
    src = """func.func @main(%mu: tensor<f32>, %sigma: tensor<f32>, %shape: tensor<1xi64>) -> tensor<?xf32> {
  %0 = stablehlo.rng %mu, %sigma, %shape, distribution = NORMAL : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}"""
    expected = "xhlo-expand-rng: .*static result shape"
    with pytest.raises(xhlo.CompilerError, match=expected) as info:
        xhlo.compile(src, filename="rng.mlir")
    assert "rng.mlir:2:" in str(info.value)


UNIFORM = """func.func @main(%a: tensor<{e}>, %b: tensor<{e}>) -> tensor<20000x{e}> {{
  %s = stablehlo.constant dense<20000> : tensor<1xi64>
  %0 = stablehlo.rng %a, %b, %s, distribution = UNIFORM : (tensor<{e}>, tensor<{e}>, tensor<1xi64>) -> tensor<20000x{e}>
  return %0 : tensor<20000x{e}>
}}"""


@pytest.mark.parametrize("elem,lo,hi", [("f32", -2.0, 3.0), ("f64", 0.0, 1.0), ("bf16", 1.0, 2.0),
                                        ("i32", -5, 7), ("ui8", 3, 250), ("i64", -(2**40), 2**40)])
def test_uniform_is_in_range_and_spread(elem, lo, hi):
    """Half-open range, every value class reached, mean and spread of a uniform law."""
    dt = xhlo.dtypes.to_numpy_dtype(elem)
    x = xhlo.compile(UNIFORM.format(e=elem))(np.asarray(lo, dt), np.asarray(hi, dt)).astype(np.float64)
    assert x.min() >= lo and x.max() < hi
    n, width = x.size, hi - lo
    # mean of U[lo, hi) is (lo+hi)/2 (integers: (lo+hi-1)/2) with std ~width/sqrt(12);
    # allow 6 standard errors
    mean = (lo + hi - (1 if dt.kind in "iu" else 0)) / 2
    assert abs(x.mean() - mean) < 6 * width / np.sqrt(12 * n)
    # consecutive samples are not a ramp: their correlation is near 0 (std 1/sqrt(n))
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < 6 / np.sqrt(n)
    if dt.kind in "iu" and width < 1000:
        assert len(np.unique(x)) == width

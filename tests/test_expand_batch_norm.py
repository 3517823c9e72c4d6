"""batch_norm_inference/training/grad expanded by xhlo-expand-batch-norm, against numpy.

The oracle evaluates the formulas of the XLA spec (biased variance, gradients
c_l, d_l) in float64. Tolerances: 1e-5 relative for f32, 1e-12 for f64, 1e-2
for f16/bf16 (computed in f32, rounded once).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xhlo

EPSILON = 1e-3
EPSILON_F32 = float(np.float32(EPSILON))  # the attribute is f32: what every element type sees
TOLERANCE = {"f32": 1e-5, "f64": 1e-12, "f16": 1e-2, "bf16": 2e-2}
DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def tensor(shape, elem):
    return f"tensor<{''.join(f'{d}x' for d in shape)}{elem}>"


def batch_norm_module(kind: str, shape, feature_index: int, elem: str) -> str:
    """@main with one batch_norm_<kind> op in generic form."""
    x = tensor(shape, elem)
    v = tensor([shape[feature_index]], elem)
    operands = {"inference": [x, v, v, v, v], "training": [x, v, v], "grad": [x, v, v, v, x]}[kind]
    results = {"inference": [x], "training": [x, v, v], "grad": [x, v, v]}[kind]
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operands))
    names = ", ".join(f"%a{i}" for i in range(len(operands)))
    outs = ", ".join(f"%r#{i}" for i in range(len(results)))
    return f"""func.func @main({args}) -> ({", ".join(results)}) {{
  %r:{len(results)} = "stablehlo.batch_norm_{kind}"({names}) {{epsilon = {EPSILON} : f32, feature_index = {feature_index} : i64}}
      : ({", ".join(operands)}) -> ({", ".join(results)})
  return {outs} : {", ".join(results)}
}}"""


# -- numpy oracle (float64) ---------------------------------------------------------


def per_feature(vector, ndim, feature_index):
    shape = [1] * ndim
    shape[feature_index] = -1
    return np.asarray(vector, np.float64).reshape(shape)


def reduced_axes(ndim, feature_index):
    return tuple(d for d in range(ndim) if d != feature_index)


def oracle_inference(x, scale, offset, mean, variance, feature_index):
    spread = lambda v: per_feature(v, x.ndim, feature_index)  # noqa: E731
    x = x.astype(np.float64)
    std = np.sqrt(spread(variance) + EPSILON_F32)
    return [(x - spread(mean)) * spread(scale) / std + spread(offset)]


def oracle_training(x, scale, offset, feature_index):
    axes = reduced_axes(x.ndim, feature_index)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes)
    variance = ((x64 - per_feature(mean, x.ndim, feature_index)) ** 2).mean(axis=axes)
    (y,) = oracle_inference(x, scale, offset, mean, variance, feature_index)
    return [y, mean, variance]


def oracle_grad(x, scale, mean, variance, grad_y, feature_index):
    spread = lambda v: per_feature(v, x.ndim, feature_index)  # noqa: E731
    axes = reduced_axes(x.ndim, feature_index)
    x, grad_y = x.astype(np.float64), grad_y.astype(np.float64)
    centered = x - spread(mean)
    c = (grad_y * centered / spread(variance + EPSILON_F32)).mean(axis=axes)
    d = grad_y.mean(axis=axes)
    std = np.sqrt(spread(variance) + EPSILON_F32)
    grad_x = spread(scale) / std * (grad_y - spread(d) - spread(c) * centered)
    grad_scale = (grad_y * centered / std).sum(axis=axes)
    grad_offset = grad_y.sum(axis=axes)
    return [grad_x, grad_scale, grad_offset]


def random_inputs(kind, shape, feature_index, dtype, seed=0):
    rng = np.random.default_rng(seed)
    features = shape[feature_index]
    x = rng.normal(2.0, 3.0, size=shape)
    scale, offset = rng.normal(size=features), rng.normal(size=features)
    mean, variance = rng.normal(size=features), rng.uniform(0.5, 2.0, size=features)
    grad_y = rng.normal(size=shape)
    if kind == "grad":  # the statistics a training step would have passed on
        axes = reduced_axes(len(shape), feature_index)
        mean, variance = x.mean(axis=axes), x.var(axis=axes)
    args = {
        "inference": [x, scale, offset, mean, variance],
        "training": [x, scale, offset],
        "grad": [x, scale, mean, variance, grad_y],
    }[kind]
    return [np.asarray(a).astype(dtype) for a in args]


ORACLES = {"inference": oracle_inference, "training": oracle_training, "grad": oracle_grad}


def check(kind, shape, feature_index, elem):
    args = random_inputs(kind, shape, feature_index, DTYPES[elem])
    got = xhlo.compile(batch_norm_module(kind, shape, feature_index, elem))(*args)
    got = got if isinstance(got, tuple) else (got,)
    expected = ORACLES[kind](*args, feature_index)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == DTYPES[elem] and g.shape == e.shape
        scale = max(1.0, float(np.abs(e).max()))
        np.testing.assert_allclose(g.astype(np.float64), e, rtol=0, atol=TOLERANCE[elem] * scale)


@pytest.mark.parametrize("elem", ["f32", "f64"])
@pytest.mark.parametrize("feature_index", [0, 1, 2, 3])
@pytest.mark.parametrize("kind", ["inference", "training", "grad"])
def test_matches_numpy_for_every_feature_index(kind, feature_index, elem):
    check(kind, (3, 4, 5, 2), feature_index, elem)


@pytest.mark.parametrize("elem", ["f16", "bf16"])
@pytest.mark.parametrize("kind", ["inference", "training", "grad"])
def test_low_precision_is_computed_in_f32(kind, elem):
    check(kind, (6, 3, 4), 1, elem)


@pytest.mark.parametrize("kind", ["inference", "training", "grad"])
def test_rank_one_operand_normalizes_each_element_alone(kind):
    check(kind, (5,), 0, "f64")


def test_training_variance_is_biased_and_stable_for_large_mean():
    """Two-pass variance: no cancellation when |mean| >> std (one-pass E[x^2]-E[x]^2 fails)."""
    x = (1e4 + np.arange(8, dtype=np.float32).reshape(8, 1) * 0.5).astype(np.float32)
    ones, zeros = np.ones(1, np.float32), np.zeros(1, np.float32)
    exe = xhlo.compile(batch_norm_module("training", (8, 1), 1, "f32"))
    _, mean, variance = exe(x, ones, zeros)
    expected_variance = np.var(np.arange(8) * 0.5)  # biased: divide by 8 -> 5.25
    np.testing.assert_allclose(mean, [1e4 + 1.75], rtol=1e-7)
    np.testing.assert_allclose(variance, [expected_variance], rtol=1e-4)


def test_grad_matches_jax_vjp_of_training():
    """batch_norm_grad is the VJP of training-mode normalization (stats depend on x)."""
    jax = pytest.importorskip("jax")
    with jax.enable_x64():
        _check_grad_matches_jax_vjp(jax)


def _check_grad_matches_jax_vjp(jax):
    jnp = jax.numpy
    shape, feature_index = (4, 3, 5), 1
    x, scale, _, _, grad_y = random_inputs("grad", shape, feature_index, np.float64, seed=3)
    axes = reduced_axes(len(shape), feature_index)

    def forward(x, scale, offset):
        mean = x.mean(axis=axes, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        s, o = scale.reshape(1, -1, 1), offset.reshape(1, -1, 1)
        return (x - mean) * s / jnp.sqrt(variance + EPSILON_F32) + o

    _, vjp = jax.vjp(forward, x, scale, np.zeros(3))
    expected = vjp(grad_y)
    mean, variance = x.mean(axis=axes), x.var(axis=axes)
    exe = xhlo.compile(batch_norm_module("grad", shape, feature_index, "f64"))
    got = exe(x, scale, mean, variance, grad_y)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-10, atol=1e-10)


def test_dynamic_operand_is_a_compile_error():
    src = """func.func @main(%x: tensor<?x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>) -> tensor<?x3xf32> {
  %r:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
      : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %r#0 : tensor<?x3xf32>
}"""
    expected = "xhlo-expand-batch-norm: .*statically shaped"
    with pytest.raises(xhlo.CompilerError, match=expected) as info:
        xhlo.compile(src, filename="bn.mlir")
    assert "bn.mlir:2:" in str(info.value)

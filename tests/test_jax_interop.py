"""JAX programs exported with ``jax.export`` and run by xhlo, against ``jax.jit``.

Every program is run by both on the same inputs. Tolerances are stated per
test; the general reasons for any difference at all: f32 sums (matmuls,
convolutions, reductions) in another order, and libm (xhlo) versus XLA's own
polynomial approximations of exp/tanh/erf/log. Decompositions with non-unique
outputs (eigh, svd) are compared through reconstructions and invariants.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp
import xhlo
from jax import export, lax
from xhlo.jax_interop import ExportedFunction, PolymorphicExecutable, compile_exported

RNG = np.random.default_rng(0)


def normal(*shape, scale=1.0) -> np.ndarray:
    return (scale * RNG.standard_normal(shape)).astype(np.float32)


def run_both(f, *args, **export_options):
    """(xhlo result, jax.jit result) as lists of numpy leaves."""
    exported = export.export(jax.jit(f), **export_options)(*args)
    ours = compile_exported(exported)(*args)
    theirs = jax.jit(f)(*args)
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(ours)], [
        np.asarray(x) for x in jax.tree_util.tree_leaves(theirs)
    ]


def assert_same(f, *args, rtol=0.0, atol=0.0, **export_options):
    ours, theirs = run_both(f, *args, **export_options)
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# -- a corpus of ordinary programs -------------------------------------------------------


def mlp(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return jax.nn.log_softmax(x @ w + b)


def mlp_params(sizes):
    return [
        (normal(m, n, scale=m**-0.5), normal(n, scale=0.1)) for m, n in itertools.pairwise(sizes)
    ]


def test_mlp_forward():
    # f32 dot products of length <= 32 summed in another order: ~1e-6 relative
    assert_same(mlp, mlp_params([16, 32, 32, 10]), normal(8, 16), rtol=1e-5, atol=1e-5)


def test_mlp_training_step():
    def loss(params, x, labels):
        return -jnp.mean(jnp.sum(mlp(params, x) * jax.nn.one_hot(labels, 10), axis=-1))

    def step(params, x, labels):
        value, grads = jax.value_and_grad(loss)(params, x, labels)
        return value, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    labels = RNG.integers(0, 10, size=8).astype(np.int32)
    # backward matmuls and the softmax gradient, f32 in another order
    assert_same(step, mlp_params([16, 32, 10]), normal(8, 16), labels, rtol=1e-5, atol=1e-5)


def test_cnn():
    def cnn(w1, w2, dense, x):
        y = lax.conv_general_dilated(
            x, w1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        y = jax.nn.relu(y)
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")  # max pool
        y = lax.conv_general_dilated(
            y, w2, (2, 2), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        y = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME") / 4  # avg pool
        return y.reshape(y.shape[0], -1) @ dense

    # convolutions sum 27-72 f32 products in another order
    args = (
        normal(3, 3, 3, 8, scale=0.3),
        normal(3, 3, 8, 4, scale=0.2),
        normal(36, 5),
        normal(2, 16, 16, 3),
    )
    assert_same(cnn, *args, rtol=1e-4, atol=1e-5)


def test_transformer_block():
    def layer_norm(x, scale, bias):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * lax.rsqrt(var + 1e-5) * scale + bias

    def block(p, x):
        b, t, d = x.shape
        heads = 4
        h = layer_norm(x, p["ln1_s"], p["ln1_b"])
        q, k, v = jnp.split(h @ p["qkv"], 3, axis=-1)
        q, k, v = (a.reshape(b, t, heads, d // heads) for a in (q, k, v))
        logits = jnp.einsum("bthd,bshd->bhts", q, k) / jnp.sqrt(d // heads)
        mask = jnp.tril(jnp.ones((t, t), bool))
        attn = jax.nn.softmax(jnp.where(mask, logits, -1e9), axis=-1)
        x = x + jnp.einsum("bhts,bshd->bthd", attn, v).reshape(b, t, d) @ p["proj"]
        h = layer_norm(x, p["ln2_s"], p["ln2_b"])
        return x + jax.nn.gelu(h @ p["up"], approximate=False) @ p["down"]  # gelu via erf

    d = 32
    params = {
        "ln1_s": 1 + normal(d, scale=0.1),
        "ln1_b": normal(d, scale=0.1),
        "ln2_s": 1 + normal(d, scale=0.1),
        "ln2_b": normal(d, scale=0.1),
        "qkv": normal(d, 3 * d, scale=d**-0.5),
        "proj": normal(d, d, scale=d**-0.5),
        "up": normal(d, 4 * d, scale=d**-0.5),
        "down": normal(4 * d, d, scale=(4 * d) ** -0.5),
    }
    # erf/exp/rsqrt from libm vs XLA's approximations (a few ulp), through softmax and 4 matmuls
    assert_same(block, params, normal(2, 8, d), rtol=1e-4, atol=1e-4)


def test_lstm_with_scan():
    def lstm(params, xs, h0, c0):
        def cell(carry, x):
            h, c = carry
            gates = x @ params["wx"] + h @ params["wh"] + params["b"]
            i, f, g, o = jnp.split(gates, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h

        (h, c), hs = lax.scan(cell, (h0, c0), xs)
        return hs, h, c

    hidden, features = 16, 8
    params = {
        "wx": normal(features, 4 * hidden, scale=0.3),
        "wh": normal(hidden, 4 * hidden, scale=0.3),
        "b": normal(4 * hidden, scale=0.1),
    }
    # tanh/logistic from libm vs XLA over 6 recurrent steps
    assert_same(
        lstm,
        params,
        normal(6, 3, features),
        normal(3, hidden),
        normal(3, hidden),
        rtol=1e-5,
        atol=1e-5,
    )


def test_sort_argsort_top_k():
    x = RNG.permutation(48).reshape(4, 12).astype(np.float32)  # distinct: a unique order

    def f(x):
        values, indices = lax.top_k(x, 3)
        return jnp.sort(x, axis=0), jnp.argsort(x, axis=1), values, indices, jnp.sort(-x.ravel())

    assert "stablehlo.composite" in export.export(jax.jit(f))(x).mlir_module()  # chlo.top_k
    assert_same(f, x)  # permutations of exact values: exact


def test_gather_and_scatter():
    def f(table, ids, x, positions):
        embedded = table[ids]  # embedding lookup (gather)
        added = x.at[positions].add(1.0)  # duplicate positions accumulate
        maxed = x.at[positions].max(jnp.arange(positions.size, dtype=x.dtype))
        taken = jnp.take_along_axis(embedded, ids[:, None] % 4, axis=1)
        return embedded, added, maxed, taken

    table = np.arange(40, dtype=np.float32).reshape(10, 4)
    ids = np.array([3, 0, 9, 3, 7], np.int32)
    positions = np.array([1, 4, 1, 1, 6], np.int32)
    assert_same(f, table, ids, np.zeros(8, np.float32), positions)  # small integers: exact


def test_cumulative_reductions():
    def f(x, n):
        return (
            jnp.cumsum(x, axis=1),
            jnp.cumprod(1 + x / 10, axis=0),
            lax.cummax(x, axis=1),
            jnp.cumsum(n),
        )

    # f32 prefix sums/products may associate differently (XLA uses a windowed reduction)
    assert_same(
        f, normal(5, 16), RNG.integers(-50, 50, size=20).astype(np.int32), rtol=1e-5, atol=1e-5
    )


def test_random_threefry():
    def f(key_data):
        key = jax.random.wrap_key_data(key_data)
        k1, k2, k3 = jax.random.split(key, 3)
        return (
            jax.random.bits(k1, (64,)),
            jax.random.uniform(k2, (4, 8)),
            jax.random.randint(k3, (16,), 0, 100),
            jax.random.permutation(k1, 10),
        )

    key_data = np.asarray(jax.random.key_data(jax.random.key(42)))
    assert_same(f, key_data)  # integer hashing and bit tricks: bit-exact

    def g(key_data):
        key = jax.random.wrap_key_data(key_data)
        return jax.random.normal(key, (256,))

    # normal = sqrt(2) erf_inv(uniform): erf_inv's f32 polynomial, within a few ulp
    assert_same(g, key_data, rtol=1e-6, atol=1e-6)


def test_control_flow():
    def f(x, n):
        y = lax.fori_loop(0, n, lambda i, acc: acc * 0.5 + i, x)
        z = lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x)
        w = lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] + c[0]), (0, x))[1]
        return y, z, w

    assert_same(f, np.arange(4, dtype=np.float32), np.int32(6))  # dyadic arithmetic: exact


def test_composite_runs_its_decomposition():
    softplus = lax.composite(
        lambda x, beta=1.0: jnp.logaddexp(x * beta, 0.0) / beta, name="xhlo_test.softplus"
    )

    def f(x):
        return softplus(x, beta=2.0) * 3

    x = np.linspace(-4, 4, 9).astype(np.float32)
    assert "stablehlo.composite" in export.export(jax.jit(f))(x).mlir_module()
    assert_same(f, x, rtol=1e-6, atol=1e-6)  # exp/log1p: libm vs XLA, a few ulp


def test_approx_top_k():
    x = RNG.permutation(64).reshape(4, 16).astype(np.float32)
    assert_same(lambda x: lax.approx_max_k(x, 3), x)  # the CPU fallback is exact


# -- jnp.linalg (LAPACK custom calls) ------------------------------------------------------


def spd(n, batch=()):
    b = RNG.standard_normal((*batch, n, n))
    return (b @ np.swapaxes(b, -1, -2) + n * np.eye(n)).astype(np.float32)


def test_linalg_solves():
    a, b = spd(5), normal(5, 3)
    general = normal(4, 4) + 4 * np.eye(4, dtype=np.float32)

    def f(a, b, general):
        return (
            jnp.linalg.cholesky(a),
            jnp.linalg.solve(general, b[:4]),
            jnp.linalg.inv(general),
            jnp.linalg.det(general),
            jnp.linalg.slogdet(a)[1],
            jax.scipy.linalg.solve_triangular(a, b, lower=True),
            jax.scipy.linalg.lu(general),
        )

    # factorizations of well-conditioned f32 matrices (cond < 100): a few ulp times n
    assert_same(f, a, b, general, rtol=2e-5, atol=2e-5)


def test_linalg_qr():
    a = normal(2, 6, 4)
    q, r = compile_exported(export.export(jax.jit(jnp.linalg.qr))(a))(a)
    np.testing.assert_allclose(q @ r, a, atol=2e-6)  # backward error of Householder QR in f32
    np.testing.assert_allclose(
        np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(4), (2, 4, 4)), atol=2e-6
    )
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    q_jax, r_jax = jnp.linalg.qr(a)  # LAPACK's reflector convention: the same signs
    np.testing.assert_allclose(r, r_jax, atol=2e-6)
    np.testing.assert_allclose(q, q_jax, atol=2e-6)


def test_linalg_eigh():
    a = spd(6, (2,)) - 6 * np.eye(6, dtype=np.float32)  # indefinite
    w, v = compile_exported(export.export(jax.jit(jnp.linalg.eigh))(a))(a)
    w_jax, _ = jnp.linalg.eigh(a)
    # eigenvalues to ~n eps ||A||; vectors only up to sign: reconstruct and check orthogonality
    np.testing.assert_allclose(w, w_jax, atol=1e-5 * np.abs(a).max())
    np.testing.assert_allclose(
        (v * w[..., None, :]) @ np.swapaxes(v, -1, -2), a, atol=1e-5 * np.abs(a).max()
    )
    np.testing.assert_allclose(
        np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(6), (2, 6, 6)), atol=1e-5
    )


@pytest.mark.parametrize("shape,full", [((6, 4), True), ((3, 5), False)])
def test_linalg_svd(shape, full):
    a = normal(*shape)
    u, s, vt = compile_exported(
        export.export(jax.jit(lambda x: jnp.linalg.svd(x, full_matrices=full)))(a)
    )(a)
    s_jax = jnp.linalg.svd(a, compute_uv=False)
    k = min(shape)
    # singular values to ~n eps ||A||; vectors only up to sign: reconstruct and check orthogonality
    np.testing.assert_allclose(s, s_jax, atol=1e-5 * np.abs(a).max())
    np.testing.assert_allclose((u[:, :k] * s) @ vt[:k], a, atol=1e-5 * np.abs(a).max())
    np.testing.assert_allclose(u.T @ u, np.eye(u.shape[1]), atol=1e-5)
    np.testing.assert_allclose(vt @ vt.T, np.eye(vt.shape[0]), atol=1e-5)


def test_linalg_eig_and_roots():
    a = normal(5, 5)
    coefficients = np.array([1, -6, 11, -6], np.float32)  # (x - 1)(x - 2)(x - 3)

    def f(a, c):
        w, v = jnp.linalg.eig(a)
        return w, v, jnp.roots(c, strip_zeros=False)

    w, v, roots = compile_exported(export.export(jax.jit(f))(a, coefficients))(a, coefficients)
    # the order of eigenvalues is unspecified: match each to the nearest of JAX's
    w_jax = list(np.asarray(jnp.linalg.eigvals(a)))
    nearest = [w_jax.pop(int(np.argmin([abs(x - y) for y in w_jax]))) for x in w]
    np.testing.assert_allclose(w, nearest, atol=1e-5 * np.abs(a).max())  # f32 QR iteration
    np.testing.assert_allclose(a @ v, v * w, atol=1e-5 * np.abs(a).max())
    np.testing.assert_allclose(np.sort(roots.real), [1, 2, 3], atol=1e-4)  # f32 companion matrix
    np.testing.assert_allclose(roots.imag, 0, atol=1e-4)


def test_linalg_sqrtm_via_complex_schur():
    a = normal(4, 4) + 4 * np.eye(4, dtype=np.float32)
    root = compile_exported(export.export(jax.jit(jax.scipy.linalg.sqrtm))(a))(a)
    # complex Schur form (QR iteration) then JAX's triangular square root, f32
    np.testing.assert_allclose(root @ root, a, atol=2e-5 * np.abs(a).max())
    np.testing.assert_allclose(root, jax.scipy.linalg.sqrtm(a), atol=2e-5 * np.abs(a).max())


def test_linalg_built_on_svd():
    a, b = normal(6, 3), normal(6)
    # pinv/lstsq/matrix norm: svd plus f32 matmuls (condition number of a ~ 3)
    assert_same(
        lambda a, b: (jnp.linalg.pinv(a), jnp.linalg.lstsq(a, b)[0], jnp.linalg.norm(a, 2)),
        a,
        b,
        rtol=1e-4,
        atol=1e-5,
    )


def test_tridiagonal_solve_and_empty_linalg():
    """lax.linalg.tridiagonal_solve (LAPACK ?gtsv) on a batch whose second system is
    singular (JAX returns NaN for it), and jnp.linalg on 0x0 matrices."""
    dl, d, du = (normal(2, 6) for _ in range(3))
    d[1, 0] = dl[1, 1] = 0.0  # a zero first column
    b = normal(2, 6, 3)

    def f(dl, d, du, b, empty):
        return jax.lax.linalg.tridiagonal_solve(dl, d, du, b), jnp.linalg.eigh(empty)[0], jnp.linalg.inv(empty)

    result = compile_exported(export.export(jax.jit(f))(dl, d, du, b, np.zeros((0, 0), np.float32)))(
        dl, d, du, b, np.zeros((0, 0), np.float32))
    assert np.isnan(result[0][1]).all()
    assert result[1].shape == (0,) and result[2].shape == (0, 0)
    # one elimination of a 6x6 system with row swaps, f32
    assert_same(lambda dl, d, du, b: jax.lax.linalg.tridiagonal_solve(dl, d, du, b),
                dl[:1], d[:1], du[:1], b[:1], rtol=1e-4, atol=1e-5)


# -- calling conventions -------------------------------------------------------------------------


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_multi_platform_export_binds_the_cpu_index(x64):
    """The platform index is i32 by default and i64 when jax runs in x64 mode."""
    with jax.enable_x64(x64):
        _check_multi_platform_export()


def _check_multi_platform_export():
    def f(x):
        return lax.platform_dependent(
            x, cpu=lambda x: x * 2, default=lambda x: x * 3
        ), jnp.linalg.cholesky(x[:, None] * x[None, :] + 10 * jnp.eye(3))

    x = np.arange(1, 4, dtype=np.float32)
    exported = export.export(jax.jit(f), platforms=("cuda", "cpu", "tpu"))(x)
    assert "_platform_index" in exported.mlir_module()
    executable = xhlo.compile(exported)
    assert len(executable.signature.inputs) == 1  # the platform index is bound, not exposed
    doubled, factor = executable(x)
    np.testing.assert_array_equal(doubled, x * 2)  # the cpu branch
    np.testing.assert_allclose(
        factor, jnp.linalg.cholesky(x[:, None] * x[None, :] + 10 * jnp.eye(3)), rtol=1e-6
    )


def test_export_for_other_platforms_only_is_an_error():
    exported = export.export(jax.jit(jnp.sin), platforms=("cuda",))(np.ones(2, np.float32))
    with pytest.raises(xhlo.CompilerError, match="exported for \\('cuda',\\), not for 'cpu'"):
        xhlo.compile(exported)


def test_unused_and_donated_arguments():
    def f(a, unused, b):
        return {"sum": a + b, "scaled": b * 2}

    args = np.ones(3, np.float32), np.zeros((2, 2), np.int32), np.arange(3, dtype=np.float32)
    exported = export.export(jax.jit(f, donate_argnums=(0,)))(*args)
    assert exported.module_kept_var_idx == (0, 2)
    assert "jax.result_info" in exported.mlir_module()
    executable = xhlo.compile(exported)
    assert [spec.shape for spec in executable.signature.inputs] == [(3,), (2, 2), (3,)]
    results = compile_exported(exported)(*args)
    np.testing.assert_array_equal(results["sum"], args[0] + args[2])
    np.testing.assert_array_equal(results["scaled"], args[2] * 2)
    np.testing.assert_array_equal(args[0], np.ones(3, np.float32))  # donation is only a hint


def ordered_effect_primitive():
    """A primitive with an ordered effect: its exports thread a token through @main.

    Uses JAX internals (no public API makes ordered effects that export); skip if they moved.
    """
    try:
        from jax._src import effects
        from jax._src.interpreters import mlir
        from jax.extend.core import Primitive
    except ImportError:
        pytest.skip("JAX internals for custom effects are not available")

    class XhloTestEffect(effects.Effect):
        pass

    effect = XhloTestEffect()
    for registry in (
        effects.lowerable_effects,
        effects.ordered_effects,
        effects.control_flow_allowed_effects,
    ):
        registry.add_type(XhloTestEffect)
    primitive = Primitive("xhlo_test_effectful_double")
    primitive.def_effectful_abstract_eval(lambda x: (x, {effect}))

    def lowering(ctx, x):
        ctx.set_tokens_out(mlir.TokenSet({effect: ctx.tokens_in.get(effect)}))
        return [mlir.hlo.add(x, x)]

    mlir.register_lowering(primitive, lowering)
    return primitive


def test_effectful_program_hides_tokens():
    primitive = ordered_effect_primitive()

    def f(x):
        return primitive.bind(jnp.sin(x)) + 1

    x = np.linspace(0, 1, 5).astype(np.float32)
    exported = export.export(jax.jit(f))(x)
    assert exported.ordered_effects and "!stablehlo.token" in exported.mlir_module()
    executable = xhlo.compile(exported)
    assert len(executable.signature.inputs) == 1 and len(executable.signature.outputs) == 1
    np.testing.assert_allclose(executable(x), 2 * np.sin(x) + 1, rtol=1e-6)  # libm sin vs numpy


def test_shape_polymorphic_export():
    def f(x, w):
        return jnp.tanh(x @ w).mean(axis=0), jnp.concatenate([x, x * 2])

    spec = jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), np.float32)
    exported = export.export(jax.jit(f))(spec, np.ones((4, 3), np.float32))
    executable = xhlo.compile(exported)
    assert isinstance(executable, PolymorphicExecutable)
    w = normal(4, 3)
    for batch in (2, 7):
        x = normal(batch, 4)
        mean, doubled = executable(x, w)
        np.testing.assert_allclose(
            mean, jnp.tanh(x @ w).mean(axis=0), rtol=1e-5, atol=1e-6
        )  # tanh, f32 mean
        np.testing.assert_array_equal(doubled, np.concatenate([x, x * 2]))
    executable(normal(2, 4), w)
    assert len(executable.executables) == 2  # compiled once per shape
    with pytest.raises(xhlo.CompilerError, match="dimension variable 'b'"):
        executable(np.zeros((0, 4), np.float32), w)  # JAX's shape assertion: b >= 1


def _symbolic_programs():
    def strided(x):  # floor division of a symbolic dim: JAX's @_where helper under two callers
        return x[::2] * 2, x[:, : x.shape[1] // 2].sum(1)

    def cumulative(x):  # stablehlo.dynamic_reduce_window over the symbolic axis
        return jnp.cumsum(x, 0), lax.cummax(x, 1, reverse=True), lax.reduce_window(
            x, -jnp.inf, lax.max, (2, 2), (1, 1), "SAME")

    def top_k(x):  # the chlo.top_k composite over a symbolic batch
        return lax.top_k(x, 3)

    return {"strided": strided, "cumulative": cumulative, "top_k": top_k}


@pytest.mark.parametrize("name,dims,shapes", [
    ("strided", "b, t", [(5, 8), (2, 3)]),
    ("cumulative", "b, t", [(5, 8), (2, 3)]),
    ("top_k", "b, 16", [(5, 16), (2, 16)]),
])
def test_symbolic_dimensions_refine_like_jax(name, dims, shapes):
    """Programs whose symbolic dims reach helpers, composites and JAX's dynamic custom
    calls: refined per input shape, they match JAX at two shapes each."""
    f = _symbolic_programs()[name]
    spec = jax.ShapeDtypeStruct(export.symbolic_shape(dims), np.float32)
    executable = xhlo.compile(export.export(jax.jit(f))(spec))
    for shape in shapes:
        x = normal(*shape)
        for got, want in zip(executable(x), jax.jit(f)(x)):
            np.testing.assert_allclose(got, np.asarray(want), rtol=1e-6, atol=1e-6)  # cumsum of <= 5


def test_symbolic_rbg_random_bits_match_jax():
    """The rbg PRNG of a symbolic shape (stablehlo.dynamic_rng_bit_generator): the same bits."""
    prng = jax.config.jax_default_prng_impl
    jax.config.update("jax_default_prng_impl", "rbg")
    try:
        def f(key, x):
            return jax.random.bits(key, x.shape, jnp.uint32)

        key = jax.random.key_data(jax.random.key(3))
        spec = jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), np.float32)
        executable = xhlo.compile(export.export(jax.jit(f))(key, spec))
        for batch in (3, 6):
            x = np.zeros((batch, 4), np.float32)
            np.testing.assert_array_equal(executable(key, x), np.asarray(jax.jit(f)(key, x)))
    finally:
        jax.config.update("jax_default_prng_impl", prng)


# -- artifacts, files, xhlo.jit ------------------------------------------------------------------


def test_serialized_artifacts(tmp_path):
    pytest.importorskip("flatbuffers")  # Exported.serialize() needs it

    def f(params, x):
        return {"y": jnp.linalg.solve(params["a"], x), "norm": jnp.sum(x**2)}

    params = {"a": spd(3)}
    x = normal(3)
    exported = export.export(jax.jit(f))(params, x)
    path = tmp_path / "f.jax"
    path.write_bytes(exported.serialize())
    loaded = xhlo.load_exported(path)
    assert isinstance(loaded, ExportedFunction)
    want = jax.jit(f)(params, x)
    got = loaded(params, x)
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-5)  # LU solve of a cond < 10 matrix
    np.testing.assert_allclose(got["norm"], want["norm"], rtol=1e-6)
    by_bytes = xhlo.compile(exported.serialize())(params["a"], x)
    np.testing.assert_allclose(by_bytes[1], want["y"], rtol=1e-5)

    simple = export.export(jax.jit(lambda v: jnp.cos(v) * 2))(x)
    np.testing.assert_allclose(
        xhlo.compile(simple.mlir_module_serialized)(x), np.cos(x) * 2, rtol=1e-6
    )


def test_sharding_annotations_on_one_device():
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))

    def f(a):
        a = lax.with_sharding_constraint(a * 2, NamedSharding(mesh, P("x")))
        return jax.shard_map(
            lambda b: b + lax.psum(b, "x"), mesh=mesh, in_specs=P("x"), out_specs=P("x")
        )(a)

    x = np.arange(4, dtype=np.float32)
    assert_same(jax.jit(f, in_shardings=NamedSharding(mesh, P("x"))), x)  # exact: x * 4


TWO_DEVICE_EXPORT = """
import sys
import jax, jax.numpy as jnp, numpy as np
from jax import export
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
sharding = NamedSharding(mesh, P("x"))
def f(a):
    return jnp.cumsum(jax.lax.with_sharding_constraint(a * 2, sharding)), a.sum()
exported = export.export(jax.jit(f, in_shardings=sharding))(np.ones(8, np.float32))
open(sys.argv[1], "wb").write(exported.serialize())
"""


def test_two_device_export_runs_unpartitioned(tmp_path):
    pytest.importorskip("flatbuffers")
    path = tmp_path / "two.jax"
    env = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
        "JAX_PLATFORMS": "cpu",
    }
    subprocess.run([sys.executable, "-c", TWO_DEVICE_EXPORT, str(path)], check=True, env=env)
    executable = xhlo.compile(path.read_bytes())
    assert executable.num_partitions == 2 and executable.num_replicas == 1
    x = np.arange(8, dtype=np.float32)
    cumulative, total = executable(x)
    np.testing.assert_array_equal(cumulative, np.cumsum(2 * x))  # small integers: exact
    assert total == x.sum()


def test_xhlo_jit_caches_per_signature():
    calls = []

    @xhlo.jit
    def f(x, scale, *, offset):
        calls.append(1)  # traced once per new signature
        return {"out": jnp.tanh(x) * scale + offset, "shape": jnp.array(x.shape)}

    x = np.linspace(-1, 1, 6).astype(np.float32)
    result = f(x, 2.0, offset=np.float32(1))
    assert isinstance(result["out"], np.ndarray)
    np.testing.assert_allclose(result["out"], np.tanh(x) * 2 + 1, rtol=1e-6)  # libm tanh vs numpy
    f(x * 3, 5.0, offset=np.float32(0))
    assert len(calls) == 1
    np.testing.assert_array_equal(f(x.reshape(2, 3), 1.0, offset=np.float32(0))["shape"], [2, 3])
    assert len(calls) == 2

    g = xhlo.jit(lambda x, n: jnp.tile(x, n), static_argnums=1)
    np.testing.assert_array_equal(g(np.arange(2, dtype=np.int32), 3), np.tile(np.arange(2), 3))
    np.testing.assert_array_equal(g(np.arange(2, dtype=np.int32), 2), np.tile(np.arange(2), 2))


def test_one_byte_ml_dtypes_get_their_own_specializations():
    """Every f8/i4 dtype's ``dtype.str`` is '<V1': a cache keyed on it ran an int4
    specialization on float8 data, reinterpreting the bytes."""
    import ml_dtypes

    ints = np.array([1, 2, 3, -4], ml_dtypes.int4)
    floats = np.array([1.5, 2.0, 0.25, -4.0], ml_dtypes.float8_e4m3fn)
    f = xhlo.jit(lambda x: x.astype(jnp.float32) * 2)
    np.testing.assert_array_equal(f(ints), [2, 4, 6, -8])
    np.testing.assert_array_equal(f(floats), [3, 4, 0.5, -8])
    spec = jax.ShapeDtypeStruct(export.symbolic_shape("n"), ml_dtypes.int4)
    polymorphic = xhlo.compile(export.export(jax.jit(lambda x: x.astype(jnp.int32)))(spec))
    np.testing.assert_array_equal(polymorphic(ints), [1, 2, 3, -4])
    with pytest.raises(ValueError, match="expected dtype int4"):
        polymorphic(floats)


def test_python_numbers_must_fit_on_every_call_path():
    """``compile_exported`` and shape-polymorphic executables check Python numbers as
    ``Executable`` does (2**40 had wrapped to 0 and 3.7 truncated to 3 for an i32)."""
    def add(x, k):
        return x + k

    x = np.zeros(3, np.int32)
    static = compile_exported(export.export(jax.jit(add))(x, np.int32(0)))
    scalar = jax.ShapeDtypeStruct((), jnp.int32)
    polymorphic = xhlo.compile(export.export(jax.jit(add))(
        jax.ShapeDtypeStruct(export.symbolic_shape("n"), jnp.int32), scalar))
    for call in (static, polymorphic):
        for bad in (2**40, 3.7, 1j):
            with pytest.raises(ValueError, match=f"argument 1 of .*: {bad!r} does not fit int32"):
                call(x, bad)
        np.testing.assert_array_equal(call(x, 3.0), [3, 3, 3])


def test_import_xhlo_does_not_import_jax():
    code = "import sys, xhlo; xhlo.compile; assert 'jax' not in sys.modules and 'jaxlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)

"""Whole programs beyond the suite, xhlo beside jax.jit in one process.

    python benchmarks/bench_programs.py [--only SUBSTRING ...] [--repeat 7]

``run.py`` times the issue's workloads and ``bench_ops.py`` single operations;
these are the programs users write around them: training steps of small
models (a GPT-style language model with Adam, a ResNet-style CNN, a VAE, a
graph network, a two-layer LSTM), ``jax.nn.dot_product_attention``, a
mixture-of-experts layer, Gaussian-process regression, ODE integrators
(``vmap`` over ``fori_loop``, a ``while_loop``), an associative scan, the
gradient of ``cumlogsumexp``, sorting statistics, integer, complex and
float16 arithmetic. Each is exported with ``jax.export`` (pytrees of
arguments flattened as the export orders them), compiled by xhlo and by
``jax.jit``, checked against JAX's result, and timed
(median of ``--repeat`` calls after a warm-up). It prints both run times,
both compile times and their ratios; nothing is asserted about speed, and a
program that fails to compile or to match prints why (exit status 1).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
from bench_ops import Case, run_all

RNG = np.random.default_rng(0)


def _normal(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _ints(low: int, high: int, *shape: int) -> np.ndarray:
    return RNG.integers(low, high, shape).astype(np.int32)


def _program(name: str, fn: Callable, make_args: Callable[[], tuple], rtol: float = 1e-3, atol: float = 1e-4) -> Case:
    """A bench_ops case; whole programs default to a looser relative tolerance."""
    return Case(name, fn, make_args, rtol, atol)


def _programs() -> list[Case]:
    import jax
    import jax.numpy as jnp
    from jax import lax

    def layer_norm(x, gain, bias):
        mean = x.mean(-1, keepdims=True)
        return (x - mean) * lax.rsqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * gain + bias

    def gpt_loss(params, tokens, targets):
        embedding, positions, layers, final_gain, final_bias = params
        x = embedding[tokens] + positions[None, : tokens.shape[1]]
        causal = jnp.tril(jnp.ones((tokens.shape[1],) * 2, bool))
        for w_qkv, w_out, w_up, w_down, g1, b1, g2, b2 in layers:
            q, k, v = jnp.split(layer_norm(x, g1, b1) @ w_qkv, 3, -1)
            heads = lambda t: t.reshape(*t.shape[:2], 4, -1)
            scores = jnp.einsum("bqhd,bkhd->bhqk", heads(q), heads(k)) / np.sqrt(q.shape[-1] // 4)
            probabilities = jax.nn.softmax(jnp.where(causal, scores, -1e9), -1)
            x = x + jnp.einsum("bhqk,bkhd->bqhd", probabilities, heads(v)).reshape(x.shape) @ w_out
            x = x + jax.nn.gelu(layer_norm(x, g2, b2) @ w_up) @ w_down
        logits = layer_norm(x, final_gain, final_bias) @ embedding.T
        return -jnp.take_along_axis(jax.nn.log_softmax(logits), targets[..., None], -1).mean()

    def gpt_adam_step(params, m, v, tokens, targets):
        loss, grads = jax.value_and_grad(gpt_loss)(params, tokens, targets)
        m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
        v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
        return loss, jax.tree.map(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), params, m, v), m, v

    def gpt_args(layers=4, width=256, vocab=1000, length=128, batch=8):
        block = lambda: (_normal(width, 3 * width, scale=0.02), _normal(width, width, scale=0.02),
                         _normal(width, 4 * width, scale=0.02), _normal(4 * width, width, scale=0.02),
                         np.ones(width, np.float32), np.zeros(width, np.float32),
                         np.ones(width, np.float32), np.zeros(width, np.float32))
        params = (_normal(vocab, width, scale=0.02), _normal(length, width, scale=0.02),
                  [block() for _ in range(layers)], np.ones(width, np.float32), np.zeros(width, np.float32))
        zeros = jax.tree.map(np.zeros_like, params)
        return params, zeros, zeros, _ints(0, vocab, batch, length), _ints(0, vocab, batch, length)

    def conv(x, kernel):
        return lax.conv_general_dilated(x, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def batch_norm(x, gain, bias):
        return (x - x.mean((0, 1, 2))) * lax.rsqrt(x.var((0, 1, 2)) + 1e-5) * gain + bias

    def resnet_loss(params, x, labels):
        stem, blocks, classifier = params
        x = jax.nn.relu(conv(x, stem))
        for k1, g1, b1, k2, g2, b2 in blocks:
            x = jax.nn.relu(x + batch_norm(conv(jax.nn.relu(batch_norm(conv(x, k1), g1, b1)), k2), g2, b2))
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(x.mean((1, 2)) @ classifier) * labels, -1))

    def resnet_sgd_step(params, x, labels):
        loss, grads = jax.value_and_grad(resnet_loss)(params, x, labels)
        return loss, jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

    def resnet_args(batch=16, channels=32, blocks=4):
        block = lambda: (_normal(3, 3, channels, channels, scale=0.1), np.ones(channels, np.float32),
                         np.zeros(channels, np.float32), _normal(3, 3, channels, channels, scale=0.1),
                         np.ones(channels, np.float32), np.zeros(channels, np.float32))
        params = (_normal(3, 3, 3, channels, scale=0.1), [block() for _ in range(blocks)], _normal(channels, 10, scale=0.1))
        return params, _normal(batch, 32, 32, 3), np.eye(10, dtype=np.float32)[RNG.integers(0, 10, batch)]

    def vae_loss(params, x, seed):
        w1, w2, w3, w4 = params
        mean, log_var = jnp.split(jax.nn.relu(x @ w1) @ w2, 2, -1)
        z = mean + jnp.exp(0.5 * log_var) * jax.random.normal(jax.random.key(seed), mean.shape)
        reconstruction = jax.nn.sigmoid(jax.nn.relu(z @ w3) @ w4)
        cross_entropy = -jnp.sum(x * jnp.log(reconstruction + 1e-7) + (1 - x) * jnp.log(1 - reconstruction + 1e-7))
        return cross_entropy - 0.5 * jnp.sum(1 + log_var - mean**2 - jnp.exp(log_var))

    def graph_network_grad(x, w, senders, receivers):
        def layer(w):
            summed = jax.ops.segment_sum((x @ w)[senders], receivers, num_segments=x.shape[0])
            degree = jax.ops.segment_sum(jnp.ones_like(receivers, jnp.float32), receivers, num_segments=x.shape[0])
            return jax.nn.relu(summed / jnp.maximum(degree, 1)[:, None]).sum()
        return jax.grad(layer)(w)

    def lstm2_loss(params, xs):
        def cell(h, c, x, w):
            i, f, g, o = jnp.split(jnp.concatenate([x, h], -1) @ w, 4, -1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            return jax.nn.sigmoid(o) * jnp.tanh(c), c

        def step(carry, x):
            h1, c1, h2, c2 = carry
            h1, c1 = cell(h1, c1, x, params[0])
            h2, c2 = cell(h2, c2, h1, params[1])
            return (h1, c1, h2, c2), h2

        zero = jnp.zeros((xs.shape[1], params[0].shape[1] // 4), jnp.float32)
        return (lax.scan(step, (zero,) * 4, xs)[1] ** 2).mean()

    def mixture_of_experts(x, gate, experts):
        weights, chosen = lax.top_k(x @ gate, 2)
        dispatch = jnp.einsum("tke,tk->te", jax.nn.one_hot(chosen, experts.shape[0]), jax.nn.softmax(weights, -1))
        return jnp.einsum("te,td,edf->tf", dispatch, x, experts)

    def gaussian_process(x, y, queries):
        kernel = lambda a, b: jnp.exp(-0.5 * ((a[:, None] - b[None]) ** 2).sum(-1))
        cholesky = jnp.linalg.cholesky(kernel(x, x) + 1e-3 * jnp.eye(x.shape[0]))
        mean = kernel(queries, x) @ jax.scipy.linalg.cho_solve((cholesky, True), y)
        v = jax.scipy.linalg.solve_triangular(cholesky, kernel(x, queries), lower=True)
        return mean, 1.0 - (v**2).sum(0), jnp.log(jnp.diag(cholesky)).sum()

    def rk4_pendulums(y0):
        def f(y):
            return jnp.stack([y[1], -jnp.sin(y[0]) - 0.1 * y[1]])

        def step(_, y):
            k1 = f(y)
            k2 = f(y + 0.005 * k1)
            k3 = f(y + 0.005 * k2)
            k4 = f(y + 0.01 * k3)
            return y + 0.01 / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return jax.vmap(lambda y: lax.fori_loop(0, 1000, step, y))(y0)

    def adaptive_ode(y0):
        def body(state):
            y, t = state
            dt = 0.01 * (1 + 0.1 * jnp.abs(y).max())
            return y + dt * jnp.stack([y[1], -y[0] - 0.1 * y[1] ** 3]), t + dt
        return lax.while_loop(lambda state: state[1] < 5.0, body, (y0, jnp.float32(0.0)))

    def linear_recurrence(a, b):
        return lax.associative_scan(lambda x, y: (x[0] * y[0], y[0] * x[1] + y[1]), (a, b))[1]

    def statistics_of(x):
        bins = jnp.clip((x[:, 1] * 10 + 50).astype(jnp.int32), 0, 99)
        return (jnp.median(x, 0), jnp.quantile(x, jnp.array([0.1, 0.9]), 0), jnp.argsort(x[:, 0]),
                jnp.bincount(bins, length=100), jnp.cumprod(1 + 0.001 * x, 0)[-1])

    def integer_ops(a, b):
        d = jnp.abs(b) + 1
        return (a // d, a % d, jnp.left_shift(a, 3) ^ b, lax.population_count(a),
                (a.astype(jnp.uint32) >> 5).astype(jnp.int32), jnp.clip(a * b, -1000, 1000))

    def complex_ops(z):
        return jnp.abs(jnp.fft.ifft(jnp.fft.fft(z) * jnp.conj(z))), jnp.angle(z), jnp.exp(1j * jnp.real(z)) * z

    def float16_mlp(x, w1, w2):
        half = lambda t: t.astype(jnp.float16)
        return (jax.nn.gelu(half(x) @ half(w1)) @ half(w2)).astype(jnp.float32)

    def deep_mlp_loss(layers, x):  # many small layers: compile time that grows with the program
        for w_up, w_down, gain in layers:
            x = x + jax.nn.gelu(x @ w_up) @ w_down
            x = x * gain / jnp.sqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6)
        return x.sum()

    def deep_mlp_args(depth=24, width=128):
        return ([(_normal(width, 4 * width, scale=0.05), _normal(4 * width, width, scale=0.05),
                  np.ones(width, np.float32)) for _ in range(depth)], _normal(16, width))

    edges = 800
    return [
        _program("GPT-style Adam step (4 layers, 256 wide)", gpt_adam_step, gpt_args, 2e-2, 1e-4),
        _program("ResNet-style SGD step (16x32x32, 4 blocks)", resnet_sgd_step, resnet_args, 1e-2, 1e-4),
        _program("VAE value and grad", jax.value_and_grad(vae_loss),
                lambda: ((_normal(784, 256, scale=0.05), _normal(256, 64, scale=0.05), _normal(32, 256, scale=0.05),
                          _normal(256, 784, scale=0.05)), (RNG.random((64, 784)) > 0.5).astype(np.float32),
                         np.uint32(3)), 1e-2, 1e-3),
        _program("graph network grad (500 nodes)", graph_network_grad,
                lambda: (_normal(500, 64), _normal(64, 64, scale=0.1), _ints(0, 500, edges), _ints(0, 500, edges))),
        _program("2-layer LSTM grad (50 steps)", jax.value_and_grad(lstm2_loss),
                lambda: ((_normal(192, 512, scale=0.1), _normal(256, 512, scale=0.1)), _normal(50, 32, 64, scale=0.1))),
        _program("dot_product_attention causal 2x128x4x32",
                lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True),
                lambda: (_normal(2, 128, 4, 32), _normal(2, 128, 4, 32), _normal(2, 128, 4, 32))),
        _program("mixture of experts top-2 of 8", mixture_of_experts,
                lambda: (_normal(256, 64), _normal(64, 8), _normal(8, 64, 128, scale=0.1))),
        _program("Gaussian process 200 points", gaussian_process, lambda: (_normal(200, 3), _normal(200), _normal(50, 3)),
                5e-2, 1e-3),
        _program("RK4 vmap 4096 x fori_loop 1000", rk4_pendulums, lambda: (_normal(4096, 2),), 1e-3, 1e-4),
        _program("adaptive ODE while_loop", adaptive_ode, lambda: (np.array([1.0, 0.0], np.float32),)),
        _program("associative_scan recurrence 4096x64", linear_recurrence,
                lambda: (RNG.uniform(0.9, 1.0, (4096, 64)).astype(np.float32), _normal(4096, 64)), 1e-2, 1e-3),
        _program("median, quantile, argsort, bincount", statistics_of, lambda: (_normal(1001, 5),)),
        _program("cumlogsumexp grad 64x512", jax.grad(lambda x: lax.cumlogsumexp(x, axis=1).sum()),
                lambda: (_normal(64, 512),)),
        _program("integer arithmetic 10k", integer_ops,
                lambda: (_ints(-10**6, 10**6, 10000), _ints(-1000, 1000, 10000)), 0, 0),
        _program("complex fft and exp 1024", complex_ops,
                lambda: ((_normal(1024) + 1j * _normal(1024)).astype(np.complex64),), 1e-3, 1e-3),
        _program("24-layer MLP value and grad (16x128)", jax.value_and_grad(deep_mlp_loss), deep_mlp_args, 1e-3, 1e-3),
        _program("float16 MLP", float16_mlp, lambda: (_normal(64, 128), _normal(128, 256, scale=0.1),
                                                      _normal(256, 64, scale=0.1)), 1e-2, 1e-2),
    ]


def _median_seconds(call, repeat: int) -> float:
    import jax

    jax.block_until_ready(call())
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        jax.block_until_ready(call())
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _matches(got, want, program: Case) -> bool:
    return len(got) == len(want) and all(
        np.shape(g) == np.shape(w)
        and np.allclose(np.asarray(g).astype(complex), np.asarray(w).astype(complex), rtol=program.rtol, atol=program.atol)
        for g, w in zip(got, want))


def run(program: Case, repeat: int) -> str:
    import jax
    import xhlo
    from jax import export

    args = program.make_args()
    leaves = jax.tree.leaves(args)
    jitted = jax.jit(program.fn)
    start = time.perf_counter()
    compiled = jitted.lower(*args).compile()
    xla_compile = time.perf_counter() - start
    exported = export.export(jitted, platforms=["cpu"])(*args)
    start = time.perf_counter()
    exe = xhlo.compile(exported, cache=False)
    xhlo_compile = time.perf_counter() - start
    got = exe(*leaves)
    status = "ok" if _matches(got if isinstance(got, (list, tuple)) else [got], jax.tree.leaves(compiled(*args)),
                              program) else "MISMATCH"
    xhlo_s = _median_seconds(lambda: exe(*leaves), repeat)
    xla_s = _median_seconds(lambda: compiled(*args), repeat)
    return (f"{program.name:44s} {xhlo_s * 1e3:9.3f} {xla_s * 1e3:9.3f} {xhlo_s / xla_s:6.2f} "
            f"{xhlo_compile * 1e3:8.0f} {xla_compile * 1e3:8.0f} {xhlo_compile / xla_compile:6.2f}  {status}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", default=[], help="programs whose name contains one of these")
    parser.add_argument("--repeat", type=int, default=7, help="timed calls per program (median)")
    args = parser.parse_args()
    print(f"{'program':44s} {'xhlo ms':>9s} {'XLA ms':>9s} {'ratio':>6s} {'xhlo c':>8s} {'XLA c':>8s} {'ratio':>6s}  check")
    return run_all(_programs(), run, args.only, args.repeat, 44)


if __name__ == "__main__":
    sys.exit(main())

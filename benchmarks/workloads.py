"""The benchmark workloads: JAX functions, their inputs, their work and their tolerance.

Each workload is exported with ``jax.export`` and compiled by xhlo, and the
same function runs under ``jax.jit`` (XLA:CPU), so both compilers see the very
same StableHLO. ``flops`` counts the useful floating-point operations of one
call (compute-bound workloads); memory-bound workloads are measured by the
bytes they must move at least: every input read once, every output written once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

F32 = np.float32


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    description: str
    fn: Callable
    make_inputs: Callable[[np.random.Generator], tuple[np.ndarray, ...]]
    flops: float = 0.0  # useful FLOPs per call; 0 = judged by memory traffic
    traffic: float = 0.0  # bytes a call must move, when not all of every input (a gather)
    rtol: float = 1e-5  # check: |xhlo - jax| <= atol + rtol * |jax|, elementwise
    atol: float = 1e-6

    @property
    def compute_bound(self) -> bool:
        return self.flops > 0


def _normal(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(F32)


# -- the functions -----------------------------------------------------------------------------


def gelu_chain(x):
    """tanh-GELU of an affine input: a chain of a dozen elementwise ops."""
    import jax.numpy as jnp

    y = x * 1.5 + 0.25
    inner = 0.7978845608 * (y + 0.044715 * y * y * y)
    return 0.5 * y * (1.0 + jnp.tanh(inner))


def matmul(a, b):
    return a @ b


def mlp(x, w1, b1, w2, b2):
    import jax.numpy as jnp

    return jnp.maximum(x @ w1 + b1, 0.0) @ w2 + b2


def total(x):
    return x.sum()


def softmax(x):
    import jax

    return jax.nn.softmax(x, axis=-1)


def attention(q, k, v):
    import jax
    import jax.numpy as jnp

    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1]).astype(F32)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)


def conv2d(x, w):
    from jax import lax

    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def lstm(xs, h0, c0, w, b):
    """A single-layer LSTM over the leading (time) axis of ``xs`` with ``lax.scan``."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def step(carry, x):
        h, c = carry
        gates = jnp.concatenate([x, h], axis=-1) @ w + b
        i, f, g, o = jnp.split(gates, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h

    (_, c), hs = lax.scan(step, (h0, c0), xs)
    return hs, c


def sort(x):
    import jax.numpy as jnp

    return jnp.sort(x)


def embedding_gather(table, ids):
    return table[ids]


def scatter_add(table, ids, updates):
    return table.at[ids].add(updates)


def cumsum(x):
    import jax.numpy as jnp

    return jnp.cumsum(x)


def argmax(x):
    import jax.numpy as jnp

    return jnp.argmax(x, axis=-1)


# -- whole models: what users run, where layouts and fusions meet ------------------------------


def _layer_norm(x, gain, bias):
    from jax import lax

    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * gain + bias


def transformer_block(x, wq, wk, wv, wo, w1, w2, g1, b1, g2, b2):
    """Pre-LayerNorm causal self-attention and a GELU feed-forward, with residuals."""
    import jax
    import jax.numpy as jnp

    b, s, d = x.shape
    heads = TRANSFORMER_HEADS

    def split(t):
        return t.reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3)

    h = _layer_norm(x, g1, b1)
    q, k, v = split(h @ wq), split(h @ wk), split(h @ wv)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(d // heads).astype(F32)
    scores = jnp.where(jnp.tril(jnp.ones((s, s), bool)), scores, -1e9)
    o = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, -1), v).transpose(0, 2, 1, 3).reshape(b, s, d)
    x = x + o @ wo
    return x + jax.nn.gelu(_layer_norm(x, g2, b2) @ w1) @ w2


def _sgd(loss, params, *data):
    """One SGD step (learning rate 0.01): the loss and the updated parameters."""
    import jax

    value, grads = jax.value_and_grad(loss)(params, *data)
    return (value, *(p - 0.01 * g for p, g in zip(params, grads)))


def _cross_entropy(logits, labels):
    import jax

    return -(jax.nn.log_softmax(logits) * labels).sum(-1).mean()


def mlp_train_step(x, labels, w0, b0, w1, b1, w2, b2, w3):
    """SGD on a 784-1024-1024-512-10 GELU classifier (the gradients' dots, transposes)."""
    import jax

    def loss(params, x, labels):
        h = x
        for w, b in zip(params[0:6:2], params[1:6:2]):
            h = jax.nn.gelu(h @ w + b)
        return _cross_entropy(h @ params[6], labels)

    return _sgd(loss, (w0, b0, w1, b1, w2, b2, w3), x, labels)


def cnn_train_step(x, labels, k0, k1, k2, fc):
    """SGD on three 3x3 convolutions with batch statistics, ReLU and 2x2 max pooling
    (the gradients' convolutions in other layouts, select_and_scatter)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def loss(params, x, labels):
        h = x
        for kernel in params[:3]:
            h = lax.conv_general_dilated(h, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            h = jax.nn.relu((h - h.mean((0, 1, 2))) * lax.rsqrt(h.var((0, 1, 2)) + 1e-5))
            h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return _cross_entropy(h.reshape(h.shape[0], -1) @ params[3], labels)

    return _sgd(loss, (k0, k1, k2, fc), x, labels)


def _one_hot(rng: np.random.Generator, n: int, classes: int) -> np.ndarray:
    return np.eye(classes, dtype=F32)[rng.integers(0, classes, n)]


# -- sizes -------------------------------------------------------------------------------------

LSTM_STEPS, LSTM_BATCH, LSTM_INPUT, LSTM_HIDDEN = 100, 16, 128, 256
VOCAB, EMBED, LOOKUPS = 32768, 256, 16384
ATTN_B, ATTN_H, ATTN_S, ATTN_D = 4, 8, 256, 64
TRANSFORMER_BATCH, TRANSFORMER_SEQ, TRANSFORMER_DIM, TRANSFORMER_HEADS, TRANSFORMER_FF = 8, 128, 256, 4, 1024


def _matmul_workload(n: int) -> Workload:
    return Workload(
        f"matmul_{n}",
        f"[{n},{n}] @ [{n},{n}] f32",
        matmul,
        lambda rng: (_normal(rng, n, n), _normal(rng, n, n)),
        flops=2.0 * n**3,
        rtol=1e-4,
        atol=1e-3,
    )


WORKLOADS: tuple[Workload, ...] = (
    Workload(
        "gelu_chain",
        "tanh-GELU of 1.5x+0.25 on 4M f32",
        gelu_chain,
        lambda rng: (_normal(rng, 4 * 2**20),),
        rtol=1e-5,
        atol=1e-5,
    ),
    _matmul_workload(512),
    _matmul_workload(1024),
    Workload(
        "mlp",
        "relu(x@w1+b1)@w2+b2, x [256,1024], w1 [1024,4096], w2 [4096,1024]",
        mlp,
        lambda rng: (
            _normal(rng, 256, 1024),
            _normal(rng, 1024, 4096, scale=1 / 32),
            _normal(rng, 4096),
            _normal(rng, 4096, 1024, scale=1 / 64),
            _normal(rng, 1024),
        ),
        flops=2.0 * 256 * 1024 * 4096 * 2,
        rtol=1e-4,
        atol=1e-3,
    ),
    Workload(
        "sum_16m",
        "sum of 16M f32 (uniform in [-1, 1))",
        total,
        lambda rng: (rng.uniform(-1, 1, 16 * 2**20).astype(F32),),
        rtol=1e-4,
        atol=0.5,
    ),
    Workload(
        "softmax",
        "softmax over the last axis of [256,4096] f32",
        softmax,
        lambda rng: (_normal(rng, 256, 4096),),
        rtol=1e-4,
        atol=1e-7,
    ),
    Workload(
        "attention",
        f"softmax(q k^T / sqrt(d)) v, B={ATTN_B} H={ATTN_H} S={ATTN_S} D={ATTN_D}",
        attention,
        lambda rng: tuple(_normal(rng, ATTN_B, ATTN_H, ATTN_S, ATTN_D) for _ in range(3)),
        flops=2.0 * 2 * ATTN_B * ATTN_H * ATTN_S * ATTN_S * ATTN_D,
        rtol=1e-4,
        atol=1e-4,
    ),
    Workload(
        "conv2d",
        "NHWC [1,56,56,64] * HWIO [3,3,64,64], SAME",
        conv2d,
        lambda rng: (_normal(rng, 1, 56, 56, 64), _normal(rng, 3, 3, 64, 64, scale=1 / 24)),
        flops=2.0 * 56 * 56 * 64 * 64 * 9,
        rtol=1e-4,
        atol=1e-4,
    ),
    Workload(
        "lstm_scan",
        f"LSTM via lax.scan, {LSTM_STEPS} steps, batch {LSTM_BATCH}, input {LSTM_INPUT}, hidden {LSTM_HIDDEN}",
        lstm,
        lambda rng: (
            _normal(rng, LSTM_STEPS, LSTM_BATCH, LSTM_INPUT),
            _normal(rng, LSTM_BATCH, LSTM_HIDDEN),
            _normal(rng, LSTM_BATCH, LSTM_HIDDEN),
            _normal(rng, LSTM_INPUT + LSTM_HIDDEN, 4 * LSTM_HIDDEN, scale=1 / 20),
            _normal(rng, 4 * LSTM_HIDDEN),
        ),
        flops=2.0 * LSTM_STEPS * LSTM_BATCH * (LSTM_INPUT + LSTM_HIDDEN) * 4 * LSTM_HIDDEN,
        rtol=1e-4,
        atol=1e-4,
    ),
    Workload(
        "sort_1m",
        "sort 1M f32",
        sort,
        lambda rng: (_normal(rng, 2**20),),
        rtol=0.0,
        atol=0.0,
    ),
    Workload(
        "gather",
        f"embedding lookup: {LOOKUPS} rows of a [{VOCAB},{EMBED}] f32 table",
        embedding_gather,
        lambda rng: (_normal(rng, VOCAB, EMBED), rng.integers(0, VOCAB, LOOKUPS, dtype=np.int32)),
        traffic=LOOKUPS * (4 + 2 * EMBED * 4),  # ids, the rows read, the rows written
        rtol=0.0,
        atol=0.0,
    ),
    Workload(
        "scatter_add",
        f"table.at[ids].add(updates): {LOOKUPS} rows into [{VOCAB},{EMBED}] f32",
        scatter_add,
        lambda rng: (
            _normal(rng, VOCAB, EMBED),
            rng.integers(0, VOCAB, LOOKUPS, dtype=np.int32),
            _normal(rng, LOOKUPS, EMBED),
        ),
        rtol=1e-5,
        atol=1e-5,
    ),
    Workload(
        "cumsum_1m",
        "cumsum of 1M f32 in [0, 1) (a 1M-wide reduce_window in JAX's export)",
        cumsum,
        lambda rng: (rng.uniform(0, 1, 2**20).astype(F32),),
        rtol=1e-3,
        atol=1e-3,
    ),
    Workload(
        "argmax",
        "argmax over the last axis of [1024,4096] f32",
        argmax,
        lambda rng: (_normal(rng, 1024, 4096),),
        rtol=0.0,
        atol=0.0,
    ),
    Workload(
        "transformer_block",
        f"pre-LN causal attention + GELU MLP, B={TRANSFORMER_BATCH} S={TRANSFORMER_SEQ} "
        f"D={TRANSFORMER_DIM} H={TRANSFORMER_HEADS} FF={TRANSFORMER_FF}",
        transformer_block,
        lambda rng: (
            _normal(rng, TRANSFORMER_BATCH, TRANSFORMER_SEQ, TRANSFORMER_DIM),
            *(_normal(rng, TRANSFORMER_DIM, TRANSFORMER_DIM, scale=1 / 16) for _ in range(4)),
            _normal(rng, TRANSFORMER_DIM, TRANSFORMER_FF, scale=1 / 16),
            _normal(rng, TRANSFORMER_FF, TRANSFORMER_DIM, scale=1 / 32),
            *(np.ones(TRANSFORMER_DIM, F32), np.zeros(TRANSFORMER_DIM, F32)) * 2,
        ),
        flops=2.0 * TRANSFORMER_BATCH * TRANSFORMER_SEQ * (
            4 * TRANSFORMER_DIM**2 + 2 * TRANSFORMER_DIM * TRANSFORMER_FF + 2 * TRANSFORMER_SEQ * TRANSFORMER_DIM
        ),
        rtol=1e-4,
        atol=1e-4,
    ),
    Workload(
        "mlp_train_step",
        "SGD step of a 784-1024-1024-512-10 GELU MLP, batch 128",
        mlp_train_step,
        lambda rng: (
            _normal(rng, 128, 784),
            _one_hot(rng, 128, 10),
            _normal(rng, 784, 1024, scale=1 / 28), np.zeros(1024, F32),
            _normal(rng, 1024, 1024, scale=1 / 32), np.zeros(1024, F32),
            _normal(rng, 1024, 512, scale=1 / 32), np.zeros(512, F32),
            _normal(rng, 512, 10, scale=1 / 23),
        ),
        flops=3 * 2.0 * 128 * (784 * 1024 + 1024 * 1024 + 1024 * 512 + 512 * 10),  # forward + 2 gradients
        rtol=1e-4,
        atol=1e-5,
    ),
    Workload(
        "cnn_train_step",
        "SGD step of 3 conv(3x3)+batch-norm+ReLU+maxpool layers and a classifier, [32,32,32,3]",
        cnn_train_step,
        lambda rng: (
            _normal(rng, 32, 32, 32, 3),
            _one_hot(rng, 32, 10),
            _normal(rng, 3, 3, 3, 32, scale=1 / 5),
            _normal(rng, 3, 3, 32, 64, scale=1 / 17),
            _normal(rng, 3, 3, 64, 64, scale=1 / 24),
            _normal(rng, 4 * 4 * 64, 10, scale=1 / 32),
        ),
        flops=3 * 2.0 * 32 * 9 * (32 * 32 * 3 * 32 + 16 * 16 * 32 * 64 + 8 * 8 * 64 * 64),
        rtol=1e-4,
        atol=1e-5,
    ),
)

BY_NAME: dict[str, Workload] = {w.name: w for w in WORKLOADS}

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


# -- sizes -------------------------------------------------------------------------------------

LSTM_STEPS, LSTM_BATCH, LSTM_INPUT, LSTM_HIDDEN = 100, 16, 128, 256
VOCAB, EMBED, LOOKUPS = 32768, 256, 16384
ATTN_B, ATTN_H, ATTN_S, ATTN_D = 4, 8, 256, 64


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
)

BY_NAME: dict[str, Workload] = {w.name: w for w in WORKLOADS}

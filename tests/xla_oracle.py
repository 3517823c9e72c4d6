"""XLA:CPU as a test oracle: jaxlib compiles the very StableHLO text xhlo compiles."""

from __future__ import annotations

import numpy as np
import pytest


def xla_cpu(module: str, *args: np.ndarray) -> tuple[np.ndarray, ...]:
    """Results of ``@main(*args)`` compiled and run by XLA:CPU (skips without jax)."""
    jax = pytest.importorskip("jax")
    from jax._src.lib import xla_client

    client = jax.devices("cpu")[0].client
    executable = client.compile_and_load(module, client.devices()[:1], xla_client.CompileOptions())
    with jax.enable_x64(True):  # else 64-bit arguments are narrowed to 32 bits
        results = executable.execute_sharded([jax.device_put(a) for a in args])
        return tuple(np.asarray(shards[0]) for shards in results.disassemble_into_single_device_arrays())

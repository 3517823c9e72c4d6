"""xhlo-prefetch-gathered-rows: row lookups prefetch later iterations' rows, same results.

Each program is exported from JAX and checked bit for bit against numpy; the
loop stage shows whether the rows were prefetched.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import xhlo
from jax import export

RNG = np.random.default_rng(3)


def _compile(fn, *args) -> xhlo.Executable:
    return xhlo.compile(export.export(jax.jit(fn))(*args).mlir_module(), cache=False, keep_ir=True)


def _prefetches(exe: xhlo.Executable) -> int:
    return exe.ir("xhlo-lower-to-loops").count("memref.prefetch")


@pytest.mark.parametrize("lookups", [4096, 3])  # 3: fewer rows than the prefetch distance
def test_embedding_lookup_prefetches_whole_rows(lookups):
    table = RNG.standard_normal((8192, 256)).astype(np.float32)
    ids = RNG.integers(-8192, 8192, lookups, dtype=np.int32)  # negative ids count from the end
    exe = _compile(lambda t, i: t[i], table, ids)
    np.testing.assert_array_equal(exe(table, ids), table[ids])
    assert _prefetches(exe) == 16  # a row of 1 KiB: 16 lines


def test_rows_of_a_rank_3_table():
    table = RNG.standard_normal((2048, 4, 64)).astype(np.float32)
    ids = RNG.integers(0, 2048, 1000, dtype=np.int32)
    exe = _compile(lambda t, i: jnp.take(t, i, axis=0), table, ids)
    np.testing.assert_array_equal(exe(table, ids), table[ids])
    assert _prefetches(exe) == 16


def test_short_rows_are_not_prefetched():
    table = RNG.standard_normal((8192, 16)).astype(np.float32)
    ids = RNG.integers(0, 8192, 4096, dtype=np.int32)
    exe = _compile(lambda t, i: t[i], table, ids)
    np.testing.assert_array_equal(exe(table, ids), table[ids])
    assert _prefetches(exe) == 0


def test_complex_rows_are_copied_exactly():
    """A lookup of complex rows (the pass only counts lines of float and integer rows)."""
    table = (RNG.standard_normal((2048, 256)) + 1j * RNG.standard_normal((2048, 256))).astype(np.complex64)
    ids = RNG.integers(0, 2048, 512, dtype=np.int32)
    exe = _compile(lambda t, i: t[i], table, ids)
    np.testing.assert_array_equal(exe(table, ids), table[ids])

"""xhlo-scratch-arena: temporaries in one caller-owned arena, packed by lifetime.

The packing is checked directly; whole programs check that buffers alive at
the same time never share bytes (results against numpy), that repeated calls
and threads calling one executable at once each see their own arena.
"""

from __future__ import annotations

import threading

import numpy as np
import xhlo
from xhlo.passes.scratch_arena import pack

RNG = np.random.default_rng(5)


def test_pack_reuses_bytes_of_dead_buffers_and_aligns():
    # (size, start, end): 0 dies before 2 starts, 1 overlaps both
    offsets, total = pack([(100, 0, 2), (10, 1, 5), (64, 3, 4)])
    assert offsets == [0, 128, 0]
    assert total == 192
    assert all(o % 64 == 0 for o in offsets)


def test_pack_keeps_overlapping_buffers_apart():
    offsets, total = pack([(64, 0, 10), (64, 1, 10), (64, 2, 10)])
    assert sorted(offsets) == [0, 64, 128] and total == 192


def _chain(n: int) -> str:
    """Temporaries with staggered lifetimes: t1 = a*a, t2 = t1+a, t3 = t2*t1, out = t3-t2."""
    t = f"tensor<{n}xf32>"
    return f"""func.func @main(%a: {t}, %b: {t}) -> ({t}, {t}) {{
  %t1 = stablehlo.multiply %a, %a : {t}
  %r1 = stablehlo.reduce_precision %t1, format = e8m23 : {t}
  %t2 = stablehlo.add %r1, %b : {t}
  %r2 = stablehlo.reduce_precision %t2, format = e8m23 : {t}
  %s = "stablehlo.sort"(%r2) ({{
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }}) {{dimension = 0 : i64}} : ({t}) -> {t}
  %t3 = stablehlo.multiply %s, %r1 : {t}
  %o = stablehlo.subtract %t3, %r2 : {t}
  return %o, %s : {t}, {t}
}}"""


def _expected(a, b):
    t1 = a * a
    t2 = t1 + b
    s = np.sort(t2)
    return s * t1 - t2, s


def test_program_with_live_temporaries_is_right_on_every_call():
    exe = xhlo.compile(_chain(4096))
    assert exe.signature.scratch_bytes > 0
    for _ in range(3):
        a, b = RNG.standard_normal(4096).astype(np.float32), RNG.standard_normal(4096).astype(np.float32)
        got = exe(a, b)
        for g, e in zip(got, _expected(a, b)):
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


def test_threads_calling_one_executable_get_their_own_arena():
    exe = xhlo.compile(_chain(2048))
    inputs = [(RNG.standard_normal(2048).astype(np.float32), RNG.standard_normal(2048).astype(np.float32))
              for _ in range(4)]
    failures = []

    def work(a, b):
        for _ in range(20):
            got = exe(a, b)
            if not all(np.allclose(g, e, rtol=1e-6, atol=1e-6) for g, e in zip(got, _expected(a, b))):
                failures.append(1)

    threads = [threading.Thread(target=work, args=args) for args in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_no_temporaries_no_arena():
    exe = xhlo.compile("""func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %a, %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}""")
    assert exe.signature.scratch_bytes == 0
    np.testing.assert_array_equal(exe(np.arange(8, dtype=np.float32)), 2 * np.arange(8, dtype=np.float32))

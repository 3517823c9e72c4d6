"""xhlo-merge-identical-bodies: loops that differ only in their buffers are compiled once.
Checked against numpy, with the stage IR showing one outlined body where there were two."""

from __future__ import annotations

import numpy as np
import xhlo

# The same elementwise loop over two arguments of one shape: two outlined parallel
# bodies with identical code (each reads its buffers from its own captures).
SRC = """func.func @main(%x: tensor<512x1024xf32>, %y: tensor<512x1024xf32>) -> (tensor<512x1024xf32>, tensor<512x1024xf32>) {
  %tx = stablehlo.tanh %x : tensor<512x1024xf32>
  %ty = stablehlo.tanh %y : tensor<512x1024xf32>
  return %tx, %ty : tensor<512x1024xf32>, tensor<512x1024xf32>
}"""

LOOPS_STAGE = (
    "builtin.module(xhlo-lower-small-gemms, xhlo-gemm-to-blas,"
    " func.func(lower-vector-multi-reduction{lowering-strategy=inner-reduction}),"
    " func.func(lower-vector-mask), func.func(convert-linalg-to-loops), convert-vector-to-scf,"
    " xhlo-parallelize-loops, xhlo-outline-serial-loops, xhlo-hoist-static-allocas{merge})"
)


def _bodies(ir_text: str) -> int:
    return ir_text.count("attributes {xhlo.parallel_body}")


def test_two_identical_loops_share_one_body():
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((512, 1024)).astype(np.float32) for _ in range(2))
    exe = xhlo.compile(SRC, cache=False)
    tx, ty = exe(x, y)
    np.testing.assert_allclose(tx, np.tanh(x), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(ty, np.tanh(y), rtol=2e-6, atol=2e-6)
    assert _bodies(exe.ir("xhlo-lower-to-loops")) == 1


def test_the_pass_is_what_merges_them():
    from xhlo._mlir import ir, new_context
    from xhlo.pipeline import build_pass_manager

    bufferized = xhlo.compile(SRC, cache=False).ir("xhlo-bufferize")
    for merge, expected in [("", 2), (", xhlo-merge-identical-bodies", 1)]:
        with new_context(), ir.Location.unknown():
            module = ir.Module.parse(bufferized)
            build_pass_manager(LOOPS_STAGE.replace("{merge}", merge)).run(module.operation)
            assert _bodies(str(module)) == expected, merge

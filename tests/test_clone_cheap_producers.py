"""xhlo-clone-cheap-producers: a broadcast or a cheap elementwise op read by several ops
is fused into each reader instead of being written out at full size. Checked
against numpy, with the stage IR showing no full-size intermediate left."""

from __future__ import annotations

import numpy as np
import xhlo

# A row (bias) broadcast once and read by a product and a sum, as StableHLO has it
# when a program uses one broadcast value twice.
SRC = """func.func @main(%row: tensor<1024xf32>, %x: tensor<512x1024xf32>) -> (tensor<512x1024xf32>, tensor<512x1024xf32>) {
  %b = stablehlo.broadcast_in_dim %row, dims = [1] : (tensor<1024xf32>) -> tensor<512x1024xf32>
  %m = stablehlo.multiply %x, %b : tensor<512x1024xf32>
  %a = stablehlo.add %x, %b : tensor<512x1024xf32>
  return %m, %a : tensor<512x1024xf32>, tensor<512x1024xf32>
}"""


def _broadcast_loops(ir_text: str) -> int:
    """Generics that only copy a 1024-row into a 512x1024 tensor."""
    return ir_text.count("ins(%arg0 : tensor<1024xf32>) outs(")


def test_broadcast_read_twice_is_fused_into_both_readers():
    rng = np.random.default_rng(0)
    row = rng.standard_normal(1024).astype(np.float32)
    x = rng.standard_normal((512, 1024)).astype(np.float32)
    exe = xhlo.compile(SRC, cache=False)
    product, total = exe(row, x)
    np.testing.assert_array_equal(product, x * row)
    np.testing.assert_array_equal(total, x + row)
    assert _broadcast_loops(exe.ir("xhlo-stablehlo-to-linalg")) == 1
    fused = exe.ir("xhlo-fuse-and-vectorize")
    assert "tensor<1024xf32>" in fused  # each reader reads the row itself
    assert _broadcast_loops(fused) == 0


def test_without_the_pass_the_broadcast_is_written_out():
    """The pass is what removes it: the same pipeline without it keeps a full-size copy."""
    from xhlo._mlir import ir, new_context
    from xhlo.pipeline import build_pass_manager

    linalg = xhlo.compile(SRC, cache=False).ir("xhlo-stablehlo-to-linalg")
    for pipeline, expected in [
        ("builtin.module(func.func(linalg-fuse-elementwise-ops))", 1),
        ("builtin.module(xhlo-clone-cheap-producers, func.func(linalg-fuse-elementwise-ops))", 0),
    ]:
        with new_context(), ir.Location.unknown():
            module = ir.Module.parse(linalg)
            build_pass_manager(pipeline).run(module.operation)
            assert _broadcast_loops(str(module)) == expected, pipeline


# A layer norm's centred input: x - mean is read by the variance (a reduction) and by the
# normalized output (elementwise).
CENTRED = """func.func @main(%x: tensor<256x512xf32>) -> tensor<256x512xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<512.0> : tensor<256xf32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<256x512xf32>, tensor<f32>) -> tensor<256xf32>
  %mean = stablehlo.divide %sum, %n : tensor<256xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<256xf32>) -> tensor<256x512xf32>
  %c = stablehlo.subtract %x, %mb : tensor<256x512xf32>
  %sq = stablehlo.multiply %c, %c : tensor<256x512xf32>
  %ss = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<256x512xf32>, tensor<f32>) -> tensor<256xf32>
  %var = stablehlo.divide %ss, %n : tensor<256xf32>
  %r = stablehlo.rsqrt %var : tensor<256xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<256xf32>) -> tensor<256x512xf32>
  %y = stablehlo.multiply %c, %rb : tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}"""


def test_centred_input_is_recomputed_by_each_reader():
    x = np.random.default_rng(1).standard_normal((256, 512)).astype(np.float32) * 3 + 1
    exe = xhlo.compile(CENTRED, cache=False)
    centred = x.astype(np.float64) - x.mean(1, keepdims=True, dtype=np.float64)
    expected = centred / np.sqrt((centred**2).mean(1, keepdims=True))
    np.testing.assert_allclose(exe(x), expected, rtol=2e-5, atol=2e-5)
    fused = exe.ir("xhlo-fuse-and-vectorize")
    assert fused.count("tensor.empty() : tensor<256x512xf32>") == 1  # the result only

"""xhlo-scalar-transfer-reads: a program reading every other element of an array
into a small contraction compiles (it failed in LLVM translation) and matches numpy."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

# The even elements of each row (a stride-2 slice), contracted over a middle dim:
# the contraction reads one lhs element at a time from the strided view.
SRC = """func.func @main(%x: tensor<3x512xf32>, %w: tensor<16x16xf32>) -> tensor<3x16x16xf32> {
  %p = stablehlo.reshape %x : (tensor<3x512xf32>) -> tensor<3x256x2xf32>
  %e = stablehlo.slice %p [0:3, 0:256, 0:1] : (tensor<3x256x2xf32>) -> tensor<3x256x1xf32>
  %r = stablehlo.reshape %e : (tensor<3x256x1xf32>) -> tensor<3x16x16xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<3x16x16xf32>, tensor<16x16xf32>) -> tensor<3x16x16xf32>
  return %d : tensor<3x16x16xf32>
}"""


def test_strided_one_element_reads_compile_and_match_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 512)).astype(np.float32)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    got = xhlo.compile(SRC, cache=False)(x, w)
    even = x.reshape(3, 256, 2)[:, :, 0].reshape(3, 16, 16).astype(np.float64)
    np.testing.assert_allclose(got, np.einsum("ajk,jl->akl", even, w), rtol=1e-5, atol=1e-5)


def test_without_the_pass_llvm_translation_fails():
    """The failure this pass removes: the same pipeline without it does not translate."""
    from xhlo import pipeline

    stages = [
        pipeline.Stage(s.name, s.description, tuple(p for p in s.passes if p != "xhlo-scalar-transfer-reads"))
        for s in pipeline.STAGES
    ]
    assert sum(len(s.passes) for s in stages) == sum(len(s.passes) for s in pipeline.STAGES) - 1
    from xhlo._mlir import ir, new_context
    from xhlo.llvm_jit import JitProgram

    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(SRC)
        pipeline.build_pass_manager(pipeline.pipeline_text(tuple(stages))).run(module.operation)
        with pytest.raises(Exception, match="LLVM translation failed"):
            JitProgram(module)

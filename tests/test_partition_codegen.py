"""xhlo-partition-codegen + xhlo.llvm_jit: loop bodies compiled on other threads, same results."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import xhlo
from xhlo import llvm_jit
from xhlo._mlir import ir, new_context
from xhlo.errors import CompilerError
from xhlo.passes import partition_codegen

# A softmax over columns: its reductions and divisions stay separate loop nests (a row
# softmax is one row loop since xhlo-fuse-row-reductions), loop bodies enough for three parts.
SOFTMAX = """
func.func @main(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [0]
    : (tensor<256x1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %maxb = stablehlo.broadcast_in_dim %max, dims = [1] : (tensor<1024xf32>) -> tensor<256x1024xf32>
  %shifted = stablehlo.subtract %x, %maxb : tensor<256x1024xf32>
  %e = stablehlo.exponential %shifted : tensor<256x1024xf32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [0]
    : (tensor<256x1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %sumb = stablehlo.broadcast_in_dim %sum, dims = [1] : (tensor<1024xf32>) -> tensor<256x1024xf32>
  %y = stablehlo.divide %e, %sumb : tensor<256x1024xf32>
  return %y : tensor<256x1024xf32>
}
"""


# A softmax over rows: one row loop whose body allocates a row (through xhlo's cache of
# large allocations, which keeps its state in part 0).
ROW_SOFTMAX = SOFTMAX.replace("dimensions = [0]", "dimensions = [1]").replace("dims = [1]", "dims = [0]") \
    .replace("tensor<256x1024xf32>", "tensor<64x4096xf32>").replace("tensor<1024xf32>", "tensor<64xf32>")


def softmax(x: np.ndarray, axis: int = 0) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.fixture
def cores(monkeypatch):
    def use(count: int) -> None:
        monkeypatch.setattr(partition_codegen, "available_cores", lambda: count)

    return use


@pytest.mark.parametrize("count", [1, 2, 3])
def test_parts_compile_apart_and_compute_the_same(cores, count):
    cores(count)
    exe = xhlo.compile(SOFTMAX, cache=False)
    assert exe._engine.num_parts == count
    # each part's engine and machine code were made before compile returned (profile_compile reads them)
    assert len(exe._engine.part_seconds) == count
    assert all(engine > 0 and code > 0 for engine, code in exe._engine.part_seconds)
    x = np.random.default_rng(0).standard_normal((256, 1024)).astype(np.float32) * 4
    np.testing.assert_allclose(exe(x), softmax(x), rtol=2e-5, atol=1e-7)


def test_a_body_calls_part_0s_allocator_through_a_pointer(cores):
    """The row body moves to part 1 although it allocates: its calls of the allocator
    (which stays in part 0 with its cache) go through a pointer the JIT sets."""
    cores(2)
    exe = xhlo.compile(ROW_SOFTMAX, cache=False, keep_ir=True)
    lowered = exe.ir("xhlo-lower-to-llvm")
    assert exe._engine.num_parts == 2 and "@xhlo_call__mlir_memref_to_llvm_alloc_1" in lowered
    x = np.random.default_rng(2).standard_normal((64, 4096)).astype(np.float32) * 4
    for _ in range(3):  # later calls reuse the cached rows
        np.testing.assert_allclose(exe(x), softmax(x, axis=1), rtol=2e-5, atol=1e-7)


def test_pipeline_shows_the_partition(cores):
    cores(2)
    exe = xhlo.compile(SOFTMAX, cache=False, keep_ir=True)
    lowered = exe.ir("xhlo-lower-to-llvm")
    assert "xhlo.codegen_parts = 2" in lowered and "xhlo.link_to" in lowered


RUN = textwrap.dedent("""
    import json, sys
    import numpy as np
    import xhlo
    from xhlo.passes import partition_codegen
    partition_codegen.available_cores = lambda: 2
    exe = xhlo.compile(sys.argv[1], cache_dir=sys.argv[2])
    axis = int(sys.argv[3])
    x = np.random.default_rng(1).standard_normal((256, 1024) if axis == 0 else (64, 4096)).astype(np.float32)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    ok = bool(np.allclose(exe(x), e / e.sum(axis=axis, keepdims=True), rtol=2e-5, atol=1e-7))
    print(json.dumps({"engine": type(exe._engine).__name__, "ok": ok,
                      "parts": getattr(exe._engine, "num_parts", None)}))
""")


@pytest.mark.skipif(shutil.which("ld") is None, reason="the disk cache links object code with ld")
@pytest.mark.parametrize("axis", [0, 1], ids=["columns", "rows: a body calls part 0"])
def test_parts_link_into_one_cached_library(tmp_path, axis):
    runs = []
    program = SOFTMAX if axis == 0 else ROW_SOFTMAX
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", RUN, program, str(tmp_path), str(axis)],
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert runs == [{"engine": "JitProgram", "ok": True, "parts": 2}, {"engine": "LoadedProgram", "ok": True, "parts": None}]
    assert len(list(tmp_path.glob("*.so"))) == 1


# A moved body calls a function nothing defines: its part fails on its own thread.
UNRESOLVED = """
module attributes {xhlo.codegen_parts = 2 : i32} {
  llvm.func @entry() {
    %slot = llvm.mlir.addressof @xhlo_link_body : !llvm.ptr
    %body = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    llvm.return
  }
  llvm.func @body() attributes {xhlo.codegen_part = 1 : i32, xhlo.codegen_needs = [@xhlo_test_nowhere]} {
    llvm.call @xhlo_test_nowhere() : () -> ()
    llvm.return
  }
  llvm.func @xhlo_test_nowhere()
  llvm.mlir.global external @xhlo_link_body() {addr_space = 0 : i32, xhlo.link_to = "body"} : !llvm.ptr {
    %0 = llvm.mlir.zero : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
}
"""


def test_a_part_that_fails_raises_a_compiler_error():
    with new_context() as ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(UNRESOLVED)
        with pytest.raises(CompilerError, match="no machine code for 'body'"):
            llvm_jit.JitProgram(module)


def test_parts_keep_only_what_they_use():
    with new_context() as ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(UNRESOLVED)
        (part0, anchor0), (part1, anchor1) = llvm_jit.split_into_parts(module)
        names = [[ir.StringAttr(op.operation.attributes["sym_name"]).value for op in part.regions[0].blocks[0]]
                 for part in (part0, part1)]
    assert names == [["entry", "xhlo_test_nowhere", "xhlo_link_body"], ["body", "xhlo_test_nowhere"]]
    assert (anchor0, anchor1) == ("entry", "body")

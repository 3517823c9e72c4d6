"""The compile cache: the same program compiles once per process, and once per disk cache.

Disk entries are written and read by separate processes, as a second run of a
program would; each process reports where its Executable came from.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest
import xhlo
from xhlo import cache

SRC = """func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.dot %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = stablehlo.exponential %0 : tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}"""


def test_same_program_and_options_compile_once():
    first = xhlo.compile(SRC)
    assert xhlo.compile(SRC) is first
    assert xhlo.compile(SRC, opt_level=1) is not first
    assert xhlo.compile(SRC, cache=False) is not first
    assert xhlo.compile(SRC.replace("exponential", "tanh")) is not first


def test_key_covers_module_and_settings():
    from xhlo._mlir import ir, new_context

    with new_context():
        a = ir.Module.parse(SRC)
        b = ir.Module.parse(SRC.replace("exponential", "negate"))
        assert cache.compilation_key(a, entry="main") == cache.compilation_key(a, entry="main")
        assert cache.compilation_key(a, entry="main") != cache.compilation_key(b, entry="main")
        assert cache.compilation_key(a, entry="main") != cache.compilation_key(a, entry="other")


RUN = textwrap.dedent("""
    import json, sys
    import numpy as np
    import xhlo
    src, directory = sys.argv[1], sys.argv[2]
    exe = xhlo.compile(src, cache_dir=directory)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((64, 64)).astype(np.float32) / 8 for _ in range(2))
    out = exe(a, b)
    print(json.dumps({"engine": type(exe._engine).__name__, "ok": bool(np.allclose(out, np.exp(a @ b), rtol=1e-4)),
                      "ir": "xhlo-bufferize" in exe.stage_ir}))
""")


@pytest.mark.skipif(shutil.which("ld") is None, reason="the disk cache links object code with ld")
def test_disk_cache_serves_a_second_process(tmp_path):
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", RUN, SRC, str(tmp_path)], capture_output=True, text=True, check=True)
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert runs[0] == {"engine": "JitProgram", "ok": True, "ir": True}
    assert runs[1] == {"engine": "LoadedProgram", "ok": True, "ir": True}
    assert len(list(tmp_path.glob("*.so"))) == 1


def test_checks_survive_the_disk_round_trip(tmp_path):
    src = """func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.constant dense<[1.0, 3.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_eq(%0, %1) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %0 : tensor<2xf32>
}"""
    xhlo.compile(src, cache_dir=str(tmp_path), cache=False)
    loaded = xhlo.compile(src, cache_dir=str(tmp_path), cache=False)
    if shutil.which("ld") is not None:
        assert type(loaded._engine).__name__ == "LoadedProgram"
    with pytest.raises(xhlo.CheckFailure):
        loaded()


def test_signature_json_round_trip():
    sig = xhlo.compile(SRC).signature
    assert cache.signature_from_json(json.loads(json.dumps(cache.signature_to_json(sig)))) == sig

"""xhlo-run: PASS/FAIL lines, totals, exit status, npz in/out, crash isolation."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

PASSING = """func.func @main() -> tensor<2xi32> {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %0 = stablehlo.add %a, %a : tensor<2xi32>
  stablehlo.custom_call @check.expect_eq(%0, %0) {has_side_effect = true} : (tensor<2xi32>, tensor<2xi32>) -> ()
  return %0 : tensor<2xi32>
}"""
FAILING = PASSING.replace("@check.expect_eq(%0, %0)", "@check.expect_eq(%0, %a)")


def run(*args):
    return subprocess.run([sys.executable, "-m", "xhlo.tools.run", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_pass_fail_lines_and_totals(tmp_path):
    good, bad, broken = tmp_path / "good.mlir", tmp_path / "bad.mlir", tmp_path / "broken.mlir"
    good.write_text(PASSING)
    bad.write_text(FAILING)
    broken.write_text("func.func @main( {\n")
    proc = run(good, bad, broken)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert f"PASS {good}" in lines
    assert any(line.startswith(f"FAIL {bad}: ") and "check.expect_eq" in line for line in lines)
    assert any(line.startswith(f"FAIL {broken}: ") and f"{broken}:1:" in line for line in lines)
    assert lines[-1] == "1 passed, 2 failed"
    assert "Traceback" not in proc.stdout + proc.stderr


def test_inputs_and_outputs_npz(tmp_path):
    src = tmp_path / "mul.mlir"
    src.write_text("""func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = stablehlo.multiply %a, %b : tensor<3xf32>
  %1 = stablehlo.add %a, %b : tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}""")
    a, b = np.array([1, 2, 3], np.float32), np.array([4, 5, 6], np.float32)
    np.savez(tmp_path / "in.npz", arg0=a, arg1=b)
    proc = run(src, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["out0"], a * b)
        np.testing.assert_array_equal(out["out1"], a + b)


def test_split_file_runs_every_zero_argument_function(tmp_path):
    path = tmp_path / "split.mlir"
    path.write_text(
        "module {\n  func.func @t1() {\n    %c = stablehlo.constant dense<1> : tensor<i32>\n"
        '    "check.expect_eq_const"(%c) <{value = dense<1> : tensor<i32>}> : (tensor<i32>) -> ()\n'
        "    return\n  }\n}\n// -----\nmodule {\n  func.func @t2() {\n"
        "    %c = stablehlo.constant dense<2> : tensor<i32>\n"
        '    "check.expect_eq_const"(%c) <{value = dense<3> : tensor<i32>}> : (tensor<i32>) -> ()\n'
        "    return\n  }\n}\n"
    )
    proc = run(path)
    assert proc.returncode == 1
    assert "@t2" in proc.stdout and "0 passed, 1 failed" in proc.stdout

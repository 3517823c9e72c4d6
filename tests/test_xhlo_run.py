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


def test_outputs_of_several_functions_are_named_by_function(tmp_path):
    """Each function's results had been out0, out1, ...: later ones overwrote earlier ones.
    The file is the path given (numpy.savez had appended '.npz')."""
    src = tmp_path / "two.mlir"
    src.write_text("""func.func @f() -> (tensor<2xi32>, tensor<2xi32>) {
  %c = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %d = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  return %c, %d : tensor<2xi32>, tensor<2xi32>
}
func.func @g() -> tensor<3xf32> {
  %c = stablehlo.constant dense<[5.0, 6.0, 7.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}""")
    proc = run(src, "--outputs", tmp_path / "out.bin")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with np.load(tmp_path / "out.bin") as out:
        assert sorted(out.files) == ["f_out0", "f_out1", "g_out0"]
        np.testing.assert_array_equal(out["f_out0"], [1, 2])
        np.testing.assert_array_equal(out["g_out0"], [5, 6, 7])


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


RUN_PARALLEL = """module {{
  func.func @sum(%x: tensor<2xi64>) -> (tensor<2xi64>, tensor<ui32>) {{
    %0 = "stablehlo.all_reduce"(%x) ({{
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %s = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %s : tensor<i64>
    }}) {{replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>}} : (tensor<2xi64>) -> tensor<2xi64>
    %id = stablehlo.replica_id : tensor<ui32>
    return %0, %id : tensor<2xi64>, tensor<ui32>
  }}
  func.func @main() {{
    %x0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %x1 = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
    %x2 = stablehlo.constant dense<[100, 200]> : tensor<2xi64>
    %x3 = stablehlo.add %x2, %x2 : tensor<2xi64>
    %r:8 = "interpreter.run_parallel"(%x0, %x1, %x2, %x3) {{programs = [[@{second}], [@sum], [@sum], [@sum]]}}
        : (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>)
        -> (tensor<2xi64>, tensor<ui32>, tensor<2xi64>, tensor<ui32>, tensor<2xi64>, tensor<ui32>, tensor<2xi64>, tensor<ui32>)
    check.expect_eq_const %r#0, dense<[11, 22]> : tensor<2xi64>
    check.expect_eq_const %r#2, dense<[11, 22]> : tensor<2xi64>
    check.expect_eq_const %r#4, dense<[{third}, 600]> : tensor<2xi64>
    check.expect_eq_const %r#7, dense<3> : tensor<ui32>
    func.return
  }}
}}
"""


def test_interpreter_run_parallel(tmp_path):
    """The reference interpreter's collective tests: main's inputs go to one program per
    replica, its checks read their results (4 in-process devices)."""
    good, bad, mpmd = (tmp_path / f"{name}.mlir" for name in ("good", "bad", "mpmd"))
    good.write_text(RUN_PARALLEL.format(second="sum", third=300))
    bad.write_text(RUN_PARALLEL.format(second="sum", third=301))
    mpmd.write_text(RUN_PARALLEL.format(second="main", third=300))
    proc = run(good, bad, mpmd)
    lines = proc.stdout.splitlines()
    assert f"PASS {good}" in lines
    assert any(line.startswith(f"FAIL {bad}: ") and "1 of 2 elements differ" in line for line in lines)
    assert any(line.startswith(f"FAIL {mpmd}: ") and "one program on every device" in line for line in lines)
    assert "Traceback" not in proc.stdout + proc.stderr


def test_bytecode_empty_and_binary_files(tmp_path):
    """An MLIR bytecode file runs like its text; an empty file (nothing run) and a file that
    is neither text nor bytecode FAIL with a reason (the first had PASSed, the second raised)."""
    text, bytecode = tmp_path / "good.mlir", tmp_path / "good.mlirbc"
    text.write_text(PASSING)
    subprocess.run([sys.executable, "-m", "xhlo.tools.opt", str(text), "--emit-bytecode", "-o", str(bytecode)],
                   check=True, timeout=300)
    empty, binary = tmp_path / "empty.mlir", tmp_path / "binary.mlir"
    empty.write_text("")
    binary.write_bytes(bytes(range(256)))
    proc = run(bytecode, empty, binary)
    lines = proc.stdout.splitlines()
    assert f"PASS {bytecode}" in lines
    assert f"FAIL {empty}: {empty}: no function to run" in lines
    assert f"FAIL {binary}: {binary}: neither UTF-8 text nor MLIR bytecode" in lines
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr


def test_inputs_must_be_numbered_from_zero(tmp_path):
    """arg0, arg2 without arg1 (arg2 had silently become the second argument) and per-device
    names without --devices (an int() error had been the message) FAIL with the reason."""
    src = tmp_path / "add.mlir"
    src.write_text("func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {\n"
                   "  %0 = stablehlo.add %x, %y : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n")
    gap, per_device = tmp_path / "gap.npz", tmp_path / "dev.npz"
    np.savez(gap, arg0=np.ones(2, np.float32), arg2=np.ones(2, np.float32))
    np.savez(per_device, arg0_dev0=np.ones(2, np.float32))
    assert "'arg1' is missing" in run(src, "--inputs", gap).stdout
    assert "per-device inputs ('arg0_dev0') need --devices N" in run(src, "--inputs", per_device).stdout
    other = tmp_path / "other.npz"
    np.savez(other, arg0=np.ones(2, np.float32), arg1=np.ones(2, np.float32), args=np.ones(2))
    assert "unknown entry 'args'" in run(src, "--inputs", other).stdout
    padded = tmp_path / "padded.npz"  # arg00 had been a KeyError for 'arg0'
    np.savez(padded, arg00=np.ones(2, np.float32), arg1=np.ones(2, np.float32))
    assert "unknown entry 'arg00'" in run(src, "--inputs", padded).stdout
    assert f"{src}: not an npz archive" in run(src, "--inputs", src).stdout  # not numpy's pickle message
    no_devices = run(src, "--devices", "0")
    assert no_devices.returncode == 2 and "--devices: must be at least 1, got 0" in no_devices.stderr

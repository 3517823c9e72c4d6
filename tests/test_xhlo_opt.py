"""xhlo-opt: the driver in-process, its pass tables, and every compile stage reproduced exactly."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import xhlo
from xhlo import pipeline as pl
from xhlo._mlir import new_context, passmanager
from xhlo.passes import REGISTRY
from xhlo.tools import opt
from xhlo.source import MLIR_BYTECODE_MAGIC
from xhlo.tools.diagnostic_verifier import Diag, parse_expectations, verify
from xhlo.tools.upstream_passes import UPSTREAM_PASSES, discover_registered_passes

ADD = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""

# No check.* ops, so xhlo.compile runs exactly the STAGES (no xhlo-expose-checks first).
# Control flow, a reduction, a dot, unsigned integers, libm math and a value
# returned twice: every stage has work to do.
STAGED_PROGRAM = """func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x2xf32>, %n: tensor<i32>, %u: tensor<4xui8>)
    -> (tensor<2x2xf32>, tensor<3xf32>, tensor<i32>, tensor<4xui8>, tensor<4xui8>) {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %e = stablehlo.exponential_minus_one %x : tensor<2x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  %loop = stablehlo.while(%i = %n) : tensor<i32>
   cond {
    %limit = stablehlo.constant dense<100> : tensor<i32>
    %less = stablehlo.compare LT, %i, %limit : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %less : tensor<i1>
  } do {
    %twice = stablehlo.add %i, %i : tensor<i32>
    stablehlo.return %twice : tensor<i32>
  }
  %sum = stablehlo.add %u, %u : tensor<4xui8>
  %tan = chlo.tan %d : tensor<2x2xf32> -> tensor<2x2xf32>
  return %tan, %r, %loop, %sum, %sum : tensor<2x2xf32>, tensor<3xf32>, tensor<i32>, tensor<4xui8>, tensor<4xui8>
}
"""


def run_opt(*args) -> int:
    return opt.main([str(a) for a in args])


@pytest.fixture
def add_file(tmp_path):
    path = tmp_path / "add.mlir"
    path.write_text(ADD)
    return path


# -- the driver, in-process ------------------------------------------------------------


def test_round_trip_to_output_file(add_file, tmp_path, capsys):
    out = tmp_path / "out.mlir"
    assert run_opt(add_file, "-o", out) == 0
    assert capsys.readouterr().out == ""
    text = out.read_text()
    assert "stablehlo.add %arg0, %arg0 : tensor<2xf32>" in text
    assert text.startswith("module {") and text.endswith("}\n")


def test_named_stage_flag_and_pipeline_give_the_same_ir(add_file, tmp_path):
    by_flag, by_pipeline = tmp_path / "flag.mlir", tmp_path / "pipeline.mlir"
    assert run_opt(add_file, "--xhlo-stablehlo-to-linalg", "-o", by_flag) == 0
    assert (
        run_opt(add_file, "-p", "builtin.module(xhlo-stablehlo-to-linalg)", "-o", by_pipeline) == 0
    )
    assert by_flag.read_text() == by_pipeline.read_text()
    assert "linalg.generic" in by_flag.read_text()
    assert "stablehlo." not in by_flag.read_text()


def test_flags_run_in_command_line_order(add_file, tmp_path, capsys):
    args = [
        add_file,
        "--cse",
        "-p",
        "builtin.module(symbol-dce,xhlo-check-lowered{dialects=chlo})",
        "--canonicalize",
        "--xhlo-emit-c-interface",
        "--dump-pass-pipeline",
        "-o",
        tmp_path / "o",
    ]
    assert run_opt(*args) == 0
    dumped = capsys.readouterr().err
    order = ["cse", "symbol-dce", "xhlo-check-lowered", "canonicalize", "xhlo-emit-c-interface"]
    positions = [dumped.index(name) for name in order]
    assert positions == sorted(positions), dumped


def test_compile_pipeline_flag_expands_to_every_stage():
    assert opt.expand_compile_pipeline(["cse", opt.COMPILE_PIPELINE]) == [
        "cse",
        *(stage.name for stage in pl.STAGES),
    ]


def test_split_input_file_joins_chunks_and_keeps_going(tmp_path, capsys):
    path = tmp_path / "split.mlir"
    path.write_text(
        ADD + "// -----\nfunc.func @broken( {\n// -----\n" + ADD.replace("@main", "@again")
    )
    assert run_opt(path, "--split-input-file") == 1
    captured = capsys.readouterr()
    chunks = captured.out.split("// -----\n")
    assert len(chunks) == 2
    assert "@main" in chunks[0] and "@again" in chunks[1]
    assert f"{path}:6:" in captured.err  # the broken chunk's line in the whole file


def test_errors_exit_1_with_file_line_col(tmp_path, capsys):
    path = tmp_path / "abs.mlir"
    path.write_text(ADD.replace("stablehlo.add %a, %a", "stablehlo.abs %a"))
    assert run_opt(path, "--xhlo-check-lowered") == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"{path}:2:8: error: xhlo-check-lowered: xhlo cannot lower 'stablehlo.abs'"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--no-such-pass"], "unknown command line argument '--no-such-pass'"),
        (["-p", "builtin.module(no-such-pass)"], "unknown pass 'no-such-pass' in the pass pipeline"),
        (["--canonicalize=bogus=1"], "no such option bogus"),
        (["--xhlo-check-lowered=bogus=1"], "has no option 'bogus'"),
        (["-p", "builtin.module(func.func(cse)"], "unbalanced parentheses"),
        (["--verify-diagnostics=maybe"], "'all' or 'only-expected'"),
        (["-o"], "-o needs a value"),
    ],
)
def test_bad_command_lines_exit_1_without_traceback(add_file, capsys, args, message):
    assert run_opt(add_file, *args) == 1
    err = capsys.readouterr().err
    assert err.startswith("xhlo-opt: error: ") and message in err
    assert "Traceback" not in err


def test_verify_diagnostics_passes_and_fails(tmp_path, capsys):
    good, bad = tmp_path / "good.mlir", tmp_path / "bad.mlir"
    good.write_text(
        "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  // expected-error@+1 {{cannot lower 'stablehlo.abs'}}\n"
        "  %0 = stablehlo.abs %a : tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n}\n"
    )
    bad.write_text(good.read_text().replace("@+1", "@+2"))
    assert run_opt(good, "--verify-diagnostics", "--xhlo-check-lowered") == 0
    assert run_opt(bad, "--verify-diagnostics", "--xhlo-check-lowered") == 1
    err = capsys.readouterr().err
    assert f"{bad}:3:8: error: unexpected error: xhlo-check-lowered" in err
    assert (
        f"{bad}:2:6: error: expected error \"cannot lower 'stablehlo.abs'\" was not produced" in err
    )


def test_emit_bytecode_round_trip(add_file, tmp_path):
    bytecode, text = tmp_path / "add.mlirbc", tmp_path / "back.mlir"
    assert run_opt(add_file, "--emit-bytecode", "-o", bytecode) == 0
    assert bytecode.read_bytes().startswith(MLIR_BYTECODE_MAGIC)
    assert run_opt(bytecode, "-o", text) == 0
    assert run_opt(add_file, "-o", tmp_path / "direct.mlir") == 0
    assert text.read_text() == (tmp_path / "direct.mlir").read_text()


def test_print_ir_after_named_xhlo_pass_only(add_file, capfd):
    assert (
        run_opt(
            add_file,
            "--cse",
            "--xhlo-legalize-control-flow",
            "--canonicalize",
            "--mlir-print-ir-after=xhlo-legalize-control-flow",
        )
        == 0
    )
    err = capfd.readouterr().err
    assert err.count("// -----// IR Dump") == 1
    assert (
        "// -----// IR Dump After xhlo-legalize-control-flow: xhlo-legalize-control-flow //----- //"
        in err
    )


def test_unregistered_dialects_need_the_flag(tmp_path, capsys):
    path = tmp_path / "check.mlir"
    path.write_text('func.func @f() {\n  "check.nothing"() : () -> ()\n  return\n}\n')
    assert run_opt(path) == 1
    assert "unregistered dialect" in capsys.readouterr().err
    assert run_opt(path, "--allow-unregistered-dialect") == 0
    assert '"check.nothing"() : () -> ()' in capsys.readouterr().out


def test_console_script_exit_status_and_stdin(add_file):
    """The installed entry point: stdin input, status 1 and a one-line error for a bad flag."""
    command = [sys.executable, "-m", "xhlo.tools.opt"]
    ok = subprocess.run(
        [*command, "-", "--canonicalize"],
        input=ADD,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert "stablehlo.add" in ok.stdout
    bad = subprocess.run(
        [*command, str(add_file), "--bogus"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert bad.returncode == 1
    assert bad.stderr.startswith("xhlo-opt: error: unknown command line argument '--bogus'")
    assert "Traceback" not in bad.stderr


# -- pass tables -----------------------------------------------------------------------


def test_help_lists_every_pass_and_stage(capsys):
    assert run_opt("--help") == 0
    out = capsys.readouterr().out
    names = [*UPSTREAM_PASSES, *REGISTRY, *(s.name for s in pl.STAGES), opt.COMPILE_PIPELINE]
    missing = [n for n in names if f"  --{n} " not in out and f"  --{n}\n" not in out]
    assert not missing
    for name, description in UPSTREAM_PASSES.items():
        assert description in out, name


def test_every_listed_upstream_pass_is_registered():
    with new_context():
        for name in UPSTREAM_PASSES:
            passmanager.PassManager("any").add(name)  # raises ValueError if unknown


def test_upstream_table_matches_what_the_provider_registers():
    """A provider upgrade that adds or drops passes must update the --help table."""
    registered = discover_registered_passes()
    assert sorted(registered - set(UPSTREAM_PASSES)) == []
    assert sorted(set(UPSTREAM_PASSES) - registered) == []


# -- the diagnostic verifier -------------------------------------------------------------


def test_expectation_designators():
    lines = [
        "op_a",  # 1
        "// expected-remark@below {{r1}}",  # 2
        "// expected-warning@below {{w1}}",  # 3
        "op_b",  # 4
        "// expected-note@above {{n1}}",  # 5
        "op_c // expected-error {{same line}}",  # 6
        "// expected-error@-5 {{minus}}",  # 7
        "// expected-error@unknown {{nowhere}}",  # 8
    ]
    source = "\n".join(lines)
    found = {e.text: e.line for e in parse_expectations(source)}
    assert found == {"r1": 4, "w1": 4, "n1": 4, "same line": 6, "minus": 2, "nowhere": None}


def _diag(severity, message, line=None, notes=()):
    location = f'loc("f.mlir":{line}:1)' if line else "loc(unknown)"
    return Diag(severity, message, location, tuple(notes))


def test_verify_matches_severity_line_and_substring():
    source = (
        "x // expected-warning {{careful}}\n"
        "y // expected-error-re {{value {{[0-9]+}} is {{(bad|worse)}}}}\n"
        "// expected-remark@unknown {{somewhere}}\n"
    )
    diags = [
        _diag("warning", "be careful here", 1),
        _diag(
            "error", "value 12 is worse", 2, notes=[_diag("note", "see current operation: y", 2)]
        ),
        _diag("remark", "somewhere else", None),
    ]
    assert verify(diags, parse_expectations(source), "f.mlir") == []


def test_verify_reports_both_sides_of_a_mismatch():
    source = "x // expected-warning {{careful}}\n"
    problems = verify([_diag("error", "careful", 1)], parse_expectations(source), "f.mlir")
    assert problems == [
        "f.mlir:1:1: error: unexpected error: careful",
        'f.mlir:1:6: error: expected warning "careful" was not produced',
    ]
    only = verify(
        [_diag("error", "other", 1)], parse_expectations(""), "f.mlir", only_expected=True
    )
    assert only == []


# -- every compile stage, reproduced with xhlo-opt -------------------------------------------


@pytest.fixture(scope="module")
def compiled():
    exe = xhlo.compile(STAGED_PROGRAM, keep_ir=True)
    # The program really runs: the stages we compare are the ones that work.
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    w = np.ones((3, 2), np.float32)
    u = np.array([1, 2, 200, 255], np.uint8)
    tan, r, loop, s1, s2 = exe(x, w, np.int32(3), u)
    np.testing.assert_allclose(tan, np.tan(x @ w), rtol=1e-5)
    np.testing.assert_allclose(r, np.expm1(x).sum(axis=0), rtol=1e-6)
    assert int(loop) == 192
    np.testing.assert_array_equal(s1, u + u)
    np.testing.assert_array_equal(s2, u + u)
    return exe


@pytest.mark.parametrize("index", range(len(pl.STAGES)), ids=[s.name for s in pl.STAGES])
def test_each_stage_reproduces_compile_ir(compiled, tmp_path, index):
    stage = pl.STAGES[index]
    previous = compiled.ir(pl.STAGES[index - 1].name if index else "input")
    source = tmp_path / "previous.mlir"
    source.write_text(previous)
    by_flag, by_pipeline = tmp_path / "flag.mlir", tmp_path / "pipeline.mlir"
    assert run_opt(source, f"--{stage.name}", "-o", by_flag) == 0
    assert run_opt(source, "-p", f"builtin.module({stage.name})", "-o", by_pipeline) == 0
    assert by_flag.read_text() == compiled.ir(stage.name)
    assert by_pipeline.read_text() == compiled.ir(stage.name)


def test_whole_pipeline_reproduces_compile_ir(compiled, tmp_path):
    source = tmp_path / "input.mlir"
    source.write_text(compiled.ir("input"))
    whole, textual = tmp_path / "whole.mlir", tmp_path / "text.mlir"
    assert run_opt(source, f"--{opt.COMPILE_PIPELINE}", "-o", whole) == 0
    assert run_opt(source, "--pass-pipeline", xhlo.pipeline_text(), "-o", textual) == 0
    assert whole.read_text() == compiled.ir(pl.STAGES[-1].name)
    assert textual.read_text() == compiled.ir(pl.STAGES[-1].name)

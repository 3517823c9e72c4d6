"""Bad input gets a clear error naming the op, the location and what was expected."""

from __future__ import annotations

import dataclasses
import sys
import types

import numpy as np
import pytest

import xhlo
from xhlo import pipeline as pl
from xhlo._mlir import ir
from xhlo.passes import REGISTRY
from xhlo.passes.base import ModulePass

from .conftest import binary_module

ADD = binary_module("add", "2x3x", "f32")


def test_malformed_mlir_names_file_line_col(tmp_path):
    path = tmp_path / "broken.mlir"
    path.write_text("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.frobnicate %a\n}\n")
    with pytest.raises(xhlo.CompilerError) as info:
        xhlo.compile(path)
    assert f"{path}:2:" in str(info.value)
    assert "frobnicate" in str(info.value)


def test_verifier_failure_names_op():
    src = """func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}"""
    with pytest.raises(xhlo.CompilerError) as info:
        xhlo.compile(src, filename="bad.mlir")
    assert "bad.mlir:2:" in str(info.value) and "stablehlo.add" in str(info.value)


def test_unknown_custom_call_is_a_compile_error():
    src = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @my_kernel(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}"""
    with pytest.raises(xhlo.CompilerError) as info:
        xhlo.compile(src, filename="cc.mlir")
    assert "my_kernel" in str(info.value) and "cc.mlir:2:" in str(info.value)


@pytest.mark.parametrize(
    "args,expected",
    [
        ((np.zeros((2, 3), np.float32),), "takes 2 argument"),
        ((np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)), "argument 1 of main: expected shape (2, 3)"),
        ((np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float64)), "argument 1 of main: expected dtype float32"),
    ],
)
def test_wrong_arguments_raise_value_error(args, expected):
    exe = xhlo.compile(ADD)
    with pytest.raises(ValueError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        exe(*args)


def test_ml_dtypes_arrays_of_another_type_are_rejected():
    """Only raw bytes (``V2``, as npz files keep bf16) take the argument's type; a bf16
    array passed for f16 had been reinterpreted bit for bit."""
    import ml_dtypes

    exe = xhlo.compile("func.func @main(%x: tensor<2xf16>) -> tensor<2xf16> {\n  return %x : tensor<2xf16>\n}")
    with pytest.raises(ValueError, match="argument 0 of main: expected dtype float16 .*got bfloat16"):
        exe(np.array([1, 2], ml_dtypes.bfloat16))
    raw = np.array([1, 2], np.float16).view("V2")
    np.testing.assert_array_equal(exe(raw), [1, 2])


@pytest.mark.parametrize("arg,dtype", [(1.9, "int32"), (2**40, "int32"), (1j, "float32"), (2, "bool"),
                                       (1e39, "float32")])
def test_python_numbers_must_fit_the_argument(arg, dtype):
    """A Python number takes the argument's type only if it holds it (1.9 had become 1)."""
    exe = xhlo.compile("func.func @main(%i: tensor<i32>, %f: tensor<f32>, %b: tensor<i1>) -> tensor<i32> {\n"
                       "  return %i : tensor<i32>\n}")
    args = {"int32": [arg, 1.0, True], "float32": [1, arg, True], "bool": [1, 1.0, arg]}[dtype]
    with pytest.raises(ValueError, match=f"does not fit {dtype}"):
        exe(*args)
    assert exe(3, 0.1, False) == 3


def test_bad_device_counts_timeouts_and_bytes():
    """Device counts must be integers of at least 1 and timeouts positive seconds (a string
    timeout had hung a run whose device waited for a peer); bytes that are neither text
    nor bytecode are a CompilerError, not a UnicodeDecodeError."""
    for count in ("2", 2.5, True, 0):
        with pytest.raises(ValueError, match="num_replicas must be an integer of at least 1"):
            xhlo.compile(ADD, num_replicas=count)
    for seconds in ("5", 0, float("nan"), -1):
        with pytest.raises(ValueError, match="collective_timeout must be a positive number of seconds"):
            xhlo.compile(ADD, collective_timeout=seconds)
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        xhlo.compile(ADD).run_replicated([(np.zeros((2, 3), np.float32),) * 2], timeout="5")
    with pytest.raises(ValueError, match="no public function 'nope'"):  # once, not per device
        xhlo.compile(ADD).run_replicated([(np.zeros((2, 3), np.float32),) * 2], entry="nope")
    with pytest.raises(xhlo.CompilerError, match="neither UTF-8 text nor MLIR bytecode"):
        xhlo.compile(b"\xff\xfe not mlir")


def test_missing_entry():
    with pytest.raises(ValueError, match="no public function 'forward'"):
        xhlo.compile(ADD, entry="forward")


def test_unlowerable_op_is_named(monkeypatch):
    """An op no pattern lowers is reported by name and location, not 'not bufferized'."""
    src = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.batch_norm_inference"(%a, %a, %a, %a, %a) {epsilon = 1.0e-3 : f32, feature_index = 0 : i64} : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}"""
    try:
        exe = xhlo.compile(src)
    except xhlo.CompilerError as err:
        assert "stablehlo.batch_norm_inference" in str(err)
    else:  # once a lowering exists, the result must be right
        a = np.array([1.0, 2.0], np.float32)
        np.testing.assert_allclose(exe(a), (a - a) * a / np.sqrt(a + 1e-3) + a, rtol=1e-6)


class _BreakSignature(ModulePass):
    """Test pass: gives @main a signature its body does not have (invalid IR)."""

    NAME = "xhlo-test-break-signature"

    def run(self, module):
        for op in module.regions[0].blocks[0].operations:
            if op.operation.name == "func.func":
                no_arguments = ir.FunctionType.get([], [])
                op.operation.attributes["function_type"] = ir.TypeAttr.get(no_arguments)


@pytest.mark.parametrize("verify_each", [False, True])
def test_invalid_ir_from_a_pass_names_its_stage(monkeypatch, verify_each):
    """Without verify_each the module is still verified after every stage: a pass that
    breaks the IR fails the compile in its own stage, with a reproducer."""
    module = types.ModuleType("xhlo.passes._test_break_signature")
    module.BreakSignature = _BreakSignature
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(REGISTRY, _BreakSignature.NAME, "_test_break_signature:BreakSignature")
    broken = dataclasses.replace(pl.STAGES[1], passes=(*pl.STAGES[1].passes, _BreakSignature.NAME))
    monkeypatch.setattr(pl, "STAGES", (pl.STAGES[0], broken, *pl.STAGES[2:]))
    with pytest.raises(xhlo.CompilerError) as info:
        xhlo.compile(ADD, cache=False, verify_each=verify_each)
    assert info.value.stage == broken.name
    assert "entry block" in str(info.value) and "xhlo-opt" in info.value.reproducer

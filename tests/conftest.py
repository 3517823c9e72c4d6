"""Shared fixtures: a module factory and the path of the conformance corpus."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

# Tests verify the IR after every pass (compiles default to once per stage): a pass
# that breaks the IR fails where it does so.
os.environ.setdefault("XHLO_VERIFY_EACH", "1")

REPO = Path(__file__).resolve().parent.parent
CONFORMANCE = REPO.parent / "shared" / "conformance" / "testdata"


@pytest.fixture(autouse=True)
def no_leaked_contexts():
    """Every test must release the MLIR contexts it created (catches leaks early)."""
    yield
    gc.collect()


def unary_module(op: str, shape: str, elem: str, result_elem: str | None = None) -> str:
    """``@main(%a) = stablehlo.<op> %a``."""
    t = f"tensor<{shape}{elem}>"
    r = f"tensor<{shape}{result_elem or elem}>"
    return f"""func.func @main(%a: {t}) -> {r} {{
  %0 = stablehlo.{op} %a : ({t}) -> {r}
  return %0 : {r}
}}"""


def binary_module(op: str, shape: str, elem: str) -> str:
    """``@main(%a, %b) = stablehlo.<op> %a, %b``."""
    t = f"tensor<{shape}{elem}>"
    return f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = stablehlo.{op} %a, %b : {t}
  return %0 : {t}
}}"""

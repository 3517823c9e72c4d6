"""Shared fixtures: a module factory and the path of the conformance corpus."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
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


def counted_loop_body(t: str, steps: int, body: str) -> str:
    """A function body running ``body`` ``steps`` times on ``%x: t``: in it ``%i`` is the
    step (tensor<i32>) and ``%v`` the carried value; it defines ``%y``, the next value."""
    return f"""  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<{steps}> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, {t}
   cond {{
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
{body}
    %j = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %j, %y : tensor<i32>, {t}
  }}
  return %r#1 : {t}"""


def run_in_child(code: str, *args: str) -> None:
    """Run ``code`` with ``args`` in a fresh Python process and require it to succeed: for
    cases that once aborted the process (an LLVM or lowering crash), so a regression is a
    failed test with the child's stderr, not a dead test session."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def load_from_disk_cache(source, directory: Path):
    """``source`` compiled into the disk cache at ``directory``, then compiled again with an
    empty memory cache: the Executable loaded from disk (skips when no linker makes one)."""
    import xhlo
    from xhlo import cache

    cache.clear_memory()
    xhlo.compile(source, cache_dir=str(directory))
    if not list(Path(directory).glob("*.so")):
        pytest.skip("no linker: no disk cache")
    cache.clear_memory()
    loaded = xhlo.compile(source, cache_dir=str(directory))
    assert type(loaded._engine).__name__ == "LoadedProgram"
    return loaded

"""scripts/jax_harnesses.py (a CI step) on a few of JAX's harnesses: its oracles work.

The whole run is in .ci/run; here argmax (exact indices), eig (eigenvalues as a
multiset, eigenvectors by residual) and an unstable multi-operand sort.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "jax_harnesses.py"


@pytest.mark.parametrize("only", ["argmax_dtypes", "eig_shape_float32_5_5", "sort_multiple_arrays"])
def test_harness_subsets_pass(only):
    done = subprocess.run([sys.executable, str(SCRIPT), "--only", only], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert " 0 failed" in summary and not summary.startswith("0 passed"), summary

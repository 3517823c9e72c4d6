"""Every Python example in README.md runs (the builder, JAX and API examples)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, tmp_path, monkeypatch):
    code = BLOCKS[index]
    if "import jax" in code:
        pytest.importorskip("jax")
        pytest.importorskip("flatbuffers")
    monkeypatch.chdir(tmp_path)  # examples may write files
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README.md block {index}", "exec"), {})  # noqa: S102
    assert out.getvalue(), "every README example prints its result"


def test_builder_example_computes_a_softmax():
    code = next(b for b in BLOCKS if "XlaBuilder" in b)
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "README.md builder example", "exec"), namespace)  # noqa: S102
    import numpy as np

    x = np.array([[1, 2, 3], [0, 0, 0]], np.float32)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(namespace["exe"](x), e / e.sum(1, keepdims=True), rtol=1e-6)

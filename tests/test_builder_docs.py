"""The builder example of docs/builder.md runs and prints a row-wise softmax."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "builder.md"


def test_docs_example_runs():
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL).group(1)
    out = io.StringIO()
    namespace: dict = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), namespace)  # noqa: S102
    import numpy as np

    x = np.array([[1, 2, 3], [0, 0, 0]], np.float32)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(namespace["exe"](x), e / e.sum(1, keepdims=True), rtol=1e-6)
    assert "stablehlo.reduce" in out.getvalue()

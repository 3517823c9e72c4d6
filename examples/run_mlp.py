"""Compile examples/mlp.mlir with xhlo, run it on numpy arrays, compare with numpy."""

from pathlib import Path

import numpy as np

import xhlo

exe = xhlo.compile(Path(__file__).with_name("mlp.mlir"))
rng = np.random.default_rng(0)
x, w1, b1, w2 = (rng.standard_normal(s).astype(np.float32) for s in [(8, 16), (16, 32), (32,), (32, 4)])
y = exe(x, w1, b1, w2)
expected = np.maximum(x @ w1 + b1, 0) @ w2
np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
print("mlp output[0]:", y[0])
print("matches numpy: yes")

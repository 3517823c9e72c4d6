"""xhlo-stack-small-buffers: a while loop's per-iteration temporaries live on the stack."""

from __future__ import annotations

import numpy as np
import xhlo

# y' = y + dt * [y1, -y0 - 0.1 y1^3], dt = 0.01 (1 + 0.1 max|y|), until t reaches 5
ODE = """
func.func @main(%start: tensor<2xf32>) -> (tensor<2xf32>, tensor<f32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r:2 = stablehlo.while(%y = %start, %t = %zero) : tensor<2xf32>, tensor<f32>
  cond {
    %end = stablehlo.constant dense<5.0> : tensor<f32>
    %go = stablehlo.compare LT, %t, %end, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %go : tensor<i1>
  } do {
    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %one = stablehlo.constant dense<1.0> : tensor<f32>
    %tenth = stablehlo.constant dense<0.1> : tensor<f32>
    %hundredth = stablehlo.constant dense<0.01> : tensor<f32>
    %abs = stablehlo.abs %y : tensor<2xf32>
    %max = stablehlo.reduce(%abs init: %ninf) applies stablehlo.maximum across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
    %scaled = stablehlo.multiply %tenth, %max : tensor<f32>
    %factor = stablehlo.add %one, %scaled : tensor<f32>
    %dt = stablehlo.multiply %hundredth, %factor : tensor<f32>
    %y1s = stablehlo.slice %y [1:2] : (tensor<2xf32>) -> tensor<1xf32>
    %y1 = stablehlo.reshape %y1s : (tensor<1xf32>) -> tensor<f32>
    %firsts = stablehlo.slice %y [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %first = stablehlo.reshape %firsts : (tensor<1xf32>) -> tensor<f32>
    %neg = stablehlo.negate %first : tensor<f32>
    %sq = stablehlo.multiply %y1, %y1 : tensor<f32>
    %cube = stablehlo.multiply %sq, %y1 : tensor<f32>
    %damp = stablehlo.multiply %tenth, %cube : tensor<f32>
    %acc = stablehlo.subtract %neg, %damp : tensor<f32>
    %a = stablehlo.broadcast_in_dim %y1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %b = stablehlo.broadcast_in_dim %acc, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %dy = stablehlo.concatenate %a, %b, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
    %dts = stablehlo.broadcast_in_dim %dt, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %step = stablehlo.multiply %dts, %dy : tensor<2xf32>
    %next = stablehlo.add %y, %step : tensor<2xf32>
    %later = stablehlo.add %t, %dt : tensor<f32>
    stablehlo.return %next, %later : tensor<2xf32>, tensor<f32>
  }
  return %r#0, %r#1 : tensor<2xf32>, tensor<f32>
}
"""


def _ode_in_numpy(y: np.ndarray) -> tuple[np.ndarray, np.float32]:
    f32 = np.float32
    t = f32(0)
    while t < f32(5):
        dt = f32(0.01) * (f32(1) + f32(0.1) * np.abs(y).max())
        dy = np.array([y[1], -y[0] - f32(0.1) * (y[1] * y[1] * y[1])], np.float32)
        y, t = y + dt * dy, t + dt
    return y, t


def test_while_loop_temporaries_on_the_stack():
    exe = xhlo.compile(ODE, cache=False, keep_ir=True)
    before, loop = exe.ir("xhlo-lower-to-loops").split("scf.while")
    # hoisted to the entry: the reduction's and the scalars' buffers; the loop still copies
    # its carried state (made in one iteration, freed in the next)
    assert before.count("memref.alloca") >= 3 and loop.count("memref.alloc()") <= 2
    y0 = np.array([1.0, 0.0], np.float32)
    y, t = exe(y0)
    want_y, want_t = _ode_in_numpy(y0)
    np.testing.assert_allclose(y, want_y, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(t, want_t, rtol=1e-5)
    for _ in range(3):  # the hoisted stack buffers serve every call
        np.testing.assert_array_equal(exe(y0)[0], y)

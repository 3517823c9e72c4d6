"""xhlo-hoist-static-allocas: a staged vector transfer in a deep loop nest no longer overflows the stack.

JAX's gradient of a per-channel mean over a 32x32x32x32 activation (batch-norm
style: ``sum(x * g, (0, 1, 2))`` reshaped to ``1x1x1xC`` and summed again)
fuses into a reduction whose inputs are read through a permuted transfer that
``convert-vector-to-scf`` stages in a stack buffer inside the 32x32x32 loop
nest. Each iteration took 256 bytes of stack that were freed only on return:
8 MiB, and the process died with SIGSEGV. The run happens in a child process,
so a regression fails this test instead of ending the test session.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

MODULE = """func.func @main(%a: tensor<32x32x32x32xf32>, %b: tensor<32x32x32x32xf32>, %v: tensor<32x32x32x32xf32>) -> tensor<32x32x32x32xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.multiply %a, %b : tensor<32x32x32x32xf32>
  %s = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<32x32x32x32xf32>, tensor<f32>) -> tensor<32xf32>
  %r = stablehlo.reshape %s : (tensor<32xf32>) -> tensor<1x1x1x32xf32>
  %t = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
  %c = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<32xf32>) -> tensor<32x32x32x32xf32>
  %y = stablehlo.multiply %c, %v : tensor<32x32x32x32xf32>
  return %y : tensor<32x32x32x32xf32>
}"""

CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    import xhlo

    exe = xhlo.compile(sys.stdin.read())
    rng = np.random.default_rng(0)
    a, b, v = (rng.standard_normal((32, 32, 32, 32)).astype(np.float32) for _ in range(3))
    expected = (a.astype(np.float64) * b).sum((0, 1, 2)) * v
    np.testing.assert_allclose(exe(a, b, v), expected, rtol=1e-4, atol=1e-2)
    """
)


def test_reduction_through_unit_dims_of_a_large_activation():
    run = subprocess.run([sys.executable, "-c", CHILD], input=MODULE, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-2000:]}"

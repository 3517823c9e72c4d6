"""xhlo-fold-identity-ops: ops whose result type is their operand's, on every element type.

A rank-0 unsigned reshape crashed the process in the upstream linalg lowering
(a reduce over no dimensions of a uint64 scalar made one), so each case runs in
a child process. Oracle: the operand itself (numpy).
"""

from __future__ import annotations

import pytest

from .conftest import run_in_child

CHILD = """
import sys
import numpy as np, xhlo

elem, dtype, shape = sys.argv[1], np.dtype(sys.argv[2]), tuple(int(d) for d in sys.argv[3:])
t = "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"
dims = ", ".join(map(str, range(len(shape))))
module = f'''func.func @main(%a: {t}) -> ({t}, {t}, {t}, {t}) {{
  %0 = stablehlo.reshape %a : ({t}) -> {t}
  %1 = stablehlo.transpose %a, dims = [{dims}] : ({t}) -> {t}
  %2 = stablehlo.broadcast_in_dim %a, dims = [{dims}] : ({t}) -> {t}
  %3 = stablehlo.convert %a : ({t}) -> {t}
  %zero = stablehlo.constant dense<0> : tensor<{elem}>
  %4 = stablehlo.reduce(%3 init: %zero) applies stablehlo.add across dimensions = [] : ({t}, tensor<{elem}>) -> {t}
  return %0, %1, %2, %4 : {t}, {t}, {t}, {t}
}}'''
a = np.arange(1, 1 + int(np.prod(shape)), dtype=dtype).reshape(shape)
exe = xhlo.compile(module, cache=False)
assert "stablehlo.reshape" not in exe.ir("xhlo-stablehlo-prepare")
for result in exe(a):
    np.testing.assert_array_equal(result, a)
"""


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
@pytest.mark.parametrize("elem,dtype", [("ui64", "uint64"), ("ui8", "uint8"), ("i32", "int32")])
def test_identity_ops_of_every_rank_and_signedness(elem, dtype, shape):
    run_in_child(CHILD, elem, dtype, *map(str, shape))

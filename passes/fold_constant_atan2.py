"""xhlo-fold-constant-atan2: ``atan2`` of two constants, computed as IEEE 754 defines it.

MLIR's folder for ``math.atan2`` returns NaN for ``atan2(0, 0)`` (the function
is 0 or +-pi there), and it runs on every ``stablehlo.atan2`` whose operands
are constants once the linalg lowering makes it a ``math.atan2``: the inputs of
a conformance program are constants, and such a program computed NaN where
JAX gives 0. This pass folds those ``atan2`` ops first, with numpy (float64,
rounded once to the element type), which follows IEEE for signed zeros,
infinities and NaN.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, defining_op, walk_ops

_NUMPY = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def _values(value: ir.Value) -> np.ndarray | None:
    """The elements of a ``stablehlo.constant`` of a numpy float type, else None."""
    constant = defining_op(value, "stablehlo.constant")
    dtype = _NUMPY.get(str(sh.element_type(value)))
    if constant is None or dtype is None:
        return None
    attr = ir.DenseFPElementsAttr(constant.attributes["value"])
    if attr.is_splat:
        return np.full(sh.shape_of(value), ir.FloatAttr(attr.get_splat_value()).value, dtype)
    return np.array(attr, dtype).reshape(sh.shape_of(value))


@dataclasses.dataclass(frozen=True)
class FoldConstantAtan2(ModulePass):
    """Fold stablehlo.atan2 of two float constants with numpy's IEEE arctan2."""

    NAME = "xhlo-fold-constant-atan2"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, "stablehlo.atan2"):
            y, x = (_values(v) for v in op.operands)
            if y is None or x is None:
                continue
            folded = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(y.dtype)
            with ir.InsertionPoint(op), op.location:
                value = sh.constant_array(folded, sh.element_type(op.results[0]))
            op.results[0].replace_all_uses_with(value)
            op.erase()

"""A Python XlaBuilder that emits StableHLO (``from xhlo import builder as xb``).

``xb.XlaBuilder`` records typed ops (``xb.ops.Add``, ``xb.ops.Reduce``... as in
XLA's operation semantics), checking shapes as they are built;
``builder.build()`` gives an ``XlaComputation`` whose ``as_stablehlo_text()``
``xhlo.compile`` accepts. ``xb.Shape``/``xb.Layout`` model XLA shapes and
memory layouts, including tiling, with numpy conversion to physical buffers.
"""

from . import ops
from .builder import ProgramShape, XlaBuilder, XlaComputation, XlaOp, current_builder
from .linalg import (
    ConvolutionDimensionNumbers,
    DotDimensionNumbers,
    FftType,
    Padding,
    RaggedDotDimensionNumbers,
    RandomAlgorithm,
    make_convolution_dimension_numbers,
)
from .gather_scatter import GatherDimensionNumbers, ScatterDimensionNumbers
from .shape import (
    Layout,
    PrimitiveType,
    Shape,
    buffer_size,
    from_physical,
    linear_index,
    physical_dimensions,
    to_physical,
)
from .tensor_iterator import TensorIteratorInput, TensorIteratorOutput

__all__ = [
    "ConvolutionDimensionNumbers",
    "DotDimensionNumbers",
    "FftType",
    "GatherDimensionNumbers",
    "Layout",
    "Padding",
    "PrimitiveType",
    "ProgramShape",
    "RaggedDotDimensionNumbers",
    "RandomAlgorithm",
    "ScatterDimensionNumbers",
    "Shape",
    "TensorIteratorInput",
    "TensorIteratorOutput",
    "XlaBuilder",
    "XlaComputation",
    "XlaOp",
    "buffer_size",
    "current_builder",
    "from_physical",
    "linear_index",
    "make_convolution_dimension_numbers",
    "ops",
    "physical_dimensions",
    "to_physical",
]

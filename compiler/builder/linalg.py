"""Contractions, convolutions, FFT, factorizations, batch norm and random numbers.

Part of ``xb.ops`` (re-exported there); same conventions: shapes are checked and
inferred here, the StableHLO (or CHLO / composite) op is emitted later.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from . import shape as shp
from ._support import (
    array,
    bool_attr,
    check_dimensions,
    dense_i64_matrix,
    dims_list,
    dims_text,
    emit_constant,
    i64_attr,
    precision_attr,
    precision_list,
    resolve_builder,
    same_element_type,
    single_op,
)
from .builder import XlaOp
from .shape import Shape

__all__ = [
    "BatchNormGrad",
    "BatchNormInference",
    "BatchNormTraining",
    "Cholesky",
    "Conv",
    "ConvGeneral",
    "ConvGeneralDilated",
    "ConvWithGeneralDimensions",
    "ConvWithGeneralPadding",
    "ConvolutionDimensionNumbers",
    "Dot",
    "DotDimensionNumbers",
    "DotGeneral",
    "Fft",
    "FftType",
    "Padding",
    "RaggedDot",
    "RaggedDotDimensionNumbers",
    "RandomAlgorithm",
    "RngBitGenerator",
    "RngNormal",
    "RngUniform",
    "ScaledDot",
    "Transpose_",
    "TriangularSolve",
    "make_convolution_dimension_numbers",
]


class Padding:
    """Window padding kinds of Conv/ReduceWindow/SelectAndScatter."""

    SAME = kSame = "SAME"
    VALID = kValid = "VALID"


class FftType:
    FFT, IFFT, RFFT, IRFFT = "FFT", "IFFT", "RFFT", "IRFFT"


class RandomAlgorithm:
    RNG_DEFAULT, RNG_THREE_FRY, RNG_PHILOX = "DEFAULT", "THREE_FRY", "PHILOX"


class Transpose_:
    NO_TRANSPOSE, TRANSPOSE, ADJOINT = "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"


def _enum_name(value) -> str:
    return str(getattr(value, "name", value)).upper()


# -- dot ---------------------------------------------------------------------------


class DotDimensionNumbers:
    def __init__(
        self,
        lhs_contracting_dimensions=(),
        rhs_contracting_dimensions=(),
        lhs_batch_dimensions=(),
        rhs_batch_dimensions=(),
    ):
        self.lhs_contracting_dimensions = [int(d) for d in lhs_contracting_dimensions]
        self.rhs_contracting_dimensions = [int(d) for d in rhs_contracting_dimensions]
        self.lhs_batch_dimensions = [int(d) for d in lhs_batch_dimensions]
        self.rhs_batch_dimensions = [int(d) for d in rhs_batch_dimensions]

    @staticmethod
    def of(value) -> DotDimensionNumbers:
        """From itself, a dict, or jax's ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``."""
        if isinstance(value, DotDimensionNumbers):
            return value
        if isinstance(value, dict):
            return DotDimensionNumbers(**value)
        if hasattr(value, "lhs_contracting_dimensions"):
            return DotDimensionNumbers(
                value.lhs_contracting_dimensions,
                value.rhs_contracting_dimensions,
                value.lhs_batch_dimensions,
                value.rhs_batch_dimensions,
            )
        (lc, rc), (lb, rb) = value
        return DotDimensionNumbers(lc, rc, lb, rb)

    def attr(self) -> ir.Attribute:
        return ir.Attribute.parse(
            f"#stablehlo.dot<lhs_batching_dimensions = {dims_text(self.lhs_batch_dimensions)}, "
            f"rhs_batching_dimensions = {dims_text(self.rhs_batch_dimensions)}, "
            f"lhs_contracting_dimensions = {dims_text(self.lhs_contracting_dimensions)}, "
            f"rhs_contracting_dimensions = {dims_text(self.rhs_contracting_dimensions)}>"
        )


def _result_type(op_name: str, lhs: XlaOp, rhs: XlaOp, preferred_element_type) -> str:
    if preferred_element_type is None:
        return same_element_type(op_name, lhs, rhs)
    preferred = shp.element_type_name(preferred_element_type)
    operands = [x.shape.element_type() for x in (lhs, rhs)]
    integers = shp.is_integer(preferred) and all(shp.is_integer(t) for t in operands)
    if integers and shp.bit_width(preferred) < max(shp.bit_width(t) for t in operands):
        raise ValueError(f"{op_name}: preferred_element_type {preferred} is narrower than the operands "
                         f"{lhs.shape} and {rhs.shape}")
    return preferred


def _dot_shape(
    op_name: str, ls: Shape, rs: Shape, dn: DotDimensionNumbers, rhs_skip: Sequence[int] = ()
) -> list[int]:
    """Result dims (batch, lhs free, rhs free) after checking the dimension numbers."""
    lc = check_dimensions(
        op_name, dn.lhs_contracting_dimensions, ls.rank(), "lhs contracting dimension", ls
    )
    rc = check_dimensions(
        op_name, dn.rhs_contracting_dimensions, rs.rank(), "rhs contracting dimension", rs
    )
    lb = check_dimensions(op_name, dn.lhs_batch_dimensions, ls.rank(), "lhs batch dimension", ls)
    rb = check_dimensions(op_name, dn.rhs_batch_dimensions, rs.rank(), "rhs batch dimension", rs)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ValueError(
            f"{op_name}: lhs and rhs need as many contracting and batch dimensions, got {vars(dn)}"
        )
    if set(lc) & set(lb) or set(rc) & set(rb):
        raise ValueError(f"{op_name}: a dimension cannot be both batch and contracting: {vars(dn)}")
    for kind, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        for a, b in zip(ld, rd):
            if ls.dimensions()[a] != rs.dimensions()[b]:
                raise ValueError(
                    f"{op_name}: {kind} dimension {a} of lhs {ls} and {b} of rhs {rs} differ in size"
                )
    lfree = [d for d in range(ls.rank()) if d not in lc and d not in lb]
    rfree = [d for d in range(rs.rank()) if d not in rc and d not in rb and d not in rhs_skip]
    return (
        [ls.dimensions()[d] for d in lb]
        + [ls.dimensions()[d] for d in lfree]
        + [rs.dimensions()[d] for d in rfree]
    )


def DotGeneral(
    lhs, rhs, dimension_numbers, precision_config=None, preferred_element_type=None
) -> XlaOp:
    """Sum of products over contracting dims; result dims: batch, lhs free, rhs free."""
    ls, rs = array("DotGeneral", lhs, "lhs"), array("DotGeneral", rhs, "rhs")
    dn = DotDimensionNumbers.of(dimension_numbers)
    t = _result_type("DotGeneral", lhs, rhs, preferred_element_type)
    dims = _dot_shape("DotGeneral", ls, rs, dn)
    precision = precision_list("DotGeneral", precision_config)
    out = Shape(t, dims)
    return single_op(
        "DotGeneral",
        "stablehlo.dot_general",
        out,
        [lhs, rhs],
        lambda: {"dot_dimension_numbers": dn.attr(), "precision_config": precision_attr(precision)},
    )


def Dot(lhs, rhs, precision_config=None, preferred_element_type=None) -> XlaOp:
    """Vector/matrix products: contracts the last dim of lhs with the first of rhs."""
    ls, rs = array("Dot", lhs, "lhs"), array("Dot", rhs, "rhs")
    if not (1 <= ls.rank() <= 2 and 1 <= rs.rank() <= 2):
        raise ValueError(f"Dot: operands must be vectors or matrices, got {ls} and {rs}")
    if ls.dimensions()[-1] != rs.dimensions()[0]:
        raise ValueError(f"Dot: contracted dimensions of {ls} and {rs} differ in size")
    op = DotGeneral(
        lhs,
        rhs,
        DotDimensionNumbers([ls.rank() - 1], [0]),
        precision_config,
        preferred_element_type,
    )
    op.op_name = "Dot"
    return op


class RaggedDotDimensionNumbers:
    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions=()):
        self.dot_dimension_numbers = DotDimensionNumbers.of(dot_dimension_numbers)
        self.lhs_ragged_dimensions = [int(d) for d in lhs_ragged_dimensions]
        self.rhs_group_dimensions = [int(d) for d in rhs_group_dimensions]


def RaggedDot(
    lhs, rhs, group_sizes, dimension_numbers, precision_config=None, preferred_element_type=None
) -> XlaOp:
    """``chlo.ragged_dot``: a dot whose ragged lhs dimension is split into groups
    of ``group_sizes`` consecutive indices (non-contracting ragged dim: rhs has a
    group dim; contracting: the result gets a leading group dim; batch: plain)."""
    ls, rs = array("RaggedDot", lhs, "lhs"), array("RaggedDot", rhs, "rhs")
    gs = array("RaggedDot", group_sizes, "group_sizes")
    if not shp.is_integer(gs.element_type()) or gs.rank() < 1:
        raise TypeError(f"RaggedDot: group_sizes must be an integer array, got {gs}")
    rdn = (
        dimension_numbers
        if isinstance(dimension_numbers, RaggedDotDimensionNumbers)
        else RaggedDotDimensionNumbers(**dimension_numbers)
    )
    dn = rdn.dot_dimension_numbers
    if len(rdn.lhs_ragged_dimensions) != 1:
        raise ValueError(
            f"RaggedDot: exactly one lhs ragged dimension expected, got {rdn.lhs_ragged_dimensions}"
        )
    (ragged,) = check_dimensions(
        "RaggedDot", rdn.lhs_ragged_dimensions, ls.rank(), "lhs ragged dimension", ls
    )
    group = check_dimensions(
        "RaggedDot", rdn.rhs_group_dimensions, rs.rank(), "rhs group dimension", rs
    )
    g = gs.dimensions()[-1]
    dims = _dot_shape("RaggedDot", ls, rs, dn, group)
    if ragged in dn.lhs_contracting_dimensions or ragged in dn.lhs_batch_dimensions:
        if group:
            raise ValueError(
                "RaggedDot: a contracting or batch ragged dimension takes no rhs group dimension"
            )
        if ragged in dn.lhs_contracting_dimensions:
            dims = [g] + dims
    else:
        if len(group) != 1:
            raise ValueError(
                "RaggedDot: a non-contracting ragged dimension needs one rhs group dimension"
            )
        if rs.dimensions()[group[0]] != g:
            raise ValueError(
                f"RaggedDot: rhs group dimension of {rs} must have size {g} (groups in {gs})"
            )
    t = _result_type("RaggedDot", lhs, rhs, preferred_element_type)
    precision = precision_list("RaggedDot", precision_config) or ["DEFAULT", "DEFAULT"]
    out = Shape(t, dims)

    def attrs():
        text = (
            f"#chlo.ragged_dot<lhs_batching_dimensions = {dims_text(dn.lhs_batch_dimensions)}, "
            f"rhs_batching_dimensions = {dims_text(dn.rhs_batch_dimensions)}, "
            f"lhs_contracting_dimensions = {dims_text(dn.lhs_contracting_dimensions)}, "
            f"rhs_contracting_dimensions = {dims_text(dn.rhs_contracting_dimensions)}, "
            f"lhs_ragged_dimensions = [{ragged}], rhs_group_dimensions = {dims_text(group)}>"
        )
        return {
            "ragged_dot_dimension_numbers": ir.Attribute.parse(text),
            "precision_config": precision_attr(precision, "chlo"),
        }

    return single_op("RaggedDot", "chlo.ragged_dot", out, [lhs, rhs, group_sizes], attrs)


def _expand_scale(
    op_name: str, scale: XlaOp, operand_shape: Shape, contracting: Sequence[int]
) -> XlaOp:
    """Broadcast every scale element over its block of the operand."""
    from .ops import BroadcastInDim, Reshape

    ss = array(op_name, scale, "scale")
    if ss.rank() != operand_shape.rank():
        raise ValueError(f"{op_name}: scale {ss} must have the rank of its operand {operand_shape}")
    target, mapping = [], []
    for d, (s, n) in enumerate(zip(ss.dimensions(), operand_shape.dimensions())):
        mapping.append(len(target))
        target.append(s)
        if s == n:
            continue
        if d not in contracting or s == 0 or n % s or n // s < 2:
            raise ValueError(
                f"{op_name}: scale {ss} must match {operand_shape} except on contracting dims, "
                "where it divides the operand size (block >= 2)"
            )
        target.append(n // s)
    if len(target) == ss.rank():
        return scale
    return Reshape(BroadcastInDim(scale, target, mapping), operand_shape.dimensions())


def ScaledDot(
    lhs,
    lhs_scale,
    rhs,
    rhs_scale,
    dimension_number,
    precision_config=None,
    preferred_element_type=None,
) -> XlaOp:
    """DotGeneral of block-scaled operands, as the composite ``xla.scaled_dot``
    (decomposition: scale broadcast over blocks, bf16 multiply, dot_general)."""
    from .builder import XlaBuilder as _Builder
    from .ops import CompositeCall, ConvertElementType, Mul, Parameter

    ls, rs = array("ScaledDot", lhs, "lhs"), array("ScaledDot", rhs, "rhs")
    lss, rss = (
        array("ScaledDot", lhs_scale, "lhs_scale"),
        array("ScaledDot", rhs_scale, "rhs_scale"),
    )
    dn = DotDimensionNumbers.of(dimension_number)
    _dot_shape("ScaledDot", ls, rs, dn)
    result_type = (
        shp.element_type_name(preferred_element_type)
        if preferred_element_type is not None
        else "bf16"
    )
    precision = precision_list("ScaledDot", precision_config)

    sub = _Builder("xla.scaled_dot")
    pl, pr, pls, prs = (Parameter(sub, i, s) for i, s in enumerate((ls, rs, lss, rss)))
    with sub:
        a = Mul(
            ConvertElementType(pl, "bf16"),
            ConvertElementType(
                _expand_scale("ScaledDot", pls, ls, dn.lhs_contracting_dimensions), "bf16"
            ),
        )
        b = Mul(
            ConvertElementType(pr, "bf16"),
            ConvertElementType(
                _expand_scale("ScaledDot", prs, rs, dn.rhs_contracting_dimensions), "bf16"
            ),
        )
        DotGeneral(a, b, dn, precision, result_type)
    decomposition = sub.build()

    def attributes() -> dict:  # built lazily, inside the MLIR context
        return {
            "lhs_contracting_dimensions": sh.dense_i64(dn.lhs_contracting_dimensions),
            "rhs_contracting_dimensions": sh.dense_i64(dn.rhs_contracting_dimensions),
            "lhs_batch_dimensions": sh.dense_i64(dn.lhs_batch_dimensions),
            "rhs_batch_dimensions": sh.dense_i64(dn.rhs_batch_dimensions),
            "preferred_element_type": ir.TypeAttr.get(
                ir.Type.parse(shp.mlir_element_type(result_type))
            ),
        }

    op = CompositeCall(
        decomposition, [lhs, rhs, lhs_scale, rhs_scale], "xla.scaled_dot", attributes, 0
    )
    op.op_name = "ScaledDot"
    return op


# -- convolution -------------------------------------------------------------------


class ConvolutionDimensionNumbers:
    def __init__(
        self,
        input_batch_dimension=0,
        input_feature_dimension=1,
        input_spatial_dimensions=(2, 3),
        kernel_input_feature_dimension=1,
        kernel_output_feature_dimension=0,
        kernel_spatial_dimensions=(2, 3),
        output_batch_dimension=0,
        output_feature_dimension=1,
        output_spatial_dimensions=(2, 3),
    ):
        self.input_batch_dimension = int(input_batch_dimension)
        self.input_feature_dimension = int(input_feature_dimension)
        self.input_spatial_dimensions = [int(d) for d in input_spatial_dimensions]
        self.kernel_input_feature_dimension = int(kernel_input_feature_dimension)
        self.kernel_output_feature_dimension = int(kernel_output_feature_dimension)
        self.kernel_spatial_dimensions = [int(d) for d in kernel_spatial_dimensions]
        self.output_batch_dimension = int(output_batch_dimension)
        self.output_feature_dimension = int(output_feature_dimension)
        self.output_spatial_dimensions = [int(d) for d in output_spatial_dimensions]

    @staticmethod
    def default(num_spatial: int) -> ConvolutionDimensionNumbers:
        spatial = list(range(2, 2 + num_spatial))
        return ConvolutionDimensionNumbers(0, 1, spatial, 1, 0, spatial, 0, 1, spatial)

    def attr(self) -> ir.Attribute:
        return ir.Attribute.parse(
            "#stablehlo.conv<raw "
            f"input_batch_dimension = {self.input_batch_dimension}, input_feature_dimension = {self.input_feature_dimension}, "
            f"input_spatial_dimensions = {dims_text(self.input_spatial_dimensions)}, "
            f"kernel_input_feature_dimension = {self.kernel_input_feature_dimension}, "
            f"kernel_output_feature_dimension = {self.kernel_output_feature_dimension}, "
            f"kernel_spatial_dimensions = {dims_text(self.kernel_spatial_dimensions)}, "
            f"output_batch_dimension = {self.output_batch_dimension}, output_feature_dimension = {self.output_feature_dimension}, "
            f"output_spatial_dimensions = {dims_text(self.output_spatial_dimensions)}>"
        )


def make_convolution_dimension_numbers(
    dimension_numbers, num_spatial_dimensions: int
) -> ConvolutionDimensionNumbers:
    """From layout strings like ``("NCHW", "OIHW", "NCHW")`` (N/C batch/feature,
    O/I kernel output/input feature, other letters spatial in order)."""
    if isinstance(dimension_numbers, ConvolutionDimensionNumbers):
        return dimension_numbers
    if dimension_numbers is None:
        return ConvolutionDimensionNumbers.default(num_spatial_dimensions)
    lhs, rhs, out = dimension_numbers
    for spec, letters in ((lhs, "NC"), (rhs, "OI"), (out, "NC")):
        if len(spec) != num_spatial_dimensions + 2 or any(c not in spec for c in letters):
            raise ValueError(
                f"convolution layout {spec!r} must have {num_spatial_dimensions + 2} letters including {letters}"
            )
    lhs_spatial = [i for i, c in enumerate(lhs) if c not in "NC"]
    spatial_letters = [lhs[i] for i in lhs_spatial]
    rhs_spatial = [
        rhs.index(c) if c in rhs else i
        for c, i in zip(spatial_letters, [j for j, c in enumerate(rhs) if c not in "OI"])
    ]
    out_spatial = [
        out.index(c) if c in out else i
        for c, i in zip(spatial_letters, [j for j, c in enumerate(out) if c not in "NC"])
    ]
    return ConvolutionDimensionNumbers(
        lhs.index("N"),
        lhs.index("C"),
        lhs_spatial,
        rhs.index("I"),
        rhs.index("O"),
        rhs_spatial,
        out.index("N"),
        out.index("C"),
        out_spatial,
    )


def ConvGeneralDilated(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision_config=None,
    preferred_element_type=None,
    window_reversal=None,
) -> XlaOp:
    """``stablehlo.convolution`` with explicit padding (or SAME/VALID), dilations and dimension numbers."""
    op_name = "ConvGeneralDilated"
    ls, rs = array(op_name, lhs, "lhs"), array(op_name, rhs, "rhs")
    n = ls.rank() - 2
    if n < 0 or rs.rank() != ls.rank():
        raise ValueError(f"{op_name}: lhs {ls} and rhs {rs} must have the same rank >= 2")
    dn = make_convolution_dimension_numbers(dimension_numbers, n)
    for what, dims in (
        (
            "input",
            [dn.input_batch_dimension, dn.input_feature_dimension, *dn.input_spatial_dimensions],
        ),
        (
            "kernel",
            [
                dn.kernel_output_feature_dimension,
                dn.kernel_input_feature_dimension,
                *dn.kernel_spatial_dimensions,
            ],
        ),
        (
            "output",
            [dn.output_batch_dimension, dn.output_feature_dimension, *dn.output_spatial_dimensions],
        ),
    ):
        if sorted(dims) != list(range(n + 2)):
            raise ValueError(
                f"{op_name}: {what} dimension numbers {dims} must be a permutation of 0..{n + 1}"
            )
    strides = (
        dims_list(op_name, window_strides, "window_strides")
        if window_strides is not None
        else [1] * n
    )
    ldil = dims_list(op_name, lhs_dilation, "lhs_dilation") if lhs_dilation else [1] * n
    rdil = dims_list(op_name, rhs_dilation, "rhs_dilation") if rhs_dilation else [1] * n
    for what, v in (("window_strides", strides), ("lhs_dilation", ldil), ("rhs_dilation", rdil)):
        if len(v) != n or any(x < 1 for x in v):
            raise ValueError(f"{op_name}: {what} {v} needs {n} positive entries")
    reversal = [bool(v) for v in window_reversal] if window_reversal is not None else [False] * n
    if len(reversal) != n:
        raise ValueError(f"{op_name}: window_reversal {reversal} needs {n} entries (one per spatial dimension)")
    spatial = [ls.dimensions()[d] for d in dn.input_spatial_dimensions]
    kernel = [rs.dimensions()[d] for d in dn.kernel_spatial_dimensions]
    from .computations import _window_output, _window_padding

    pads = _window_padding(op_name, padding, spatial, kernel, strides, ldil, rdil)
    batch, feature = (
        ls.dimensions()[dn.input_batch_dimension],
        ls.dimensions()[dn.input_feature_dimension],
    )
    kin, kout = (
        rs.dimensions()[dn.kernel_input_feature_dimension],
        rs.dimensions()[dn.kernel_output_feature_dimension],
    )
    fgc, bgc = int(feature_group_count), int(batch_group_count)
    if fgc < 1 or bgc < 1 or (fgc > 1 and bgc > 1):
        raise ValueError(
            f"{op_name}: feature_group_count {fgc} / batch_group_count {bgc} must be >= 1, not both > 1"
        )
    if feature != kin * fgc:
        raise ValueError(
            f"{op_name}: input features {feature} of {ls} must equal kernel input features {kin} x feature_group_count {fgc}"
        )
    if kout % fgc or kout % bgc or batch % bgc:
        raise ValueError(
            f"{op_name}: group counts ({fgc}, {bgc}) must divide the output features {kout} (and batch {batch})"
        )
    out_spatial = _window_output(
        op_name, Shape(ls.element_type(), spatial), kernel, strides, ldil, rdil, pads
    )
    dims = [0] * (n + 2)
    dims[dn.output_batch_dimension] = batch // bgc
    dims[dn.output_feature_dimension] = kout
    for d, size in zip(dn.output_spatial_dimensions, out_spatial):
        dims[d] = size
    same_element_type(op_name, lhs, rhs)  # a convolution's operands share one type, whatever the result's
    out = Shape(_result_type(op_name, lhs, rhs, preferred_element_type), dims)
    precision = precision_list(op_name, precision_config)

    def attrs():
        return {
            "dimension_numbers": dn.attr(),
            "window_strides": sh.dense_i64(strides),
            "padding": dense_i64_matrix(pads, 2),
            "lhs_dilation": sh.dense_i64(ldil),
            "rhs_dilation": sh.dense_i64(rdil),
            "window_reversal": sh.dense_bool(reversal),
            "feature_group_count": i64_attr(fgc),
            "batch_group_count": i64_attr(bgc),
            "precision_config": precision_attr(precision),
        }

    return single_op(op_name, "stablehlo.convolution", out, [lhs, rhs], attrs)


def _conv(
    op_name,
    lhs,
    rhs,
    window_strides,
    padding,
    dimension_numbers=None,
    feature_group_count=1,
    batch_group_count=1,
    precision_config=None,
    preferred_element_type=None,
):
    op = ConvGeneralDilated(
        lhs,
        rhs,
        window_strides,
        padding,
        None,
        None,
        dimension_numbers,
        feature_group_count,
        batch_group_count,
        precision_config,
        preferred_element_type,
    )
    op.op_name = op_name
    return op


def Conv(
    lhs,
    rhs,
    window_strides,
    padding,
    feature_group_count=1,
    batch_group_count=1,
    precision_config=None,
    preferred_element_type=None,
) -> XlaOp:
    """Convolution with default dims ``[b,f,spatial]x[o,i,spatial]`` and SAME/VALID padding."""
    return _conv(
        "Conv",
        lhs,
        rhs,
        window_strides,
        padding,
        None,
        feature_group_count,
        batch_group_count,
        precision_config,
        preferred_element_type,
    )


def ConvWithGeneralPadding(
    lhs,
    rhs,
    window_strides,
    padding,
    feature_group_count=1,
    batch_group_count=1,
    precision_config=None,
    preferred_element_type=None,
) -> XlaOp:
    return _conv(
        "ConvWithGeneralPadding",
        lhs,
        rhs,
        window_strides,
        padding,
        None,
        feature_group_count,
        batch_group_count,
        precision_config,
        preferred_element_type,
    )


def ConvWithGeneralDimensions(
    lhs,
    rhs,
    window_strides,
    padding,
    dimension_numbers,
    feature_group_count=1,
    batch_group_count=1,
    precision_config=None,
    preferred_element_type=None,
) -> XlaOp:
    return _conv(
        "ConvWithGeneralDimensions",
        lhs,
        rhs,
        window_strides,
        padding,
        dimension_numbers,
        feature_group_count,
        batch_group_count,
        precision_config,
        preferred_element_type,
    )


def ConvGeneral(
    lhs,
    rhs,
    window_strides,
    padding,
    dimension_numbers,
    feature_group_count=1,
    batch_group_count=1,
    precision_config=None,
    preferred_element_type=None,
) -> XlaOp:
    return _conv(
        "ConvGeneral",
        lhs,
        rhs,
        window_strides,
        padding,
        dimension_numbers,
        feature_group_count,
        batch_group_count,
        precision_config,
        preferred_element_type,
    )


# -- FFT and factorizations --------------------------------------------------------


def Fft(operand, fft_type, fft_length) -> XlaOp:
    """FFT/IFFT (complex), RFFT (real -> complex), IRFFT (complex -> real) over the
    ``len(fft_length)`` (<= 3) innermost dimensions."""
    shape = array("Fft", operand)
    kind = _enum_name(fft_type)
    if kind not in ("FFT", "IFFT", "RFFT", "IRFFT"):
        raise ValueError(f"Fft: unknown fft_type {fft_type!r}")
    length = dims_list("Fft", fft_length, "fft_length")
    if not 1 <= len(length) <= 3 or len(length) > shape.rank():
        raise ValueError(
            f"Fft: fft_length {length} must have 1..3 entries, at most the rank of {shape}"
        )
    t, dims = shape.element_type(), list(shape.dimensions())
    inner = dims[-len(length) :]
    if kind == "RFFT":
        if not shp.is_float(t) or t not in ("f32", "f64"):
            raise TypeError(f"Fft: RFFT needs an f32/f64 operand, got {shape}")
        expected, t = length, shp.complex_type_of(t)
        dims[-1] = length[-1] // 2 + 1
    else:
        if not shp.is_complex(t):
            raise TypeError(f"Fft: {kind} needs a complex operand, got {shape}")
        expected = length if kind != "IRFFT" else length[:-1] + [length[-1] // 2 + 1]
        if kind == "IRFFT":
            t, dims[-1] = shp.complex_part_type(t), length[-1]
    if inner != expected:
        raise ValueError(
            f"Fft: the innermost dimensions of {shape} must be {expected} for {kind} of length {length}"
        )
    out = Shape(t, dims)
    return single_op(
        "Fft",
        "stablehlo.fft",
        out,
        [operand],
        lambda: sh.fft_attributes(kind, length),
    )


def _matrices(op_name: str, a: XlaOp, what: str = "a") -> Shape:
    shape = array(op_name, a, what)
    if shape.rank() < 2 or shape.dimensions()[-1] != shape.dimensions()[-2]:
        raise ValueError(f"{op_name}: {what} must be a (batch of) square matrices, got {shape}")
    if not (shp.is_float(shape.element_type()) or shp.is_complex(shape.element_type())):
        raise TypeError(f"{op_name}: {what} must be floating-point or complex, got {shape}")
    return shape


def Cholesky(a, lower: bool = True) -> XlaOp:
    """Cholesky factor (lower: a = l l^H, else a = u^H u) of each matrix; reads one triangle."""
    shape = _matrices("Cholesky", a)
    return single_op(
        "Cholesky",
        "stablehlo.cholesky",
        shape.without_layout(),
        [a],
        lambda: {"lower": bool_attr(lower)},
    )


def TriangularSolve(
    a, b, left_side: bool, lower: bool, unit_diagonal: bool, transpose_a="NO_TRANSPOSE"
) -> XlaOp:
    """Solve op(a) x = b (left_side) or x op(a) = b for triangular ``a``."""
    ashape = _matrices("TriangularSolve", a)
    bshape = array("TriangularSolve", b, "b")
    same_element_type("TriangularSolve", a, b)
    m = ashape.dimensions()[-1]
    if bshape.rank() != ashape.rank() or bshape.dimensions()[:-2] != ashape.dimensions()[:-2]:
        raise ValueError(
            f"TriangularSolve: b {bshape} must have the batch dimensions of a {ashape}"
        )
    if bshape.dimensions()[-2 if left_side else -1] != m:
        side = "rows" if left_side else "columns"
        raise ValueError(f"TriangularSolve: b {bshape} must have {m} {side} to match a {ashape}")
    kind = (
        "TRANSPOSE"
        if transpose_a is True
        else "NO_TRANSPOSE"
        if transpose_a is False
        else _enum_name(transpose_a)
    )
    if kind not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        raise ValueError(
            f"TriangularSolve: transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT, got {transpose_a!r}"
        )
    return single_op(
        "TriangularSolve",
        "stablehlo.triangular_solve",
        bshape.without_layout(),
        [a, b],
        lambda: {
            "left_side": bool_attr(left_side),
            "lower": bool_attr(lower),
            "unit_diagonal": bool_attr(unit_diagonal),
            "transpose_a": ir.Attribute.parse(f"#stablehlo<transpose {kind}>"),
        },
    )


# -- batch normalization -----------------------------------------------------------


def _batch_norm_checks(
    op_name: str, operand, feature_index: int, vectors: dict
) -> tuple[Shape, int, Shape]:
    shape = array(op_name, operand)
    if not shp.is_float(shape.element_type()):
        raise TypeError(f"{op_name}: operand must be floating-point, got {shape}")
    (f,) = check_dimensions(op_name, [feature_index], shape.rank(), "feature_index", shape)
    vec = Shape(shape.element_type(), [shape.dimensions()[f]])
    for name, v in vectors.items():
        vs = array(op_name, v, name)
        if not vs.equal_ignoring_layout(vec):
            raise ValueError(
                f"{op_name}: {name} must be {vec} (features of {shape} along dimension {f}), got {vs}"
            )
    return shape, f, vec


def _bn_attrs(epsilon: float, f: int):
    return lambda: {
        "epsilon": ir.FloatAttr.get(ir.F32Type.get(), float(epsilon)),
        "feature_index": i64_attr(f),
    }


def BatchNormTraining(operand, scale, offset, epsilon: float, feature_index: int) -> XlaOp:
    """(normalized, batch mean, batch variance) over all dimensions but ``feature_index``."""
    shape, f, vec = _batch_norm_checks(
        "BatchNormTraining", operand, feature_index, {"scale": scale, "offset": offset}
    )
    out = Shape.tuple_shape([shape.without_layout(), vec, vec])
    return single_op(
        "BatchNormTraining",
        "stablehlo.batch_norm_training",
        out,
        [operand, scale, offset],
        _bn_attrs(epsilon, f),
    )


def BatchNormInference(
    operand, scale, offset, mean, variance, epsilon: float, feature_index: int
) -> XlaOp:
    shape, f, _ = _batch_norm_checks(
        "BatchNormInference",
        operand,
        feature_index,
        {"scale": scale, "offset": offset, "mean": mean, "variance": variance},
    )
    return single_op(
        "BatchNormInference",
        "stablehlo.batch_norm_inference",
        shape.without_layout(),
        [operand, scale, offset, mean, variance],
        _bn_attrs(epsilon, f),
    )


def BatchNormGrad(
    operand, scale, batch_mean, batch_var, grad_output, epsilon: float, feature_index: int
) -> XlaOp:
    """(grad operand, grad scale, grad offset)."""
    shape, f, vec = _batch_norm_checks(
        "BatchNormGrad",
        operand,
        feature_index,
        {"scale": scale, "batch_mean": batch_mean, "batch_var": batch_var},
    )
    gs = array("BatchNormGrad", grad_output, "grad_output")
    if not gs.equal_ignoring_layout(shape):
        raise ValueError(f"BatchNormGrad: grad_output {gs} must have the operand's shape {shape}")
    out = Shape.tuple_shape([shape.without_layout(), vec, vec])
    return single_op(
        "BatchNormGrad",
        "stablehlo.batch_norm_grad",
        out,
        [operand, scale, batch_mean, batch_var, grad_output],
        _bn_attrs(epsilon, f),
    )


# -- random numbers ----------------------------------------------------------------


def _rng(op_name: str, distribution: str, a, b, shape: Shape, allowed) -> XlaOp:
    if not isinstance(shape, Shape) or shape.is_tuple():
        raise TypeError(f"{op_name}: shape must be an array xb.Shape, got {shape!r}")
    t = shape.element_type()
    if not allowed(t):
        raise TypeError(f"{op_name}: unsupported element type in {shape}")
    from .ops import _as_op

    builder = resolve_builder(op_name, a, b)
    a = a if isinstance(a, XlaOp) else _as_op(np.asarray(a, shp.numpy_dtype(t)), builder=builder)
    b = b if isinstance(b, XlaOp) else _as_op(np.asarray(b, shp.numpy_dtype(t)), builder=builder)
    for what, v in (("first parameter", a), ("second parameter", b)):
        vs = array(op_name, v, what)
        if vs.rank() != 0 or vs.element_type() != t:
            raise TypeError(f"{op_name}: the {what} must be a {t} scalar, got {vs}")
    out = shape.without_layout()
    dims = np.array(out.dimensions(), dtype=np.int64)

    def emit(em, x, y):
        size = emit_constant(em, dims, "s64")
        attrs = {
            "rng_distribution": ir.Attribute.parse(f"#stablehlo<rng_distribution {distribution}>")
        }
        return sh.create("stablehlo.rng", [x, y, size], [em.tensor_type(out)], attrs).result

    return a.builder.add_op(op_name, out, [a, b], emit)


def RngUniform(a, b, shape: Shape) -> XlaOp:
    """Uniform numbers in [a, b) of ``shape`` (an implicit, implementation-defined generator)."""
    return _rng(
        "RngUniform",
        "UNIFORM",
        a,
        b,
        shape,
        lambda t: shp.is_float(t) or shp.is_integer(t) or t == "pred",
    )


def RngNormal(mu, sigma, shape: Shape) -> XlaOp:
    """Normal numbers N(mu, sigma) of ``shape``."""
    return _rng("RngNormal", "NORMAL", mu, sigma, shape, shp.is_float)


def RngBitGenerator(algorithm, initial_state, shape: Shape) -> XlaOp:
    """(new state, random bits of ``shape``) from a u64 state: THREE_FRY u64[2],
    PHILOX u64[2] or u64[3], DEFAULT backend-specific (PHILOX on the CPU)."""
    kind = _enum_name(algorithm).replace("RNG_", "")
    if kind not in ("DEFAULT", "THREE_FRY", "PHILOX"):
        raise ValueError(f"RngBitGenerator: unknown algorithm {algorithm!r}")
    state = array("RngBitGenerator", initial_state, "initial_state")
    if state.element_type() != "u64" or state.rank() != 1:
        raise TypeError(f"RngBitGenerator: initial_state must be a u64 vector, got {state}")
    sizes = {"THREE_FRY": (2,), "PHILOX": (2, 3), "DEFAULT": (2, 3)}[kind]  # DEFAULT: PHILOX on the CPU
    if state.dimensions()[0] not in sizes:
        raise ValueError(
            f"RngBitGenerator: {kind} needs a state of u64{list(sizes)} elements, got {state}"
        )
    if not isinstance(shape, Shape) or shape.is_tuple():
        raise TypeError(f"RngBitGenerator: shape must be an array xb.Shape, got {shape!r}")
    if not (shp.is_integer(shape.element_type()) or shp.is_float(shape.element_type())):
        raise TypeError(f"RngBitGenerator: output must be integer or floating-point, got {shape}")
    out = Shape.tuple_shape([state.without_layout(), shape.without_layout()])
    return single_op(
        "RngBitGenerator",
        "stablehlo.rng_bit_generator",
        out,
        [initial_state],
        lambda: {"rng_algorithm": ir.Attribute.parse(f"#stablehlo<rng_algorithm {kind}>")},
    )

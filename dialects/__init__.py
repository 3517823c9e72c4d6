"""xhlo's op layer: typed builders for StableHLO ops (``xhlo.dialects.stablehlo``)."""

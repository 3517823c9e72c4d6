"""xhlo's passes: one pass per file, registered here by name (imported lazily)."""

from __future__ import annotations

import importlib

# pass name -> "module:Class" inside xhlo.passes
REGISTRY: dict[str, str] = {
    "xhlo-expose-checks": "expose_checks:ExposeChecks",
    "xhlo-legalize-custom-calls": "legalize_custom_calls:LegalizeCustomCalls",
    "xhlo-legalize-dynamic-custom-calls": "legalize_dynamic_custom_calls:LegalizeDynamicCustomCalls",
    "xhlo-lapack-to-openblas": "lapack_to_openblas:LapackToOpenblas",
    "xhlo-legalize-lapack-custom-calls": "legalize_lapack_custom_calls:LegalizeLapackCustomCalls",
    "xhlo-legalize-shardy": "legalize_shardy:LegalizeShardy",
    "xhlo-legalize-bool-add": "legalize_bool_add:LegalizeBoolAdd",
    "xhlo-legalize-complex-ops": "legalize_complex_ops:LegalizeComplexOps",
    "xhlo-legalize-empty-reductions": "legalize_empty_reductions:LegalizeEmptyReductions",
    "xhlo-split-f64-to-half-converts": "split_f64_to_half_converts:SplitF64ToHalfConverts",
    "xhlo-legalize-dot-algorithms": "legalize_dot_algorithms:LegalizeDotAlgorithms",
    "xhlo-expand-outer-products": "expand_outer_products:ExpandOuterProducts",
    "xhlo-split-complex-dots": "split_complex_dots:SplitComplexDots",
    "xhlo-widen-low-precision-dot": "widen_low_precision_dot:WidenLowPrecisionDot",
    "xhlo-integer-dots-in-float": "integer_dots_in_float:IntegerDotsInFloat",
    "xhlo-extend-integer-dot-operands": "extend_integer_dot_operands:ExtendIntegerDotOperands",
    "xhlo-legalize-rng-bit-generator": "legalize_rng_bit_generator:LegalizeRngBitGenerator",
    "xhlo-fold-static-dynamic-ops": "fold_static_dynamic_ops:FoldStaticDynamicOps",
    "xhlo-legalize-control-flow": "legalize_control_flow:LegalizeControlFlow",
    "xhlo-lower-concatenate": "lower_concatenate:LowerConcatenate",
    "xhlo-fold-concatenate-slices": "fold_concatenate_slices:FoldConcatenateSlices",
    "xhlo-scalarize-rank0-tensors": "scalarize_rank0_tensors:ScalarizeRank0Tensors",
    "xhlo-lower-scatter": "lower_scatter:LowerScatter",
    "xhlo-lower-sort": "lower_sort:LowerSort",
    "xhlo-lower-select-and-scatter": "lower_select_and_scatter:LowerSelectAndScatter",
    "xhlo-fft-to-pocketfft": "fft_to_pocketfft:FftToPocketfft",
    "xhlo-lower-direct-convolutions": "lower_direct_convolutions:LowerDirectConvolutions",
    "xhlo-bf16-gemm-operands": "bf16_gemm_operands:Bf16GemmOperands",
    "xhlo-lower-bf16-gemms": "lower_bf16_gemms:LowerBf16Gemms",
    "xhlo-int8-gemm-operands": "int8_gemm_operands:Int8GemmOperands",
    "xhlo-lower-int8-gemms": "lower_int8_gemms:LowerInt8Gemms",
    "xhlo-lower-fft": "lower_fft:LowerFft",
    "xhlo-clone-cheap-producers": "clone_cheap_producers:CloneCheapProducers",
    "xhlo-fuse-producers-into-extracts": "fuse_producers_into_extracts:FuseProducersIntoExtracts",
    "xhlo-fuse-row-reductions": "fuse_row_reductions:FuseRowReductions",
    "xhlo-merge-identical-bodies": "merge_identical_bodies:MergeIdenticalBodies",
    "xhlo-scalar-transfer-reads": "scalar_transfer_reads:ScalarTransferReads",
    "xhlo-prefetch-gathered-rows": "prefetch_gathered_rows:PrefetchGatheredRows",
    "xhlo-unroll-strided-transfers": "unroll_strided_transfers:UnrollStridedTransfers",
    "xhlo-unroll-short-loops": "unroll_short_loops:UnrollShortLoops",
    "xhlo-widen-half-floats": "widen_half_floats:WidenHalfFloats",
    "xhlo-expand-batch-norm": "expand_batch_norm:ExpandBatchNorm",
    "xhlo-expand-cholesky": "expand_cholesky:ExpandCholesky",
    "xhlo-expand-triangular-solve": "expand_triangular_solve:ExpandTriangularSolve",
    "xhlo-expand-rng": "expand_rng:ExpandRng",
    "xhlo-emulate-small-floats": "emulate_small_floats:EmulateSmallFloats",
    "xhlo-legalize-tuples-and-tokens": "legalize_tuples_and_tokens:LegalizeTuplesAndTokens",
    "xhlo-check-lowered": "check_lowered:CheckLowered",
    "xhlo-readonly-arguments": "readonly_arguments:ReadonlyArguments",
    "xhlo-distinct-results": "distinct_results:DistinctResults",
    "xhlo-fan-out-repeated-results": "fan_out_repeated_results:FanOutRepeatedResults",
    "xhlo-elide-loop-init-copies": "elide_loop_init_copies:ElideLoopInitCopies",
    "xhlo-runtime-operands-in-place": "runtime_operands_in_place:RuntimeOperandsInPlace",
    "xhlo-contiguous-gather-bases": "contiguous_gather_bases:ContiguousGatherBases",
    "xhlo-memref-copy-to-linalg": "memref_copy_to_linalg:MemrefCopyToLinalg",
    "xhlo-cache-large-allocations": "cache_large_allocations:CacheLargeAllocations",
    "xhlo-precise-math-to-libm": "precise_math_to_libm:PreciseMathToLibm",
    "xhlo-emit-c-interface": "emit_c_interface:EmitCInterface",
    "xhlo-lower-collectives": "lower_collectives:LowerCollectives",
    "xhlo-lower-host-calls": "lower_host_calls:LowerHostCalls",
    "xhlo-localize-shard-map": "localize_shard_map:LocalizeShardMap",
    "xhlo-lower-runtime-calls": "lower_runtime_calls:LowerRuntimeCalls",
    "xhlo-prepare-gemms": "prepare_gemms:PrepareGemms",
    "xhlo-widen-bool-tensors": "widen_bool_tensors:WidenBoolTensors",
    "xhlo-vectorize": "vectorize:Vectorize",
    "xhlo-lower-small-gemms": "lower_small_gemms:LowerSmallGemms",
    "xhlo-gemm-to-blas": "gemm_to_blas:GemmToBlas",
    "xhlo-saturate-float-to-int": "saturate_float_to_int:SaturateFloatToInt",
    "xhlo-bf16-as-i16": "bf16_as_i16:Bf16AsI16",
    "xhlo-fold-identity-ops": "fold_identity_ops:FoldIdentityOps",
    "xhlo-fold-constant-atan2": "fold_constant_atan2:FoldConstantAtan2",
    "xhlo-linearize-point-gathers": "linearize_point_gathers:LinearizePointGathers",
    "xhlo-split-buffer-fills": "split_buffer_fills:SplitBufferFills",
    "xhlo-squeeze-masked-transfer-reads": "squeeze_masked_transfer_reads:SqueezeMaskedTransferReads",
    "xhlo-bf16-conversions": "bf16_conversions:Bf16Conversions",
    "xhlo-extend-half-float-math": "extend_half_float_math:ExtendHalfFloatMath",
    "xhlo-reduce-window-to-scan": "reduce_window_to_scan:ReduceWindowToScan",
    "xhlo-split-reductions": "split_reductions:SplitReductions",
    "xhlo-vector-math": "vector_math:VectorMath",
    "xhlo-scratch-arena": "scratch_arena:ScratchArena",
    "xhlo-parallelize-loops": "parallelize_loops:ParallelizeLoops",
    "xhlo-outline-serial-loops": "outline_serial_loops:OutlineSerialLoops",
    "xhlo-internalize-functions": "internalize_functions:InternalizeFunctions",
    "xhlo-partition-codegen": "partition_codegen:PartitionCodegen",
    "xhlo-loop-annotations": "loop_annotations:LoopAnnotations",
    "xhlo-hoist-static-allocas": "hoist_static_allocas:HoistStaticAllocas",
    "xhlo-fold-empty-tensors": "fold_empty_tensors:FoldEmptyTensors",
    "xhlo-stack-small-buffers": "stack_small_buffers:StackSmallBuffers",
    "xhlo-canonicalize-convolutions": "canonicalize_convolutions:CanonicalizeConvolutions",
    "xhlo-runtime-fast-path": "runtime_fast_path:RuntimeFastPath",
}


def get_pass_class(name: str):
    """The pass class registered as ``name``."""
    try:
        module_name, cls_name = REGISTRY[name].split(":")
    except KeyError:
        raise ValueError(f"unknown xhlo pass '{name}'") from None
    module = importlib.import_module(f"xhlo.passes.{module_name}")
    return getattr(module, cls_name)


def all_pass_classes():
    return {name: get_pass_class(name) for name in REGISTRY}

"""The compile pipeline, assembled in one place and printable as text.

The pipeline is a list of named stages. Each stage is a textual pass pipeline
mixing upstream passes (``canonicalize``, ``func.func(stablehlo-legalize-to-linalg)``)
and xhlo's Python passes (``xhlo-legalize-control-flow``). ``xhlo-opt`` accepts
the stage names as named pipelines, so every stage of ``xhlo.compile`` can be
reproduced on the command line and both run the very same pass list.
"""

from __future__ import annotations

import dataclasses
import functools

from ._mlir import ir, passmanager
from .passes_registry import create_pass, is_xhlo_pass


@dataclasses.dataclass(frozen=True)
class Stage:
    name: str
    description: str
    passes: tuple[str, ...]

    @property
    def text(self) -> str:
        return ",".join(self.passes)


STAGES: tuple[Stage, ...] = (
    Stage(
        "xhlo-stablehlo-prepare",
        "Inline, expand composites/CHLO/quantized ops and legalize what the linalg lowering lacks",
        (
            "xhlo-localize-shard-map",
            "xhlo-legalize-shardy",
            # JAX's LAPACK calls: OpenBLAS's LAPACK, else (no wheel, geev, gees) StableHLO loops
            "xhlo-lapack-to-openblas",
            "xhlo-legalize-lapack-custom-calls",
            "xhlo-lower-collectives",
            "xhlo-lower-host-calls",
            "xhlo-legalize-custom-calls",
            "func.func(stablehlo-legalize-composite-to-call)",
            "inline",
            "xhlo-legalize-tuples-and-tokens",
            "xhlo-expand-rng",
            "xhlo-legalize-rng-bit-generator",
            # fail-on-unused=false keeps stablehlo.map, which the linalg lowering handles.
            "func.func(stablehlo-legalize-deprecated-ops{fail-on-unused=false})",
            "func.func(stablehlo-legalize-quant-to-math)",
            "func.func(chlo-legalize-to-stablehlo)",
            # repeated subexpressions computed once (JAX leaves them to XLA's CSE); before the
            # loops xhlo builds on tensors, whose distinct tensor.empty buffers cse would merge
            "cse",
            "xhlo-lower-sort",
            "xhlo-expand-batch-norm",
            "xhlo-expand-cholesky",
            "xhlo-expand-triangular-solve",
            "xhlo-lower-scatter",
            "xhlo-lower-select-and-scatter",
            # numpy's pocketfft when numpy has it, else DFT products in StableHLO
            "xhlo-fft-to-pocketfft",
            "xhlo-lower-fft",
            "xhlo-reduce-window-to-scan",
            "xhlo-legalize-empty-reductions",
            # slices and paddings that leave no elements (the upstream lowering's slice would not verify)
            "xhlo-fold-empty-tensors",
            "xhlo-split-reductions",
            "func.func(stablehlo-canonicalize-dynamism)",
            "xhlo-fold-static-dynamic-ops",
            "xhlo-legalize-bool-add",
            "xhlo-legalize-complex-ops",
            "xhlo-legalize-dot-algorithms",
            # dots without contracting dimensions: elementwise products, as XLA rewrites them
            "xhlo-expand-outer-products",
            "xhlo-widen-low-precision-dot",
            # complex products as four real ones, for BLAS
            "xhlo-split-complex-dots",
            # quantized products whose sums floats hold exactly: f32/f64 (BLAS)
            "xhlo-integer-dots-in-float",
            "xhlo-extend-integer-dot-operands",
            "xhlo-emulate-small-floats",
            # bf16/f16 math in f32 (vectorizes), rounded back after each op, as XLA:CPU upcasts
            "xhlo-widen-half-floats",
            # after it: small floats convert through f32, never straight from f64
            "xhlo-split-f64-to-half-converts",
            # gradients' convolutions in the layout the named conv (im2col, BLAS) takes
            "xhlo-canonicalize-convolutions",
            # threefry's 5 rounds over whole arrays: unrolled, fusion makes them one kernel
            "xhlo-unroll-short-loops",
            # ops that change nothing (canonicalize keeps them; the linalg lowering can crash on them)
            "xhlo-fold-identity-ops",
            # jnp.pad(mode="reflect") chains: a slice of a concatenation reads the operand
            "xhlo-fold-concatenate-slices",
            # x[rows, cols]: one linear index per element instead of a concatenated index buffer
            "xhlo-linearize-point-gathers",
            # before MLIR's math folder, which makes atan2(0, 0) NaN
            "xhlo-fold-constant-atan2",
            "func.func(canonicalize)",
            # last: collective runtime calls become external calls on buffers
            "xhlo-lower-runtime-calls",
        ),
    ),
    Stage(
        "xhlo-stablehlo-to-linalg",
        "StableHLO -> linalg/scf/arith on signless tensors",
        (
            "xhlo-legalize-control-flow",
            # copies into slices of the result, not a loop that picks an operand per element
            "xhlo-lower-concatenate",
            "func.func(stablehlo-legalize-to-linalg)",
            "stablehlo-convert-to-signless",
            # loop counters, scalar loop state, one-element windows: no buffer per iteration
            "xhlo-scalarize-rank0-tensors",
            "func.func(canonicalize)",
            "xhlo-check-lowered",
        ),
    ),
    Stage(
        "xhlo-fuse-and-vectorize",
        "Large float matmuls -> tagged BLAS-bound matmuls; fuse elementwise ops; SIMD tiles",
        (
            "xhlo-prepare-gemms{im2col=false}",
            # fusion takes single-use producers: a broadcast gets a copy per reader
            "xhlo-clone-cheap-producers",
            # a gather's operand computed where the gather reads it
            "xhlo-fuse-producers-into-extracts",
            # unit dims (JAX's keepdims=True) dropped: a reshape between two ops stops their fusion
            "func.func(linalg-fold-unit-extent-dims)",
            "func.func(linalg-fuse-elementwise-ops)",
            # again: fusion folds reshapes next to a contraction back into a generic
            "xhlo-prepare-gemms",
            # AVX512-BF16 hosts: bf16 products read their bf16 data (no f32 copies for sgemm)
            "xhlo-bf16-gemm-operands",
            # AVX512-VNNI hosts: int8 products read their int8 data (no float copies for BLAS)
            "xhlo-int8-gemm-operands",
            "canonicalize",
            # masks between ops as bytes: LLVM packs i1 vectors into bits
            "xhlo-widen-bool-tensors",
            # a value returned in several places (all_reduce fold kernels): one loop writes each
            "xhlo-fan-out-repeated-results",
            # a softmax's max, exponentials, sum and division: one loop over rows
            "xhlo-fuse-row-reductions",
            # no cse before bufferization: merged tensor.empty ops share one buffer;
            # no canonicalize after it: its cleanup ends with the canonicalization patterns
            "xhlo-vectorize",
        ),
    ),
    Stage(
        "xhlo-bufferize",
        "Tensors -> memrefs; results become caller-owned out-parameters, temporaries an arena",
        (
            "xhlo-readonly-arguments",
            "convert-shape-to-std",
            "eliminate-empty-tensors",
            "empty-tensor-to-alloc-tensor",
            "one-shot-bufferize{bufferize-function-boundaries "
            "function-boundary-type-conversion=identity-layout-map "
            "allow-return-allocs-from-loops}",
            "canonicalize",  # a tiled loop's result is its init buffer: out-params can hoist it
            "xhlo-distinct-results",
            "buffer-results-to-out-params{modify-public-functions hoist-static-allocs}",
            "ownership-based-buffer-deallocation",
            "canonicalize",
            "buffer-deallocation-simplification",
            "bufferization-lower-deallocations",
            "cse",
            "canonicalize",
            # scf.for iter_args count as written: loops that only read an argument get a copy
            "xhlo-elide-loop-init-copies",
            # ... and runtime calls got a copy of every operand that has another layout
            "xhlo-runtime-operands-in-place",
            # a vector.gather's indices are offsets in row-major memory: strided bases get a copy
            "xhlo-contiguous-gather-bases",
            "xhlo-memref-copy-to-linalg",
            "xhlo-scratch-arena",
        ),
    ),
    Stage(
        "xhlo-lower-to-loops",
        "BLAS calls for tagged matmuls; linalg -> scf loops; vector reductions and masks lowered",
        (
            # convolutions of few input channels: vector loops over the image (no im2col)
            "xhlo-lower-direct-convolutions",
            # bf16 products: packed panels and vdpbf16ps loops (OpenBLAS has no sbgemm)
            "xhlo-lower-bf16-gemms",
            # int8 products: packed panels and vpdpbusd loops
            "xhlo-lower-int8-gemms",
            # few rows: register-blocked vector loops (no packing, no BLAS threads)
            "xhlo-lower-small-gemms",
            "xhlo-gemm-to-blas",
            # fills and copies bufferization wrote (a convolution's padding): slices on the pool
            "xhlo-split-buffer-fills",
            # horizontal reductions (shuffle trees), not one lane after another
            "func.func(lower-vector-multi-reduction{lowering-strategy=inner-reduction})",
            "func.func(lower-vector-mask)",
            "func.func(convert-linalg-to-loops)",
            # one-element reads of strided buffers: a scalar load (no vector load exists for them)
            "xhlo-scalar-transfer-reads",
            # short reads and writes of strided rows: a load or store per lane (not a loop)
            "xhlo-unroll-strided-transfers",
            # masked reads of one non-unit dim: 1-D reads (convert-vector-to-scf mistypes their masks)
            "xhlo-squeeze-masked-transfer-reads",
            # an embedding lookup's rows are random: ask for later iterations' rows early
            "xhlo-prefetch-gathered-rows",
            "convert-vector-to-scf",
            # large loops xhlo-vectorize marked write-disjoint -> the xhlo_parallel_for thread pool
            "xhlo-parallelize-loops",
            # large serial loop nests too: xhlo-partition-codegen compiles functions on other threads
            "xhlo-outline-serial-loops",
            # small buffers made and freed within a loop iteration or branch: on the stack
            "xhlo-stack-small-buffers",
            # after outlining: convert-vector-to-scf's staging buffers (and those), once per function call
            "xhlo-hoist-static-allocas",
            # loops that differ only in their buffers outline alike: LLVM compiles one of them
            "xhlo-merge-identical-bodies",
        ),
    ),
    Stage(
        "xhlo-lower-to-llvm",
        "scf/arith/math/memref -> LLVM dialect, C interface on public functions",
        (
            "xhlo-emit-c-interface",
            "xhlo-vector-math",
            "xhlo-saturate-float-to-int",
            "expand-strided-metadata",
            "lower-affine",
            "convert-scf-to-cf",
            "convert-complex-to-standard",
            # bf16/f16 math in f32, rounded after each op: only data is bf16 when xhlo-bf16-as-i16 runs
            "xhlo-extend-half-float-math",
            "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}",
            # ... and the conversions integer code (a shift; rounding on the bits)
            "xhlo-bf16-conversions",
            "convert-math-to-funcs{convert-ctlz=false}",
            "xhlo-precise-math-to-libm",
            "convert-math-to-llvm{approximate-log1p=false}",
            "convert-math-to-libm",
            "convert-complex-to-llvm",
            # reductions may be reassociated: StableHLO leaves their order unspecified
            "convert-vector-to-llvm{reassociate-fp-reductions enable-x86}",
            "convert-index-to-llvm",
            "arith-expand",
            "convert-arith-to-llvm",
            # heap buffers through _mlir_memref_to_llvm_alloc/free, which the next pass defines
            "finalize-memref-to-llvm{use-generic-functions}",
            "xhlo-cache-large-allocations",
            "convert-func-to-llvm",
            "convert-cf-to-llvm",
            # the loops' unroll hints onto their LLVM back edges (convert-cf-to-llvm leaves them aside)
            "xhlo-loop-annotations",
            "convert-ub-to-llvm",
            "reconcile-unrealized-casts",
            # LLVM's x86 backend aborts on many bf16 vectors: it sees i16 bits instead
            "xhlo-bf16-as-i16",
            # collectives try native code before the Python runtime
            "xhlo-runtime-fast-path",
            # only what the host calls stays external: the JIT compiles the rest once, inlined
            "xhlo-internalize-functions",
            # outlined loop bodies compiled on other threads (xhlo.llvm_jit)
            "xhlo-partition-codegen",
        ),
    ),
)

NAMED_PIPELINES: dict[str, Stage] = {s.name: s for s in STAGES}


def pipeline_text(stages: tuple[Stage, ...] = STAGES) -> str:
    """The whole compile pipeline as one textual pass pipeline."""
    return "builtin.module(" + ",".join(s.text for s in stages) + ")"


# -- parsing ---------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def split_top_level(text: str) -> tuple[str, ...]:
    """Split ``a,b{x=1,2},c(d,e)`` at top-level commas (cached: every compile splits
    the same stage texts)."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return tuple(item for item in items if item)


def strip_anchor(text: str) -> str:
    """``builtin.module(a,b)`` -> ``a,b``; anything else unchanged."""
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        return text[len("builtin.module(") : -1]
    return text


def parse_options(text: str) -> dict[str, str]:
    """``a=1 b=x,y c`` -> {'a': '1', 'b': 'x,y', 'c': ''} (space-separated, as mlir-opt)."""
    options = {}
    for token in text.split():
        key, _, value = token.partition("=")
        options[key] = value
    return options


def expand(text: str) -> list[str]:
    """Top-level elements of a pipeline with named pipelines expanded."""
    out: list[str] = []
    for item in split_top_level(strip_anchor(text)):
        if item in NAMED_PIPELINES:
            out.extend(NAMED_PIPELINES[item].passes)
        else:
            out.append(item)
    return out


def _split_name(item: str) -> tuple[str, str]:
    name, brace, rest = item.partition("{")
    return name.strip(), rest[:-1] if brace else ""


def build_pass_manager(text: str, context: ir.Context | None = None) -> passmanager.PassManager:
    """A PassManager for ``text``; xhlo passes become Python passes in the same manager."""
    pm = passmanager.PassManager("builtin.module", context=context)
    for item in expand(text):
        add_element(pm, item)
    return pm


@functools.lru_cache(maxsize=256)
def _xhlo_pass(name: str, options: str):
    """The pass instance of ``name{options}``; passes are frozen dataclasses without
    state, so one instance serves every pass manager."""
    return create_pass(name, parse_options(options))


def add_element(pm: passmanager.PassManager, item: str) -> None:
    """Append one pipeline element (an xhlo pass or upstream pipeline text) to ``pm``."""
    name, options = _split_name(item)
    if is_xhlo_pass(name):
        instance = _xhlo_pass(name, options)
        pm.add(instance, instance.NAME, argument=instance.NAME)
        return
    try:
        pm.add(item)
    except ValueError as err:
        raise ValueError(f"invalid pass pipeline element '{item}': {err}") from None

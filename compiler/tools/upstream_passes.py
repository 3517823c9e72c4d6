"""The upstream (MLIR and StableHLO) passes the provider registers, for ``xhlo-opt --help``.

The Python bindings can run any registered pass by name but cannot list the
registry, and ``torch-mlir-opt --help`` misses the StableHLO passes. So the
names below were found by probing ``PassManager.add`` with the identifier-like
strings of the provider's libraries (``discover_registered_passes`` repeats
that probe; ``tests/test_xhlo_opt.py`` checks the table against it). The
one-line summaries are xhlo's own. Options and their defaults are read from
the provider at run time (``pass_options``), so they never go stale.
"""

from __future__ import annotations

import re
from pathlib import Path

STABLEHLO_PREFIXES = ("stablehlo-", "chlo-", "vhlo-", "shape-legalize-to-stablehlo")

UPSTREAM_PASSES: dict[str, str] = {
    # -- OpenACC ------------------------------------------------------------
    "acc-bind-routine": "Bind OpenACC routine calls to their device-specific variants",
    "acc-cg-to-gpu": "Map OpenACC compute-construct codegen ops to GPU launches",
    "acc-compute-lowering": "Lower OpenACC compute constructs to their codegen form",
    "acc-declare-gpu-module-insertion": "Copy OpenACC declared globals into the GPU module",
    "acc-emit-remarks-data": "Report OpenACC data clauses as remarks",
    "acc-emit-remarks-loop": "Report how OpenACC loops are parallelized as remarks",
    "acc-emit-remarks-private": "Report OpenACC private variables as remarks",
    "acc-if-clause-lowering": "Split OpenACC constructs with an if clause into host/device paths",
    "acc-implicit-data": "Add the data clauses OpenACC implies for values used in a region",
    "acc-implicit-declare": "Mark globals used on the device as OpenACC declare",
    "acc-implicit-routine": "Mark functions called from OpenACC regions as routines",
    "acc-legalize-serial": "Turn OpenACC serial constructs into single-gang parallel ones",
    "acc-loop-tiling": "Tile OpenACC loops that carry a tile clause",
    "acc-recipe-materialization": "Inline OpenACC privatization and reduction recipes",
    "acc-routine-lowering": "Lower OpenACC routine functions for the device",
    "acc-routine-to-gpu-func": "Move OpenACC routines into the GPU module as device functions",
    "acc-specialize-for-device": "Strip OpenACC ops that only matter on the host from device code",
    "acc-specialize-for-host": "Turn OpenACC constructs into plain host code",
    "acc-to-llvm": "Lower OpenACC data operands to the LLVM dialect",
    # -- affine -------------------------------------------------------------
    "affine-data-copy-generate": "Insert explicit copies of the memory affine loops touch",
    "affine-expand-index-ops": "Expand affine.delinearize_index/linearize_index into arith",
    "affine-expand-index-ops-as-affine": "Expand affine index ops into affine.apply",
    "affine-fold-memref-alias-ops": "Fold memref view ops into the affine loads/stores using them",
    "affine-loop-coalescing": "Merge perfectly nested affine loops into one loop",
    "affine-loop-fusion": "Fuse affine loop nests that produce and consume the same memory",
    "affine-loop-invariant-code-motion": "Hoist loop-invariant ops out of affine.for loops",
    "affine-loop-normalize": "Rewrite affine loops to start at 0 with step 1",
    "affine-loop-tile": "Tile affine loop nests",
    "affine-loop-unroll": "Unroll affine loops",
    "affine-loop-unroll-jam": "Unroll an outer affine loop and jam the copies of its body",
    "affine-parallelize": "Turn parallel affine.for loops into affine.parallel",
    "affine-pipeline-data-transfer": "Overlap DMA transfers with computation by double buffering",
    "affine-raise-from-memref": "Raise memref.load/store with affine indices to affine ops",
    "affine-scalrep": "Forward stored values to affine loads and drop redundant accesses",
    "affine-simplify-min-max": "Simplify affine.min/max using loop bounds",
    "affine-simplify-structures": "Simplify affine maps, sets and the ops using them",
    "affine-simplify-with-bounds": "Simplify affine expressions using known value bounds",
    "affine-super-vectorize": "Vectorize affine loop nests into vector ops",
    # -- AMDGPU / Arm -------------------------------------------------------
    "amdgpu-emulate-atomics": "Emulate atomics the chosen AMD GPU lacks with CAS loops",
    "amdgpu-maskedload-to-load": "Turn masked vector loads into loads and selects on AMD GPUs",
    "amdgpu-resolve-strided-metadata": "Resolve memref metadata queries on AMDGPU buffer casts",
    "arm-neon-2d-to-intr": "Lower 2-D vector contractions to Arm Neon intrinsics",
    "arm-sme-outer-product-fusion": "Fuse pairs of Arm SME outer products into widening ones",
    "arm-sme-vector-legalization": "Split vector ops into tiles Arm SME can hold",
    "arm-sve-legalize-vector-storage": "Legalize loads and stores of scalable vectors for Arm SVE",
    "enable-arm-streaming": "Mark functions to run in Arm streaming SVE mode",
    "test-arm-sme-tile-allocation": "Assign Arm SME tiles to tile values (test pass)",
    # -- arith / math -------------------------------------------------------
    "arith-emulate-unsupported-floats": "Compute with unsupported float types in a wider type",
    "arith-emulate-wide-int": "Emulate wide integers with pairs of narrower ones",
    "arith-expand": "Expand arith ops that have no direct LLVM lowering",
    "arith-int-range-narrowing": "Use narrower integer types where value ranges allow",
    "arith-unsigned-when-equivalent": "Use unsigned arith ops where operands are non-negative",
    "math-expand-ops": "Expand math ops into simpler math and arith ops",
    "math-extend-to-supported-types": "Run math ops on unsupported float types in a wider type",
    "math-sincos-fusion": "Combine math.sin and math.cos of one value into math.sincos",
    "math-uplift-to-fma": "Combine multiply-add sequences into math.fma",
    # -- async --------------------------------------------------------------
    "async-func-to-async-runtime": "Lower async.func to explicit async runtime calls",
    "async-parallel-for": "Split scf.parallel loops into async tasks",
    "async-runtime-policy-based-ref-counting": "Add async reference counting by a fixed policy",
    "async-runtime-ref-counting": "Add reference counting to async runtime values",
    "async-runtime-ref-counting-opt": "Remove redundant async reference counting pairs",
    "async-to-async-runtime": "Lower async execute/await to the async runtime API",
    # -- bufferization and memory -------------------------------------------
    "bubble-down-memory-space-casts": "Move memref memory-space casts towards their users",
    "buffer-deallocation-pipeline": "Pipeline: insert and simplify buffer deallocations",
    "buffer-deallocation-simplification": "Simplify bufferization.dealloc ops",
    "buffer-hoisting": "Move allocations up to where their sizes are known",
    "buffer-loop-hoisting": "Move allocations out of loops when possible",
    "buffer-results-to-out-params": "Turn memref results into caller-provided out-parameters",
    "bufferization-lower-deallocations": "Lower bufferization.dealloc to memref.dealloc and scf",
    "drop-equivalent-buffer-results": "Drop function results that alias a function argument",
    "eliminate-empty-tensors": "Replace tensor.empty with slices of the buffer they end up in",
    "empty-tensor-to-alloc-tensor": "Turn tensor.empty into bufferization.alloc_tensor",
    "expand-realloc": "Expand memref.realloc into alloc, copy and dealloc",
    "expand-strided-metadata": "Expand memref view ops into explicit offset/size/stride arithmetic",
    "flatten-memref": "Flatten multi-dimensional memrefs to one dimension",
    "fold-memref-alias-ops": "Fold memref subviews and reshapes into loads and stores",
    "memref-elide-reinterpret-cast": "Drop memref.reinterpret_cast ops that change nothing",
    "memref-emulate-wide-int": "Emulate wide integer memrefs with narrower elements",
    "memref-expand": "Expand memref ops into forms the LLVM lowering accepts",
    "normalize-memrefs": "Rewrite memrefs with layout maps into identity-layout memrefs",
    "one-shot-bufferize": "Bufferize tensor programs in one analysis over the whole IR",
    "optimize-allocation-liveness": "Move deallocations right after the last use of a buffer",
    "ownership-based-buffer-deallocation": "Insert buffer deallocations from an ownership analysis",
    "promote-buffers-to-stack": "Turn small heap allocations into stack allocations",
    "static-memory-planner-analysis": "Plan static offsets for allocations in one arena",
    # -- canonicalization and generic transforms ----------------------------
    "canonicalize": "Simplify ops with their canonicalization patterns and folders",
    "composite-fixed-point-pass": "Run a nested pipeline until the IR stops changing",
    "control-flow-sink": "Move ops into the regions that use them",
    "cse": "Remove duplicate side-effect-free ops",
    "duplicate-function-elimination": "Merge functions with identical bodies",
    "generate-runtime-verification": "Insert runtime checks for op preconditions",
    "inline": "Inline calls to functions and other callables",
    "int-range-optimizations": "Fold and narrow integer ops using value range analysis",
    "lift-cf-to-scf": "Rebuild structured scf loops and ifs from cf branches",
    "loop-invariant-code-motion": "Hoist loop-invariant ops out of any loop",
    "loop-invariant-subset-hoisting": "Hoist invariant subset extract/insert pairs out of loops",
    "mem2reg": "Promote memory slots to SSA values",
    "mlgo-add-reflection-map": "Attach a reflection map for MLGO tooling",
    "print-ir": "Print the IR to stderr at this point of the pipeline",
    "print-op-stats": "Print how many ops of each kind the IR has",
    "reconcile-unrealized-casts": "Remove unrealized_conversion_cast chains that cancel out",
    "reify-result-shapes": "Make result shapes explicit with reified shape computations",
    "remove-dead-values": "Remove unused values, arguments and results",
    "resolve-ranked-shaped-type-result-dims": "Resolve dims of ranked results from producer shapes",
    "resolve-shaped-type-result-dims": "Resolve dim ops of results from producer shapes",
    "sccp": "Sparse conditional constant propagation",
    "snapshot-op-locations": "Give ops locations in a snapshot of the printed IR",
    "sroa": "Split aggregate memory slots into one slot per field",
    "strip-debuginfo": "Replace every location with an unknown location",
    "symbol-dce": "Remove private symbols nothing refers to",
    "symbol-privatize": "Make public symbols private (except an exclusion list)",
    "topological-sort": "Order ops in graph regions so definitions come before uses",
    "trivial-dce": "Remove ops whose results are unused and that have no side effects",
    "view-op-graph": "Print the IR as a Graphviz graph",
    # -- conversions ----------------------------------------------------------
    "convert-affine-for-to-gpu": "Map affine loop nests onto GPU launch grids",
    "convert-amdgpu-to-rocdl": "Lower AMDGPU dialect ops to ROCDL",
    "convert-arith-to-amdgpu": "Lower arith ops to AMDGPU-specific ops",
    "convert-arith-to-apfloat": "Lower arith float ops to software float calls",
    "convert-arith-to-arm-sme": "Lower arith ops on Arm SME tiles",
    "convert-arith-to-emitc": "Lower arith ops to EmitC",
    "convert-arith-to-llvm": "Lower arith ops to the LLVM dialect",
    "convert-arith-to-spirv": "Lower arith ops to SPIR-V",
    "convert-arm-sme-to-llvm": "Lower Arm SME ops to LLVM intrinsics",
    "convert-arm-sme-to-scf": "Lower Arm SME tile loads/stores to scf loops",
    "convert-async-to-llvm": "Lower the async runtime to LLVM calls",
    "convert-bufferization-to-memref": "Lower bufferization ops to memref ops",
    "convert-cf-to-llvm": "Lower cf branches to the LLVM dialect",
    "convert-cf-to-spirv": "Lower cf branches to SPIR-V",
    "convert-complex-to-libm": "Lower complex math to libm calls",
    "convert-complex-to-llvm": "Lower complex ops to LLVM structs and arithmetic",
    "convert-complex-to-rocdl-library-calls": "Lower complex math to ROCm device library calls",
    "convert-complex-to-spirv": "Lower complex ops to SPIR-V",
    "convert-complex-to-standard": "Expand complex ops into real arith and math ops",
    "convert-elementwise-to-linalg": "Turn elementwise ops on tensors into linalg.generic",
    "convert-func-to-emitc": "Lower func ops to EmitC",
    "convert-func-to-llvm": "Lower func ops and their signatures to the LLVM dialect",
    "convert-func-to-spirv": "Lower func ops to SPIR-V",
    "convert-gpu-to-llvm-spv": "Lower GPU kernel ops to LLVM for SPIR-V targets",
    "convert-gpu-to-nvvm": "Lower GPU kernel ops to NVVM",
    "convert-gpu-to-rocdl": "Lower GPU kernel ops to ROCDL",
    "convert-gpu-to-spirv": "Lower GPU kernels to SPIR-V",
    "convert-index-to-llvm": "Lower index dialect ops to the LLVM dialect",
    "convert-index-to-spirv": "Lower index dialect ops to SPIR-V",
    "convert-linalg-to-affine-loops": "Lower linalg ops to affine loops",
    "convert-linalg-to-loops": "Lower linalg ops on buffers to scf.for loops",
    "convert-linalg-to-parallel-loops": "Lower linalg ops to scf.parallel loops",
    "convert-linalg-to-std": "Lower some linalg ops to library function calls",
    "convert-math-to-apfloat": "Lower math ops to software float calls",
    "convert-math-to-emitc": "Lower math ops to EmitC calls",
    "convert-math-to-funcs": "Implement some math ops as generated functions",
    "convert-math-to-libm": "Lower math ops to libm calls",
    "convert-math-to-llvm": "Lower math ops to LLVM intrinsics",
    "convert-math-to-nvvm": "Lower math ops to NVVM library calls",
    "convert-math-to-rocdl": "Lower math ops to ROCm device library calls",
    "convert-math-to-spirv": "Lower math ops to SPIR-V",
    "convert-math-to-xevm": "Lower math ops to Intel XeVM calls",
    "convert-memref-to-emitc": "Lower memref ops to EmitC",
    "convert-memref-to-spirv": "Lower memref ops to SPIR-V",
    "convert-nvgpu-to-nvvm": "Lower NVGPU ops to NVVM",
    "convert-nvvm-to-llvm": "Lower NVVM ops to inline PTX in LLVM",
    "convert-openacc-to-scf": "Lower OpenACC if clauses to scf.if",
    "convert-openmp-to-llvm": "Lower OpenMP ops to operate on LLVM types",
    "convert-parallel-loops-to-gpu": "Map scf.parallel loops onto GPU launches",
    "convert-pdl-to-pdl-interp": "Compile PDL patterns into the PDL interpreter dialect",
    "convert-scf-to-cf": "Lower structured scf control flow to cf branches",
    "convert-scf-to-emitc": "Lower scf ops to EmitC",
    "convert-scf-to-openmp": "Lower scf.parallel to OpenMP parallel loops",
    "convert-scf-to-spirv": "Lower scf ops to SPIR-V",
    "convert-shape-constraints": "Lower shape constraints to runtime assertions",
    "convert-shape-to-std": "Lower shape dialect ops to arith and tensor ops",
    "convert-shard-to-mpi": "Lower shard collectives to MPI calls",
    "convert-spirv-to-llvm": "Lower SPIR-V ops to the LLVM dialect",
    "convert-tensor-to-linalg": "Lower some tensor ops to linalg",
    "convert-tensor-to-spirv": "Lower tensor ops to SPIR-V",
    "convert-to-emitc": "Lower every dialect with an EmitC conversion interface to EmitC",
    "convert-to-llvm": "Lower every dialect with an LLVM conversion interface to LLVM",
    "convert-ub-to-llvm": "Lower ub.poison to the LLVM dialect",
    "convert-ub-to-spirv": "Lower ub.poison to SPIR-V",
    "convert-vector-to-amx": "Lower vector contractions to Intel AMX",
    "convert-vector-to-arm-sme": "Lower vector ops to Arm SME",
    "convert-vector-to-gpu": "Lower vector ops to GPU MMA ops",
    "convert-vector-to-llvm": "Lower vector ops to the LLVM dialect",
    "convert-vector-to-scf": "Lower high-rank vector transfers to scf loops",
    "convert-vector-to-spirv": "Lower vector ops to SPIR-V",
    "convert-vector-to-xegpu": "Lower vector ops to Intel XeGPU",
    "convert-xegpu-to-xevm": "Lower XeGPU ops to XeVM",
    "convert-xevm-to-llvm": "Lower XeVM ops to LLVM calls",
    "finalize-memref-to-llvm": "Lower memrefs to LLVM descriptors and pointer arithmetic",
    "lower-affine": "Lower affine ops to scf and arith",
    "lower-host-to-llvm": "Lower host-side code of a GPU program to LLVM",
    "raise-scf-to-affine": "Raise scf loops with affine bounds to affine loops",
    "raise-wasm-mlir": "Raise WebAssembly ops to core MLIR dialects",
    # -- EmitC --------------------------------------------------------------
    "form-expressions": "Group EmitC ops into emitc.expression",
    "wrap-emitc-func-in-class": "Wrap EmitC functions into classes",
    # -- GPU and accelerator targets ----------------------------------------
    "gpu-async-region": "Make GPU ops inside a region asynchronous",
    "gpu-decompose-memrefs": "Decompose memrefs in GPU kernels into base pointers and offsets",
    "gpu-eliminate-barriers": "Remove GPU barriers that order nothing",
    "gpu-kernel-outlining": "Outline gpu.launch bodies into kernel functions",
    "gpu-launch-sink-index-computations": "Move index computations into gpu.launch bodies",
    "gpu-lower-to-nvvm-pipeline": "Pipeline: lower GPU programs for NVIDIA targets",
    "gpu-lower-to-rocdl-pipeline": "Pipeline: lower GPU programs for AMD targets",
    "gpu-lower-to-xevm-pipeline": "Pipeline: lower GPU programs for Intel XeVM targets",
    "gpu-map-parallel-loops": "Annotate scf.parallel loops with a GPU mapping",
    "gpu-module-to-binary": "Serialize GPU modules to binaries",
    "gpu-to-llvm": "Lower GPU host runtime calls to LLVM",
    "nvgpu-optimize-shared-memory": "Swizzle NVGPU shared memory accesses to avoid bank conflicts",
    "nvvm-attach-target": "Attach an NVVM target to GPU modules",
    "rocdl-attach-target": "Attach a ROCDL target to GPU modules",
    "spirv-attach-target": "Attach a SPIR-V target to GPU modules",
    "xevm-attach-target": "Attach an Intel XeVM target to GPU modules",
    "xegpu-blocking": "Split XeGPU ops into hardware-sized blocks",
    "xegpu-optimize-peephole": "Peephole simplifications of XeGPU ops",
    "xegpu-propagate-layout": "Propagate XeGPU layout attributes through the IR",
    "xegpu-sg-to-lane-distribute": "Distribute XeGPU subgroup ops to lanes",
    "xegpu-vector-linearize": "Flatten multi-dimensional vectors for XeGPU",
    "xegpu-wg-to-sg-distribute": "Distribute XeGPU workgroup ops to subgroups",
    # -- linalg / tensor / vector / scf --------------------------------------
    "fold-tensor-subset-ops": "Fold tensor slices into the transfers that read or write them",
    "linalg-block-pack-matmul": "Pack linalg matmuls into blocked layouts",
    "linalg-fold-into-elementwise": "Fold transposes and broadcasts into linalg.elementwise",
    "linalg-fold-unit-extent-dims": "Drop unit dimensions from linalg ops",
    "linalg-fuse-elementwise-ops": "Fuse elementwise linalg ops that feed each other",
    "linalg-generalize-named-ops": "Turn named linalg ops into linalg.generic",
    "linalg-inline-scalar-operands": "Inline scalar operands into linalg.generic bodies",
    "linalg-morph-ops": "Convert linalg ops between named, category and generic forms",
    "linalg-specialize-generic-ops": "Recognize linalg.generic ops that are named ops",
    "lower-vector-mask": "Lower vector.mask regions to masked ops",
    "lower-vector-multi-reduction": "Lower vector.multi_reduction to simpler reductions",
    "lower-vector-to-from-elements-to-shuffle-tree": "Lower to/from_elements to shuffles",
    "scalarize-single-element-tensor-return": "Return single-element tensors as scalars",
    "scf-for-loop-canonicalization": "Simplify scf.for loops and the ops in them",
    "scf-for-loop-peeling": "Peel the last partial iteration off scf.for loops",
    "scf-for-loop-range-folding": "Fold index arithmetic into scf.for bounds",
    "scf-for-loop-specialization": "Specialize scf.for loops for their likely bounds",
    "scf-for-to-while": "Rewrite scf.for as scf.while",
    "scf-forall-to-for": "Rewrite scf.forall as nested scf.for loops",
    "scf-forall-to-parallel": "Rewrite scf.forall as scf.parallel",
    "scf-parallel-for-to-nested-fors": "Rewrite scf.parallel as nested scf.for loops",
    "scf-parallel-loop-fusion": "Fuse adjacent scf.parallel loops",
    "scf-parallel-loop-specialization": "Specialize scf.parallel loops for their likely bounds",
    "scf-parallel-loop-tiling": "Tile scf.parallel loops",
    "simplify-depthwise-conv": "Simplify depthwise convolutions with a multiplier of one",
    "test-scf-parallel-loop-collapsing": "Collapse dimensions of scf.parallel loops (test pass)",
    # -- LLVM dialect -------------------------------------------------------
    "ensure-debug-info-scope-on-llvm-func": "Give LLVM functions a debug-info scope",
    "llvm-add-comdats": "Put linkonce and weak LLVM functions in comdats",
    "llvm-legalize-for-export": "Make the LLVM dialect translatable to LLVM IR",
    "llvm-optimize-for-nvvm-target": "Optimize LLVM dialect code for NVVM",
    "llvm-request-c-wrappers": "Ask for C-compatible wrappers on every function",
    "llvm-target-to-data-layout": "Derive the module's data layout from its LLVM target",
    "llvm-target-to-target-features": "Derive target features from the module's LLVM target",
    "llvm-use-default-visibility": "Reset the visibility of LLVM symbols",
    "set-llvm-module-datalayout": "Attach a data layout to the module",
    # -- ML program, OpenMP, offload ----------------------------------------
    "mlprogram-pipeline-globals": "Remove redundant ml_program global loads and stores",
    "offload-livein-value-canonicalization": "Canonicalize values that flow into offload regions",
    "offload-target-verifier": "Check that offload regions only use target-supported ops",
    "omp-host-op-filter": "Drop OpenMP host-only ops from device modules",
    "omp-mark-declare-target": "Mark functions called from OpenMP target regions",
    "omp-offload-privatization-prepare": "Prepare OpenMP private variables for offloading",
    "omp-stack-to-shared": "Move stack allocations shared by OpenMP threads to shared memory",
    "openacc-legalize-data-values": "Make OpenACC regions use the values of their data clauses",
    # -- quant --------------------------------------------------------------
    "lower-quant-ops": "Lower quant.qcast/dcast to arith",
    "normalize-quant-types": "Use the simplest quantized type that describes each value",
    "strip-func-quant-types": "Replace quantized types in function signatures by storage types",
    # -- shape / shard ------------------------------------------------------
    "outline-shape-computation": "Outline shape computations into separate functions",
    "remove-shape-constraints": "Replace shape constraints with true witnesses",
    "shape-to-shape-lowering": "Lower complex shape ops to simpler shape ops",
    "shard-partition": "Partition sharded ops into per-device ops",
    "shard-simplify": "Simplify shard collectives",
    "sharding-propagation": "Propagate shard annotations through the IR",
    # -- sparse tensors -----------------------------------------------------
    "lower-sparse-foreach-to-scf": "Lower sparse_tensor.foreach to scf loops",
    "lower-sparse-iteration-to-scf": "Lower sparse iteration ops to scf loops",
    "lower-sparse-ops-to-foreach": "Lower sparse tensor ops to sparse_tensor.foreach",
    "pre-sparsification-rewrite": "Prepare sparse tensor ops for sparsification",
    "sparse-assembler": "Add assemble/disassemble wrappers around sparse tensor functions",
    "sparse-buffer-rewrite": "Rewrite sparse buffer ops into code",
    "sparse-gpu-codegen": "Generate GPU code for sparse kernels",
    "sparse-reinterpret-map": "Reinterpret sparse tensor maps as plain index maps",
    "sparse-space-collapse": "Collapse nested sparse iteration spaces",
    "sparse-storage-specifier-to-llvm": "Lower sparse storage specifiers to LLVM structs",
    "sparse-tensor-codegen": "Lower sparse tensors to the buffers that hold them",
    "sparse-tensor-conversion": "Lower sparse tensors to the sparse runtime library",
    "sparse-vectorization": "Vectorize sparse loops",
    "sparsification": "Generate sparse loops for linalg ops on sparse tensors",
    "sparsification-and-bufferization": "Sparsify and bufferize in one pass",
    "sparsifier": "Pipeline: compile sparse tensor programs to LLVM",
    "stage-sparse-ops": "Split sparse tensor ops into simpler staged ops",
    # -- SPIR-V -------------------------------------------------------------
    "decorate-spirv-composite-type-layout": "Add layout decorations to SPIR-V composite types",
    "map-memref-spirv-storage-class": "Map memref memory spaces to SPIR-V storage classes",
    "spirv-canonicalize-gl": "Canonicalize SPIR-V GLSL ops",
    "spirv-lower-abi-attrs": "Lower SPIR-V ABI attributes on entry points",
    "spirv-promote-to-replicated-constants": "Use replicated constants for splat SPIR-V constants",
    "spirv-rewrite-inserts": "Combine chains of SPIR-V inserts into constructs",
    "spirv-unify-aliased-resource": "Merge aliased SPIR-V resources",
    "spirv-update-vce": "Compute the SPIR-V version, capabilities and extensions a module needs",
    "spirv-webgpu-prepare": "Rewrite SPIR-V ops WebGPU does not support",
    # -- TOSA ---------------------------------------------------------------
    "tosa-arith-const-to-tosa-const": "Turn arith.constant into tosa.const",
    "tosa-attach-target": "Attach a TOSA target to the module",
    "tosa-convert-integer-type-to-signless": "Make TOSA integer types signless",
    "tosa-downgrade-1-1-to-1-0": "Rewrite TOSA 1.1 ops into TOSA 1.0 ones",
    "tosa-experimental-input-shape": "Override TOSA function input shapes (experimental)",
    "tosa-infer-shapes": "Infer static shapes of TOSA ops",
    "tosa-layerwise-constant-fold": "Fold TOSA ops on constants",
    "tosa-make-broadcastable": "Insert reshapes so TOSA operands broadcast",
    "tosa-narrow-f64-to-f32": "Use f32 for f64 TOSA values",
    "tosa-narrow-i64-to-i32": "Use i32 for i64 TOSA values",
    "tosa-optional-decompositions": "Decompose TOSA ops into simpler TOSA ops",
    "tosa-reduce-transposes": "Remove redundant TOSA transposes",
    "tosa-to-arith": "Lower TOSA constants and rescales to arith",
    "tosa-to-linalg": "Lower TOSA elementwise and reduction ops to linalg",
    "tosa-to-linalg-named": "Lower TOSA ops to named linalg ops",
    "tosa-to-linalg-pipeline": "Pipeline: lower TOSA to linalg",
    "tosa-to-mlprogram": "Lower TOSA variables to ml_program globals",
    "tosa-to-scf": "Lower TOSA control flow to scf",
    "tosa-to-spirv-tosa": "Lower TOSA to the SPIR-V TOSA extended instruction set",
    "tosa-to-spirv-tosa-mark-graph-constants": "Mark constants for the SPIR-V TOSA graph",
    "tosa-to-tensor": "Lower TOSA shape ops to tensor ops",
    "tosa-validate": "Check TOSA ops against a TOSA profile and level",
    # -- transform dialect --------------------------------------------------
    "transform-dialect-check-uses": "Warn about uses of consumed transform handles",
    "transform-infer-effects": "Infer side effects of transform named sequences",
    "transform-interpreter": "Apply the transform script in the module to the payload IR",
    "transform-preload-library": "Load transform libraries into the context",
    # -- StableHLO, CHLO, VHLO ----------------------------------------------
    "chlo-legalize-to-stablehlo": "Expand CHLO ops into StableHLO ops",
    "shape-legalize-to-stablehlo": "Lower shape computations to StableHLO",
    "stablehlo-canonicalize-dynamism": "Make dynamic ops with constant shapes static",
    "stablehlo-check-shape-assertions": "Check or drop StableHLO shape assertion custom calls",
    "stablehlo-compatibility-expander": "Rewrite new StableHLO features for an older version",
    "stablehlo-complex-math-expander": "Expand complex StableHLO math into real arithmetic",
    "stablehlo-convert-to-signless": "Make integer types signless after lowering StableHLO",
    "stablehlo-legalize-composite-to-call": "Replace composites with calls to their decomposition",
    "stablehlo-legalize-deprecated-ops": "Rewrite deprecated StableHLO ops into supported ones",
    "stablehlo-legalize-qdq-to-quantized-op": "Fuse dequantize-op-quantize into quantized ops",
    "stablehlo-legalize-quant-to-math": "Lower quantized StableHLO ops to integer math",
    "stablehlo-legalize-quantized-op-to-qdq": "Split quantized ops into dequantize-op-quantize",
    "stablehlo-legalize-to-linalg": "Lower StableHLO ops to linalg, tensor and arith",
    "stablehlo-legalize-to-vhlo": "Convert StableHLO to the versioned VHLO dialect",
    "stablehlo-refine-arguments": "Refine the argument types of the main function",
    "stablehlo-refine-shapes": "Propagate static shapes through StableHLO programs",
    "stablehlo-wrap-in-composite": "Wrap StableHLO ops in stablehlo.composite",
    "vhlo-legalize-to-stablehlo": "Convert VHLO back to StableHLO",
    "vhlo-to-version": "Convert VHLO ops to a given VHLO version",
}


def is_stablehlo_pass(name: str) -> bool:
    return name.startswith(STABLEHLO_PREFIXES)


def pass_options(name: str) -> list[str]:
    """``key=default`` for each option of upstream pass ``name`` (needs a current Context).

    Read from the pass manager's own printing of the pass, so the list matches
    the provider. Registered pipelines (which print as several passes) have none.
    """
    from xhlo._mlir import passmanager

    pm = passmanager.PassManager("any")
    pm.add(name)
    text = str(pm)
    prefix = f"any({name}"
    if not text.startswith(prefix) or not text.endswith(")"):
        return []
    body = text[len(prefix) : -1]
    if not (body.startswith("{") and body.endswith("}")):
        return []
    return _split_options(body[1:-1])


def _split_options(text: str) -> list[str]:
    """``a=1 b={x y} c=`` -> ['a=1', 'b={x y}', 'c='] (spaces inside braces kept)."""
    items, depth, current = [], 0, ""
    for ch in text:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == " " and depth == 0:
            if current:
                items.append(current)
            current = ""
        else:
            current += ch
    if current:
        items.append(current)
    return items


# -- rediscovering the table ------------------------------------------------------

_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_TAIL = re.compile(rb"[a-z][a-z0-9-]{1,80}(?=\x00)")


def _candidate_names(library: Path) -> set[str]:
    """Every NUL-terminated identifier in ``library`` and each of its suffixes.

    Suffixes matter because linkers merge a short string into the tail of a
    longer one (``cse`` may live at the end of ``...-cse``).
    """
    names: set[str] = set()
    for match in _TAIL.finditer(library.read_bytes()):
        word = match.group().decode()
        for start in range(len(word)):
            tail = word[start:]
            if len(tail) > 1 and _NAME.fullmatch(tail):
                names.add(tail)
    return names


def discover_registered_passes() -> set[str]:
    """Names the provider's pass registry accepts (slow: scans the libraries)."""
    from xhlo._mlir import new_context, passmanager, stablehlo_api

    # The provider's shared libraries sit next to its StableHLO extension module.
    candidates: set[str] = set()
    for library in Path(stablehlo_api.__file__).parent.glob("*.so"):
        candidates |= _candidate_names(library)
    found: set[str] = set()
    with new_context():
        for name in sorted(candidates):
            pm = passmanager.PassManager("any")
            try:
                pm.add(name)
            except ValueError:
                continue
            found.add(name)
    return found

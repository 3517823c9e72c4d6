// --help lists the driver options and every pass: the compile stages, the
// xhlo passes (with option types and defaults), the StableHLO passes and the
// upstream MLIR passes (with the provider's options and defaults).
// RUN: xhlo-opt --help | FileCheck %s
// RUN: xhlo-opt -h | FileCheck %s
// RUN: xhlo-opt --list-passes | FileCheck %s --check-prefix=PASSES
// RUN: xhlo-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
// RUN: xhlo-opt --version | FileCheck %s --check-prefix=VERSION

// CHECK: USAGE: xhlo-opt [options] [INPUT|-] [-o OUTPUT]
// CHECK: -o <file>
// CHECK: -p <pipeline>
// CHECK: --pass-pipeline=<pipeline>
// CHECK: --split-input-file[=<marker>]
// CHECK: --verify-diagnostics[=<level>]
// CHECK: --allow-unregistered-dialect
// CHECK: --emit-bytecode
// CHECK: --mlir-print-ir-before-all
// CHECK: --mlir-print-ir-after-all
// CHECK: --mlir-print-ir-before=<pass>
// CHECK: --mlir-print-ir-after=<pass>
// CHECK: --mlir-timing
// CHECK: --mlir-print-debuginfo
// CHECK: Pass pipelines
// PASSES: Pass pipelines
// CHECK: --xhlo-compile-pipeline
// CHECK: --xhlo-stablehlo-prepare
// CHECK: --xhlo-stablehlo-to-linalg
// CHECK-NEXT: = xhlo-legalize-control-flow,xhlo-lower-concatenate,func.func(stablehlo-legalize-to-linalg)
// CHECK: --xhlo-bufferize
// CHECK: --xhlo-lower-to-loops
// CHECK: --xhlo-lower-to-llvm
// CHECK: xhlo passes:
// PASSES: xhlo passes:
// CHECK: --xhlo-check-lowered{{ +}}Reject any op
// CHECK-NEXT: dialects=<tuple> (default: stablehlo,chlo,
// CHECK: --xhlo-expose-checks{{ +}}Return check.* operands
// CHECK-NEXT: entry=<str> (default: main)
// CHECK: --xhlo-legalize-control-flow
// CHECK: StableHLO passes:
// PASSES: StableHLO passes:
// CHECK: --chlo-legalize-to-stablehlo
// CHECK: --stablehlo-legalize-to-linalg{{ +}}Lower StableHLO ops to linalg
// CHECK-NEXT: capture-scalar-inputs=true enable-primitive-ops=false enable-sparse-ops=false
// PASSES: --stablehlo-legalize-to-linalg
// CHECK: Upstream MLIR passes:
// PASSES: Upstream MLIR passes:
// CHECK: --canonicalize{{ +}}Simplify ops
// CHECK-NEXT: max-iterations=10
// PASSES: --canonicalize
// CHECK: --convert-linalg-to-loops
// CHECK: --cse{{ +}}Remove duplicate
// CHECK: --inline{{ +}}Inline calls
// CHECK: --one-shot-bufferize
// CHECK: --symbol-dce{{ +}}Remove private symbols

// DIALECTS: Available Dialects: {{.*}}arith, {{.*}}builtin, {{.*}}chlo, {{.*}}func, {{.*}}linalg, {{.*}}stablehlo, {{.*}}tensor

// VERSION: xhlo-opt (xhlo {{[0-9.]+}}, MLIR provider torch-mlir {{.*}})

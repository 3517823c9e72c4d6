// Output printing flags: --mlir-print-debuginfo shows locations (named after
// the input file, line and column), --mlir-print-op-generic the generic form,
// --mlir-elide-elementsattrs-if-larger elides big constants.
// RUN: xhlo-opt %s --mlir-print-debuginfo | FileCheck %s --check-prefix=DEBUG
// RUN: xhlo-opt - --mlir-print-debuginfo < %s | FileCheck %s --check-prefix=STDIN
// RUN: xhlo-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: xhlo-opt %s --mlir-elide-elementsattrs-if-larger=2 | FileCheck %s --check-prefix=ELIDE
// RUN: xhlo-opt %s --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=LOCAL

// DEBUG: stablehlo.constant {{.*}} loc(#[[LOC:loc[0-9]*]])
// DEBUG: #[[LOC]] = loc("{{.*}}print_options.mlir":[[# @LINE + 8]]:8)
// STDIN: loc("<stdin>":[[# @LINE + 7]]:8)
// GENERIC: "func.func"() <{function_type = () -> tensor<4xi32>, sym_name = "constant"}> ({
// GENERIC: "stablehlo.constant"() <{value = dense<[1, 2, 3, 4]> : tensor<4xi32>}> : () -> tensor<4xi32>
// GENERIC: "func.return"
// ELIDE: stablehlo.constant dense_resource<__elided__> : tensor<4xi32>
// LOCAL: stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32> loc("{{.*}}print_options.mlir":[[# @LINE + 2]]:8)
func.func @constant() -> tensor<4xi32> {
  %0 = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  return %0 : tensor<4xi32>
}

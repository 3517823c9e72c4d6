// --pass-pipeline / -p take MLIR's textual pipelines, with upstream passes,
// xhlo passes and named stages side by side; pass flags and -p elements run
// in command-line order (--dump-pass-pipeline shows what will run).
// RUN: xhlo-opt %s --pass-pipeline='builtin.module(func.func(canonicalize),xhlo-legalize-control-flow)' | FileCheck %s
// RUN: xhlo-opt %s -p 'builtin.module(func.func(canonicalize),xhlo-legalize-control-flow)' | FileCheck %s
// RUN: xhlo-opt %s -p=builtin.module(func.func(canonicalize)) --xhlo-legalize-control-flow | FileCheck %s
// RUN: xhlo-opt %s --cse -p 'builtin.module(xhlo-check-lowered{dialects=chlo},symbol-dce)' --canonicalize \
// RUN:   --dump-pass-pipeline -o %t 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: xhlo-opt %s -p 'builtin.module(xhlo-stablehlo-to-linalg)' --dump-pass-pipeline -o %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NAMED

// CHECK-LABEL: func.func @select_branch
// CHECK-SAME: (%[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<2xf32>)
// CHECK: %[[COND:.*]] = tensor.extract %[[P]][] : tensor<i1>
// CHECK: %[[R:.*]] = scf.if %[[COND]] -> (tensor<2xf32>) {
// CHECK: stablehlo.abs %[[X]]
// CHECK: } else {
// CHECK: stablehlo.negate %[[X]]
// CHECK: return %[[R]]

// ORDER: builtin.module(cse,xhlo-check-lowered,symbol-dce,canonicalize{{[{].*[}]}})

// NAMED: builtin.module(xhlo-legalize-control-flow,xhlo-lower-concatenate,func.func(stablehlo-legalize-to-linalg{{.*}}),stablehlo-convert-to-signless,xhlo-scalarize-rank0-tensors,func.func(canonicalize{{.*}}),xhlo-check-lowered)
func.func @select_branch(%p: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.if"(%p) ({
    %1 = stablehlo.abs %x : tensor<2xf32>
    stablehlo.return %1 : tensor<2xf32>
  }, {
    %2 = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %2 : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

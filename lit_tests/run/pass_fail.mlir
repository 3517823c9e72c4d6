// xhlo-run compiles and runs each file, prints one PASS/FAIL line per file and
// a total, and exits 1 when anything failed. Compile errors name file:line:col.
// RUN: not xhlo-run -j 1 %S/Inputs/add_passes.mlir %S/Inputs/multiply_fails.mlir \
// RUN:   %S/Inputs/compile_error.mlir %S/Inputs/unknown_custom_call.mlir %S/Inputs/no_such_file.mlir \
// RUN:   | FileCheck %s
// RUN: xhlo-run %S/Inputs/add_passes.mlir | FileCheck %s --check-prefix=ONE
// RUN: not xhlo-run -q -j 1 %S/Inputs/add_passes.mlir %S/Inputs/multiply_fails.mlir \
// RUN:   | FileCheck %s --check-prefix=QUIET

// CHECK: PASS {{.*}}Inputs/add_passes.mlir
// CHECK-NEXT: FAIL {{.*}}Inputs/multiply_fails.mlir: {{.*}}check.expect_eq {{.*}}1 of 3 elements differ{{.*}}index [{{.*}}2{{.*}}]: got {{.*}}9{{.*}}, expected {{.*}}10
// CHECK-NEXT: FAIL {{.*}}Inputs/compile_error.mlir: {{.*}}Inputs/compile_error.mlir:3:22: error: use of value '%a' expects different type than prior uses
// CHECK: FAIL {{.*}}Inputs/unknown_custom_call.mlir: {{.*}}Inputs/unknown_custom_call.mlir:3:8: error: xhlo-legalize-custom-calls: unsupported custom call target 'my_kernel'
// CHECK: FAIL {{.*}}Inputs/no_such_file.mlir: no such file
// CHECK-NEXT: 1 passed, 4 failed

// ONE: PASS {{.*}}Inputs/add_passes.mlir
// ONE-NEXT: 1 passed, 0 failed

// QUIET-NOT: PASS
// QUIET: FAIL {{.*}}multiply_fails.mlir
// QUIET-NEXT: 1 passed, 1 failed

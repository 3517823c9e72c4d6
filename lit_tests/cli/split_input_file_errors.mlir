// A failing chunk does not stop the others: their output is still written,
// the error names the line in the whole file, and the exit status is 1.
// RUN: not xhlo-opt %s --split-input-file 2> %t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR --input-file %t.err

// CHECK: func.func @good
// CHECK-NOT: @bad
// CHECK: // -----
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @also_good
// ERR: split_input_file_errors.mlir:21:8: error: custom op 'stablehlo.bogus' is unknown
// ERR-NEXT: {{^}}  %0 = stablehlo.bogus
// ERR-NEXT: {{^}}       ^
func.func @good() {
  return
}

// -----

func.func @bad() {
  %0 = stablehlo.bogus
}

// -----

func.func @also_good() {
  return
}

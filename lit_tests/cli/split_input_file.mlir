// --split-input-file processes each "// -----" chunk on its own and joins the
// outputs with "// -----"; diagnostics keep the line numbers of the whole file.
// RUN: xhlo-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: xhlo-opt %s --split-input-file --canonicalize --output-split-marker='// =====' \
// RUN:   | FileCheck %s --check-prefix=MARKER
// Without the flag the file is one module (the markers are comments).
// RUN: xhlo-opt %s --canonicalize | FileCheck %s --check-prefix=WHOLE

// CHECK-LABEL: func.func @first
// CHECK: arith.constant 3 : i32
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: // -----
// CHECK-NEXT: module {
// CHECK-LABEL: func.func @second
// CHECK: arith.constant 12 : i32
// MARKER: func.func @first
// MARKER: // =====
// MARKER-NEXT: module {
// MARKER-NEXT: func.func @second
// WHOLE: module {
// WHOLE: func.func @first
// WHOLE-NOT: // -----
// WHOLE-NOT: module
// WHOLE: func.func @second
func.func @first() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %0 = arith.addi %a, %b : i32
  return %0 : i32
}

// -----

func.func @second() -> i32 {
  %a = arith.constant 3 : i32
  %b = arith.constant 4 : i32
  %0 = arith.muli %a, %b : i32
  return %0 : i32
}

// --verify-diagnostics=only-expected checks the expected-* comments but lets
// other diagnostics pass (here the note that goes with the error).
// RUN: xhlo-opt %s --verify-diagnostics=only-expected
// RUN: not xhlo-opt %s --verify-diagnostics 2>&1 | FileCheck %s

// CHECK: error: unexpected note: see existing symbol definition here
func.func @twice() {
  return
}
// expected-error@+1 {{redefinition of symbol named 'twice'}}
func.func @twice() {
  return
}

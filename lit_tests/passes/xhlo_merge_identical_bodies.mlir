// RUN: xhlo-opt %s --xhlo-merge-identical-bodies | FileCheck %s

// @b1 and @b2 are the same code (they differ in what the caller captured, not in
// what they do): @b2 goes and both constants point at @b1. @b3 scales by
// another factor and stays. @outer1 and @outer2 differ only in the body they
// dispatch (@b1, @b2), so they are merged in the second round.

// CHECK-LABEL: func.func @main
// CHECK: constant @b1
// CHECK: constant @b1
// CHECK: constant @b3
// CHECK: constant @outer1
// CHECK: constant @outer1
// CHECK: func.func private @b1(
// CHECK-NOT: func.func private @b2(
// CHECK: func.func private @b3(
// CHECK: func.func private @outer1(
// CHECK-NOT: func.func private @outer2(
func.func @main(%p: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %f1 = constant @b1 : (!llvm.ptr, index, index) -> ()
  call_indirect %f1(%p, %c0, %c8) : (!llvm.ptr, index, index) -> ()
  %f2 = constant @b2 : (!llvm.ptr, index, index) -> ()
  call_indirect %f2(%p, %c0, %c8) : (!llvm.ptr, index, index) -> ()
  %f3 = constant @b3 : (!llvm.ptr, index, index) -> ()
  call_indirect %f3(%p, %c0, %c8) : (!llvm.ptr, index, index) -> ()
  %o1 = constant @outer1 : (!llvm.ptr, index, index) -> ()
  call_indirect %o1(%p, %c0, %c8) : (!llvm.ptr, index, index) -> ()
  %o2 = constant @outer2 : (!llvm.ptr, index, index) -> ()
  call_indirect %o2(%p, %c0, %c8) : (!llvm.ptr, index, index) -> ()
  return
}
func.func private @b1(%p: !llvm.ptr, %lo: index, %hi: index) attributes {xhlo.parallel_body} {
  %m = llvm.load %p : !llvm.ptr -> !llvm.ptr
  %c1 = arith.constant 1 : index
  scf.for %i = %lo to %hi step %c1 {
    %x = llvm.load %m : !llvm.ptr -> f32
    %two = arith.constant 2.0 : f32
    %y = arith.mulf %x, %two : f32
    llvm.store %y, %m : f32, !llvm.ptr
  }
  return
}
func.func private @b2(%p: !llvm.ptr, %lo: index, %hi: index) attributes {xhlo.parallel_body} {
  %m = llvm.load %p : !llvm.ptr -> !llvm.ptr
  %c1 = arith.constant 1 : index
  scf.for %i = %lo to %hi step %c1 {
    %x = llvm.load %m : !llvm.ptr -> f32
    %two = arith.constant 2.0 : f32
    %y = arith.mulf %x, %two : f32
    llvm.store %y, %m : f32, !llvm.ptr
  }
  return
}
func.func private @b3(%p: !llvm.ptr, %lo: index, %hi: index) attributes {xhlo.parallel_body} {
  %m = llvm.load %p : !llvm.ptr -> !llvm.ptr
  %c1 = arith.constant 1 : index
  scf.for %i = %lo to %hi step %c1 {
    %x = llvm.load %m : !llvm.ptr -> f32
    %three = arith.constant 3.0 : f32
    %y = arith.mulf %x, %three : f32
    llvm.store %y, %m : f32, !llvm.ptr
  }
  return
}
func.func private @outer1(%p: !llvm.ptr, %lo: index, %hi: index) attributes {xhlo.parallel_body} {
  %f = constant @b1 : (!llvm.ptr, index, index) -> ()
  call_indirect %f(%p, %lo, %hi) : (!llvm.ptr, index, index) -> ()
  return
}
func.func private @outer2(%p: !llvm.ptr, %lo: index, %hi: index) attributes {xhlo.parallel_body} {
  %f = constant @b2 : (!llvm.ptr, index, index) -> ()
  call_indirect %f(%p, %lo, %hi) : (!llvm.ptr, index, index) -> ()
  return
}

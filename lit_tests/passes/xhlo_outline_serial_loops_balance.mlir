// RUN: xhlo-opt %s --xhlo-outline-serial-loops="min-ops=30 balance-min-ops=3 balance-min-work=0 parts=2" | FileCheck %s

// Below min-ops, nests are outlined, largest first, only while the public function
// holds more than one part's share of the work (ops, plus 50 per loop): here the
// private function's loop is most of the rest, so the larger small nest (the
// square) moves and the smaller one (the fill) stays, which leaves @main at its share.
// CHECK-LABEL: func.func private @other
// CHECK-LABEL: func.func @main
// CHECK: %[[BODY:.*]] = constant @main_serial_0
// CHECK: call_indirect %[[BODY]]
// CHECK: scf.for
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @main_serial_0
// CHECK: arith.mulf
func.func private @other(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %out[%i] : memref<8xf32>
    %y = arith.addf %x, %one : f32
    %z = arith.mulf %y, %y : f32
    %w = arith.addf %z, %one : f32
    %v = arith.mulf %w, %w : f32
    memref.store %v, %out[%i] : memref<8xf32>
  }
  return
}
func.func @main(%in: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %in[%i] : memref<8xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %out[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %zero, %out[%i] : memref<8xf32>
  }
  return
}

// RUN: xhlo-opt %s --xhlo-outline-serial-loops="min-ops=4" --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --xhlo-outline-serial-loops="min-ops=100 balance-min-ops=4 balance-min-work=10 parts=2" --split-input-file | FileCheck %s --check-prefix=BALANCE

// A serial loop nest of a public function moves to its own function over
// [begin, end), with the captured memrefs in a stack struct as
// xhlo-parallelize-loops packs them, and is called once, over the whole range,
// through its function pointer. The small loop stays.
// CHECK-LABEL: func.func @prefix_sum
// CHECK-SAME: (%[[IN:.*]]: memref<1024xf32>, %[[OUT:.*]]: memref<1024xf32>)
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr)> : (i64) -> !llvm.ptr
// CHECK: llvm.store %{{.*}}, %[[SLOT]]
// CHECK: %[[BODY:.*]] = constant @prefix_sum_serial_0 : (!llvm.ptr, index, index) -> ()
// CHECK: call_indirect %[[BODY]](%[[SLOT]], %{{.*}}, %{{.*}}) : (!llvm.ptr, index, index) -> ()
// CHECK: scf.for
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @prefix_sum_serial_0
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr, %[[BEGIN:.*]]: index, %[[END:.*]]: index) attributes {xhlo.parallel_body}
// CHECK: llvm.load %[[CTX]] : !llvm.ptr -> !llvm.struct<(ptr, ptr)>
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %[[END]] step
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: memref.store
func.func @prefix_sum(%in: memref<1024xf32>, %out: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c1 to %c1024 step %c1 {
    %prev_i = arith.subi %i, %c1 : index
    %prev = memref.load %out[%prev_i] : memref<1024xf32>
    %x = memref.load %in[%i] : memref<1024xf32>
    %sum = arith.addf %prev, %x : f32
    memref.store %sum, %out[%i] : memref<1024xf32>
  }
  scf.for %i = %c0 to %c1 step %c1 {
    memref.store %zero, %out[%i] : memref<1024xf32>
  }
  return
}

// -----

// Loops of private functions, loops that yield values and loops calling the
// parallel-for runtime stay where they are.
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: call_indirect
// CHECK-LABEL: func.func @reduce
// CHECK-NOT: call_indirect
// CHECK: scf.for {{.*}} iter_args
func.func private @helper(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %out[%i] : memref<8xf32>
    %y = arith.addf %x, %one : f32
    %z = arith.mulf %y, %y : f32
    memref.store %z, %out[%i] : memref<8xf32>
  }
  return
}
func.func @reduce(%in: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %in[%i] : memref<8xf32>
    %y = arith.mulf %x, %x : f32
    %z = arith.addf %acc, %y : f32
    scf.yield %z : f32
  }
  return %sum : f32
}

// -----

// Balancing (second RUN line): small nests leave the public function while it holds
// more than one of two parts' work. Nests with the same ops become one function
// (xhlo-merge-identical-bodies), so each kind adds its work to the other part once
// but takes every copy's out of @layers: all four copies go.
// BALANCE-LABEL: func.func @layers
// BALANCE-COUNT-4: call_indirect
// BALANCE-NOT: scf.for
// BALANCE: return
func.func @layers(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>, %d: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %a[%i] : memref<64xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %b[%i] : memref<64xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %b[%i] : memref<64xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %c[%i] : memref<64xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %c[%i] : memref<64xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %d[%i] : memref<64xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %d[%i] : memref<64xf32>
  }
  return
}

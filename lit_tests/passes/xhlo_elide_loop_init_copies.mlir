// RUN: xhlo-opt %s --xhlo-elide-loop-init-copies --split-input-file | FileCheck %s

// A loop whose body only reads its copied starting value (a runtime call's input,
// a linalg input) and yields fresh buffers starts from the argument itself.

// CHECK-LABEL: func.func @reads_only
// CHECK-SAME: %[[ARG:[a-zA-Z0-9_]+]]: memref<8xf32>
// CHECK-NOT: memref.copy
// CHECK: scf.for {{.*}} iter_args(%[[X:.*]] = %[[ARG]], %[[OWNED:.*]] = %false)
// CHECK: func.call @xhlo_rt_op0(%[[X]], %{{.*}})
// CHECK: scf.if %[[OWNED]]
// CHECK-NEXT: memref.dealloc
// CHECK-NOT: memref.dealloc %[[ARG]]
// CHECK: return
func.func private @xhlo_rt_op0(memref<8xf32> {bufferization.access = "read"}, memref<8xf32> {bufferization.access = "write"})
func.func @reads_only(%arg: memref<8xf32>, %out: memref<8xf32>) {
  %false = arith.constant false
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %buf = memref.alloc() : memref<8xf32>
  memref.copy %arg, %buf : memref<8xf32> to memref<8xf32>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %buf, %owned = %false) -> (memref<8xf32>, i1) {
    %y = memref.alloc() : memref<8xf32>
    func.call @xhlo_rt_op0(%x, %y) : (memref<8xf32>, memref<8xf32>) -> ()
    %base, %offset, %size, %stride = memref.extract_strided_metadata %x : memref<8xf32> -> memref<f32>, index, index, index
    scf.if %owned {
      memref.dealloc %base : memref<f32>
    }
    scf.yield %y, %true : memref<8xf32>, i1
  }
  memref.copy %r#0, %out : memref<8xf32> to memref<8xf32>
  memref.dealloc %buf : memref<8xf32>
  memref.dealloc %r#0 : memref<8xf32>
  return
}

// -----

// The copy reaches the loop through a memref.cast to the dynamic layout of its iter_arg.

// CHECK-LABEL: func.func @through_a_cast
// CHECK-SAME: %[[ARG:[a-zA-Z0-9_]+]]: memref<8xf32>
// CHECK-NOT: memref.copy %[[ARG]]
// CHECK: %[[CAST:.*]] = memref.cast %[[ARG]] : memref<8xf32> to memref<8xf32, strided<[?], offset: ?>>
// CHECK: iter_args(%{{.*}} = %[[CAST]], %{{.*}} = %false)
func.func @through_a_cast(%arg: memref<8xf32>, %out: memref<8xf32>) {
  %false = arith.constant false
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %buf = memref.alloc() : memref<8xf32>
  memref.copy %arg, %buf : memref<8xf32> to memref<8xf32>
  %cast = memref.cast %buf : memref<8xf32> to memref<8xf32, strided<[?], offset: ?>>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %cast, %owned = %false) -> (memref<8xf32, strided<[?], offset: ?>>, i1) {
    %y = memref.alloc() : memref<16xf32>
    %head = memref.subview %y[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
    memref.copy %x, %head : memref<8xf32, strided<[?], offset: ?>> to memref<8xf32, strided<[1]>>
    %next = memref.cast %head : memref<8xf32, strided<[1]>> to memref<8xf32, strided<[?], offset: ?>>
    %base, %offset, %size, %stride = memref.extract_strided_metadata %x : memref<8xf32, strided<[?], offset: ?>> -> memref<f32>, index, index, index
    scf.if %owned {
      memref.dealloc %base : memref<f32>
    }
    scf.yield %next, %true : memref<8xf32, strided<[?], offset: ?>>, i1
  }
  memref.copy %r#0, %out : memref<8xf32, strided<[?], offset: ?>> to memref<8xf32>
  memref.dealloc %buf : memref<8xf32>
  return
}

// -----

// The body writes its starting value in place: the copy stays.

// CHECK-LABEL: func.func @writes
// CHECK: memref.copy %arg0, %[[BUF:.*]] :
// CHECK: iter_args(%{{.*}} = %[[BUF]]
func.func @writes(%arg: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %buf = memref.alloc() : memref<8xf32>
  memref.copy %arg, %buf : memref<8xf32> to memref<8xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %buf) -> (memref<8xf32>) {
    %y = memref.alloc() : memref<8xf32>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
    ^bb0(%in: f32, %o: f32):
      linalg.yield %in : f32
    }
    linalg.fill ins(%zero : f32) outs(%x : memref<8xf32>)
    scf.yield %y : memref<8xf32>
  }
  memref.copy %r, %out : memref<8xf32> to memref<8xf32>
  memref.dealloc %buf : memref<8xf32>
  return
}

// -----

// A loop that may run zero times would return the argument itself: the copy stays.

// CHECK-LABEL: func.func @maybe_no_trip
// CHECK: memref.copy %arg0, %[[BUF:.*]] :
// CHECK: iter_args(%{{.*}} = %[[BUF]]
func.func @maybe_no_trip(%arg: memref<8xf32>, %n: index, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = memref.alloc() : memref<8xf32>
  memref.copy %arg, %buf : memref<8xf32> to memref<8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %buf) -> (memref<8xf32>) {
    %y = memref.alloc() : memref<8xf32>
    memref.copy %x, %y : memref<8xf32> to memref<8xf32>
    scf.yield %y : memref<8xf32>
  }
  memref.copy %r, %out : memref<8xf32> to memref<8xf32>
  memref.dealloc %buf : memref<8xf32>
  return
}

// -----

// The body passes its value through to the next iteration: the copy stays.

// CHECK-LABEL: func.func @passes_through
// CHECK: memref.copy %arg0, %[[BUF:.*]] :
// CHECK: iter_args(%{{.*}} = %[[BUF]]
func.func @passes_through(%arg: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %buf = memref.alloc() : memref<8xf32>
  memref.copy %arg, %buf : memref<8xf32> to memref<8xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %buf) -> (memref<8xf32>) {
    scf.yield %x : memref<8xf32>
  }
  memref.copy %r, %out : memref<8xf32> to memref<8xf32>
  memref.dealloc %buf : memref<8xf32>
  return
}

// -----

// The body yields the argument, which the loop's result would then free: the copy stays.

// CHECK-LABEL: func.func @yields_an_outer_buffer
// CHECK: memref.copy %arg0, %[[BUF:.*]] :
// CHECK: iter_args(%{{.*}} = %[[BUF]]
func.func @yields_an_outer_buffer(%arg: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %buf = memref.alloc() : memref<8xf32>
  memref.copy %arg, %buf : memref<8xf32> to memref<8xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %buf) -> (memref<8xf32>) {
    memref.copy %x, %out : memref<8xf32> to memref<8xf32>
    scf.yield %arg : memref<8xf32>
  }
  memref.dealloc %buf : memref<8xf32>
  return
}

// -----

// Something writes the argument (here the loop body): the copy stays.

// CHECK-LABEL: func.func @argument_written
// CHECK: memref.copy %arg0, %[[BUF:.*]] :
// CHECK: iter_args(%{{.*}} = %[[BUF]]
func.func @argument_written(%arg: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %buf = memref.alloc() : memref<8xf32>
  memref.copy %arg, %buf : memref<8xf32> to memref<8xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %buf) -> (memref<8xf32>) {
    %y = memref.alloc() : memref<8xf32>
    memref.copy %x, %y : memref<8xf32> to memref<8xf32>
    linalg.fill ins(%zero : f32) outs(%arg : memref<8xf32>)
    scf.yield %y : memref<8xf32>
  }
  memref.copy %r, %out : memref<8xf32> to memref<8xf32>
  memref.dealloc %buf : memref<8xf32>
  return
}

// RUN: xhlo-opt %s --xhlo-loop-annotations --split-input-file | FileCheck %s
// RUN: xhlo-opt %s --convert-scf-to-cf --convert-cf-to-llvm --xhlo-loop-annotations --split-input-file | FileCheck %s --check-prefix=SCF

// The back edge's discardable llvm.loop_annotation (what convert-cf-to-llvm leaves)
// becomes the branch's own loop_annotation, which the translation emits as !llvm.loop;
// branches without one are left alone.
// CHECK: #[[NOUNROLL:.*]] = #llvm.loop_annotation<unroll = #{{.*}}>
// CHECK-LABEL: llvm.func @copy_rows
// CHECK: llvm.br ^bb1(%{{.*}} : i64)
// CHECK-NOT: loop_annotation
// CHECK: llvm.cond_br %{{.*}}, ^bb2, ^bb3
// CHECK: llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #[[NOUNROLL]]}
// CHECK-NOT: {llvm.loop_annotation
// CHECK-LABEL: func.func @marked
#unroll = #llvm.loop_unroll<disable = true>
#no_unroll = #llvm.loop_annotation<unroll = #unroll>
llvm.func @copy_rows(%n: i64, %dst: !llvm.ptr, %src: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %more = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %more, ^bb2, ^bb3
^bb2:
  "llvm.intr.memcpy"(%dst, %src, %n) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
  %next = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%next : i64) {llvm.loop_annotation = #no_unroll}
^bb3:
  llvm.return
}

// -----

// From an scf.for marked as xhlo-split-buffer-fills marks its loops.
// SCF-LABEL: func.func @marked
// SCF: llvm.br ^{{.*}}(%{{.*}} : i64) {loop_annotation = #{{.*}}}
func.func @marked(%n: index, %p: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    memref.store %z, %p[%i] : memref<?xf32>
  } {llvm.loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<disable = true>>}
  return
}

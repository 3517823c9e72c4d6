// RUN: xhlo-opt %s --xhlo-bf16-as-i16 --split-input-file --verify-diagnostics | FileCheck %s

// bf16 data in the LLVM dialect becomes i16: loads, selects, stores and phis;
// the bitcasts to i16 vanish. Constants stay bf16, read through a bitcast (folded by LLVM).
// CHECK-LABEL: llvm.func @moves
// CHECK: %[[C:.*]] = llvm.mlir.constant(dense<1.000000e+00> : vector<9xbf16>) : vector<9xbf16>
// CHECK: %[[ONE:.*]] = llvm.bitcast %[[C]] : vector<9xbf16> to vector<9xi16>
// CHECK: %[[V:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<9xi16>
// CHECK-NEXT: llvm.zext %[[V]] : vector<9xi16> to vector<9xi32>
// CHECK: llvm.br ^bb1(%[[V]] : vector<9xi16>)
// CHECK: ^bb1(%[[PHI:.*]]: vector<9xi16>):
// CHECK: %[[S:.*]] = llvm.select %{{.*}}, %[[PHI]], %[[ONE]] : vector<9xi1>, vector<9xi16>
// CHECK: llvm.store %[[S]], %{{.*}} {alignment = 2 : i64} : vector<9xi16>, !llvm.ptr
llvm.func @moves(%p: !llvm.ptr, %c: vector<9xi1>) {
  %one = llvm.mlir.constant(dense<1.0> : vector<9xbf16>) : vector<9xbf16>
  %v = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<9xbf16>
  %bits = llvm.bitcast %v : vector<9xbf16> to vector<9xi16>
  %wide = llvm.zext %bits : vector<9xi16> to vector<9xi32>
  llvm.br ^bb1(%v : vector<9xbf16>)
^bb1(%phi: vector<9xbf16>):
  %s = llvm.select %c, %phi, %one : vector<9xi1>, vector<9xbf16>
  llvm.store %s, %p {alignment = 2 : i64} : vector<9xbf16>, !llvm.ptr
  llvm.return
}

// -----

// A hardware truncation keeps its bf16 result; its users read it as i16.
// CHECK-LABEL: llvm.func @hardware_truncation
// CHECK: %[[T:.*]] = llvm.fptrunc %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: %[[B:.*]] = llvm.bitcast %[[T]] : vector<16xbf16> to vector<16xi16>
// CHECK: llvm.store %[[B]], %{{.*}} : vector<16xi16>, !llvm.ptr
llvm.func @hardware_truncation(%x: vector<16xf32>, %p: !llvm.ptr) {
  %t = llvm.fptrunc %x : vector<16xf32> to vector<16xbf16>
  llvm.store %t, %p : vector<16xbf16>, !llvm.ptr
  llvm.return
}

// -----

llvm.func @arithmetic(%x: bf16, %p: !llvm.ptr) {
  // expected-error@+1 {{a bf16 float operation reached the LLVM dialect}}
  %0 = llvm.fadd %x, %x : bf16
  llvm.store %0, %p : bf16, !llvm.ptr
  llvm.return
}

// -----

// Constants of n-D vectors (arrays of vectors: no bitcast takes them) hold the same bits
// as i16: 1.0 = 0x3F80, 2.0 = 0x4000, a NaN 0x7FC0, -3.5 = 0xC060, +inf 0x7F80.
// CHECK-LABEL: llvm.func @nd_constants
// CHECK: llvm.mlir.constant(dense<{{\[}}[16256, 16384], [32704, -16288]]> : vector<2x2xi16>) : !llvm.array<2 x vector<2xi16>>
// CHECK: llvm.mlir.constant(dense<32640> : vector<3x1xi16>) : !llvm.array<3 x vector<1xi16>>
llvm.func @nd_constants() -> !llvm.array<3 x vector<1xbf16>> {
  %0 = llvm.mlir.constant(dense<[[1.0, 2.0], [0x7FC0, -3.5]]> : vector<2x2xbf16>) : !llvm.array<2 x vector<2xbf16>>
  %1 = llvm.mlir.constant(dense<0x7F80> : vector<3x1xbf16>) : !llvm.array<3 x vector<1xbf16>>
  llvm.return %1 : !llvm.array<3 x vector<1xbf16>>
}

// -----

// vdpbf16ps (xhlo-lower-bf16-gemms) takes bf16 vectors: it is handed the i16 bits
// of its loaded operands as bf16 again.
// CHECK-LABEL: llvm.func @bf16_dot
// CHECK: %[[A:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<32xi16>
// CHECK: %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<32xi16>
// CHECK: %[[A16:.*]] = llvm.bitcast %[[A]] : vector<32xi16> to vector<32xbf16>
// CHECK: %[[B16:.*]] = llvm.bitcast %[[B]] : vector<32xi16> to vector<32xbf16>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%{{.*}}, %[[A16]], %[[B16]]) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
llvm.func @bf16_dot(%acc: vector<16xf32>, %p: !llvm.ptr, %q: !llvm.ptr) -> vector<16xf32> {
  %a = llvm.load %p : !llvm.ptr -> vector<32xbf16>
  %b = llvm.load %q : !llvm.ptr -> vector<32xbf16>
  %0 = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%acc, %a, %b) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
  llvm.return %0 : vector<16xf32>
}

// --emit-bytecode writes MLIR bytecode; xhlo-opt reads it back from a file or
// stdin, so the IR survives the round trip.
// RUN: xhlo-opt %s --emit-bytecode | xhlo-opt | FileCheck %s
// RUN: xhlo-opt %s --emit-bytecode -o %t.mlirbc
// RUN: %python -c "import sys; sys.exit(open(sys.argv[1], 'rb').read(4) != b'ML\xefR')" %t.mlirbc
// RUN: xhlo-opt %t.mlirbc --cse | FileCheck %s --check-prefix=CSE
// RUN: xhlo-opt - --cse --emit-bytecode < %t.mlirbc | xhlo-opt - | FileCheck %s --check-prefix=CSE
// Several split chunks cannot go into one bytecode file.
// RUN: not xhlo-opt %s --emit-bytecode --split-input-file 2>&1 | FileCheck %s --check-prefix=SPLIT

// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[TWO:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<3xf32>
// CHECK-NEXT: %[[TWO_AGAIN:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<3xf32>
// CHECK-NEXT: %[[Y:.*]] = stablehlo.multiply %[[X]], %[[TWO]] : tensor<3xf32>
// CHECK-NEXT: %[[Z:.*]] = stablehlo.multiply %[[Y]], %[[TWO_AGAIN]] : tensor<3xf32>
// CHECK-NEXT: return %[[Z]] : tensor<3xf32>
// CSE-LABEL: func.func @scale
// CSE-NEXT: %[[TWO:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<3xf32>
// CSE-NEXT: %[[Y:.*]] = stablehlo.multiply %{{.*}}, %[[TWO]]
// CSE-NEXT: stablehlo.multiply %[[Y]], %[[TWO]]
// SPLIT: xhlo-opt: error: --emit-bytecode cannot write several --split-input-file chunks
func.func @scale(%x: tensor<3xf32>) -> tensor<3xf32> {
  %two = stablehlo.constant dense<2.0> : tensor<3xf32>
  %two_again = stablehlo.constant dense<2.0> : tensor<3xf32>
  %0 = stablehlo.multiply %x, %two : tensor<3xf32>
  %1 = stablehlo.multiply %0, %two_again : tensor<3xf32>
  return %1 : tensor<3xf32>
}

// --inputs/--outputs carry arguments and results as npz files (arg0, arg1 ...
// in, out0, out1 ... out).
// RUN: %python -c "import numpy as np; np.savez('%t.in.npz', arg0=np.array([1, 2, 3], np.float32), arg1=np.array([4, 5, 6], np.float32))"
// RUN: xhlo-run %s --inputs %t.in.npz --outputs %t.out.npz | FileCheck %s
// RUN: %python -c "import numpy as np; d = np.load('%t.out.npz'); print(d['out0'].tolist(), d['out1'].tolist())" \
// RUN:   | FileCheck %s --check-prefix=RESULTS

// CHECK: PASS {{.*}}inputs_outputs.mlir
// CHECK-NEXT: 1 passed, 0 failed
// RESULTS: [4.0, 10.0, 18.0] [-3.0, -3.0, -3.0]
func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = stablehlo.multiply %a, %b : tensor<3xf32>
  %1 = stablehlo.subtract %a, %b : tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

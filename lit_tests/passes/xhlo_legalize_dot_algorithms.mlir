// RUN: xhlo-opt %s --xhlo-legalize-dot-algorithms | FileCheck %s

// The algorithm goes; dimensions and operands stay.
// CHECK-LABEL: func.func @preset
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0] :
// CHECK-NOT: algorithm
func.func @preset(%a: tensor<4x5xf32>, %b: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16,
    rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1,
    num_primitive_operations = 3, allow_imprecise_accumulation = false> : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

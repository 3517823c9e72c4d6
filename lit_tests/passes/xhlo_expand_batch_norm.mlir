// RUN: xhlo-opt %s --xhlo-expand-batch-norm --split-input-file --verify-diagnostics | FileCheck %s

// Training: mean and biased variance are reduced over every dimension but the
// feature dimension (two passes: the variance sums squared centered values).

// CHECK-LABEL: func.func @training
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<2x3xf32>, %[[SCALE:[a-zA-Z0-9_]+]]: tensor<3xf32>, %[[OFFSET:[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK: %[[SUM:.*]] = stablehlo.reduce(%[[X]] init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: %[[COUNT:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<3xf32>
// CHECK: %[[MEAN:.*]] = stablehlo.divide %[[SUM]], %[[COUNT]]
// CHECK: %[[MEAN_X:.*]] = stablehlo.broadcast_in_dim %[[MEAN]], dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[CENTERED:.*]] = stablehlo.subtract %[[X]], %[[MEAN_X]]
// CHECK: %[[SQUARES:.*]] = stablehlo.multiply %[[CENTERED]], %[[CENTERED]]
// CHECK: %[[SQ_SUM:.*]] = stablehlo.reduce(%[[SQUARES]] init: %{{.*}}) applies stablehlo.add across dimensions = [0]
// CHECK: %[[VARIANCE:.*]] = stablehlo.divide %[[SQ_SUM]], %{{.*}} : tensor<3xf32>
// CHECK: %[[EPS:.*]] = stablehlo.constant dense<1.000000e-03> : tensor<3xf32>
// CHECK: %[[VAR_EPS:.*]] = stablehlo.add %[[VARIANCE]], %[[EPS]]
// CHECK: %[[STD:.*]] = stablehlo.sqrt %[[VAR_EPS]]
// CHECK: %[[INV_STD:.*]] = stablehlo.divide %{{.*}}, %[[STD]]
// CHECK: %[[FACTOR:.*]] = stablehlo.multiply %[[SCALE]], %[[INV_STD]]
// CHECK: %[[FACTOR_X:.*]] = stablehlo.broadcast_in_dim %[[FACTOR]], dims = [1]
// CHECK: %[[SCALED:.*]] = stablehlo.multiply %[[CENTERED]], %[[FACTOR_X]]
// CHECK: %[[OFFSET_X:.*]] = stablehlo.broadcast_in_dim %[[OFFSET]], dims = [1]
// CHECK: %[[Y:.*]] = stablehlo.add %[[SCALED]], %[[OFFSET_X]]
// CHECK: return %[[Y]], %[[MEAN]], %[[VARIANCE]]
// CHECK-NOT: stablehlo.batch_norm
func.func @training(%x: tensor<2x3xf32>, %scale: tensor<3xf32>, %offset: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %r:3 = "stablehlo.batch_norm_training"(%x, %scale, %offset) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Inference with the feature dimension first: no reduction, the f32 epsilon is
// widened to f64.

// CHECK-LABEL: func.func @inference_feature_first
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<3x2x4xf64>, %[[SCALE:[a-zA-Z0-9_]+]]: tensor<3xf64>, %[[OFFSET:[a-zA-Z0-9_]+]]: tensor<3xf64>, %[[MEAN:[a-zA-Z0-9_]+]]: tensor<3xf64>, %[[VARIANCE:[a-zA-Z0-9_]+]]: tensor<3xf64>
// CHECK-NOT: stablehlo.reduce
// CHECK: %[[MEAN_X:.*]] = stablehlo.broadcast_in_dim %[[MEAN]], dims = [0] : (tensor<3xf64>) -> tensor<3x2x4xf64>
// CHECK: %[[CENTERED:.*]] = stablehlo.subtract %[[X]], %[[MEAN_X]]
// CHECK: %[[EPS:.*]] = stablehlo.constant dense<9.9999997473787516E-6> : tensor<3xf64>
// CHECK: stablehlo.add %[[VARIANCE]], %[[EPS]]
// CHECK: %[[FACTOR:.*]] = stablehlo.multiply %[[SCALE]], %{{.*}}
// CHECK: %[[FACTOR_X:.*]] = stablehlo.broadcast_in_dim %[[FACTOR]], dims = [0]
// CHECK: %[[SCALED:.*]] = stablehlo.multiply %[[CENTERED]], %[[FACTOR_X]]
// CHECK: %[[OFFSET_X:.*]] = stablehlo.broadcast_in_dim %[[OFFSET]], dims = [0]
// CHECK: %[[Y:.*]] = stablehlo.add %[[SCALED]], %[[OFFSET_X]]
// CHECK: return %[[Y]]
func.func @inference_feature_first(%x: tensor<3x2x4xf64>, %scale: tensor<3xf64>, %offset: tensor<3xf64>, %mean: tensor<3xf64>, %variance: tensor<3xf64>) -> tensor<3x2x4xf64> {
  %r = "stablehlo.batch_norm_inference"(%x, %scale, %offset, %mean, %variance) {epsilon = 1.0e-5 : f32, feature_index = 0 : i64} : (tensor<3x2x4xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<3x2x4xf64>
  return %r : tensor<3x2x4xf64>
}

// -----

// Grad: grad_offset = sum(dy), grad_scale = sum(dy * centered) / std, and
// grad_x = scale / std * (dy - mean(dy) - centered * mean(dy * centered) / (var + eps)).

// CHECK-LABEL: func.func @grad
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x2xf32>, %[[SCALE:[a-zA-Z0-9_]+]]: tensor<2xf32>, %[[MEAN:[a-zA-Z0-9_]+]]: tensor<2xf32>, %[[VARIANCE:[a-zA-Z0-9_]+]]: tensor<2xf32>, %[[DY:[a-zA-Z0-9_]+]]: tensor<4x2xf32>
// CHECK: %[[CENTERED:.*]] = stablehlo.subtract %[[X]], %{{.*}}
// CHECK: %[[INV_STD:.*]] = stablehlo.divide %{{.*}}, %{{.*}} : tensor<2xf32>
// CHECK: %[[GRAD_OFFSET:.*]] = stablehlo.reduce(%[[DY]] init: %{{.*}}) applies stablehlo.add across dimensions = [0]
// CHECK: %[[PRODUCT:.*]] = stablehlo.multiply %[[DY]], %[[CENTERED]]
// CHECK: %[[DOT:.*]] = stablehlo.reduce(%[[PRODUCT]] init: %{{.*}}) applies stablehlo.add across dimensions = [0]
// CHECK: %[[GRAD_SCALE:.*]] = stablehlo.multiply %[[DOT]], %[[INV_STD]]
// CHECK: %[[COUNT:.*]] = stablehlo.constant dense<4.000000e+00> : tensor<2xf32>
// CHECK: %[[MEAN_DY:.*]] = stablehlo.divide %[[GRAD_OFFSET]], %[[COUNT]]
// CHECK: %[[FACTOR:.*]] = stablehlo.multiply %[[SCALE]], %[[INV_STD]]
// CHECK: %[[FACTOR_X:.*]] = stablehlo.broadcast_in_dim %[[FACTOR]], dims = [1]
// CHECK: %[[GRAD_X:.*]] = stablehlo.multiply %{{.*}}, %[[FACTOR_X]] : tensor<4x2xf32>
// CHECK: return %[[GRAD_X]], %[[GRAD_SCALE]], %[[GRAD_OFFSET]]
func.func @grad(%x: tensor<4x2xf32>, %scale: tensor<2xf32>, %mean: tensor<2xf32>, %variance: tensor<2xf32>, %dy: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %r:3 = "stablehlo.batch_norm_grad"(%x, %scale, %mean, %variance, %dy) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %r#0, %r#1, %r#2 : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// bf16 is computed in f32 and rounded once at the end.

// CHECK-LABEL: func.func @inference_bf16
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x2xbf16>
// CHECK: stablehlo.convert %[[X]] : (tensor<4x2xbf16>) -> tensor<4x2xf32>
// CHECK: %[[Y:.*]] = stablehlo.add %{{.*}}, %{{.*}} : tensor<4x2xf32>
// CHECK: %[[NARROW:.*]] = stablehlo.convert %[[Y]] : (tensor<4x2xf32>) -> tensor<4x2xbf16>
// CHECK: return %[[NARROW]]
func.func @inference_bf16(%x: tensor<4x2xbf16>, %v: tensor<2xbf16>) -> tensor<4x2xbf16> {
  %r = "stablehlo.batch_norm_inference"(%x, %v, %v, %v, %v) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<4x2xbf16>, tensor<2xbf16>, tensor<2xbf16>, tensor<2xbf16>, tensor<2xbf16>) -> tensor<4x2xbf16>
  return %r : tensor<4x2xbf16>
}

// -----

func.func @dynamic_operand(%x: tensor<?x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>) -> tensor<?x3xf32> {
  // expected-error@+1 {{xhlo-expand-batch-norm: 'stablehlo.batch_norm_training' needs a statically shaped operand, got tensor<?x3xf32>}}
  %r:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %r#0 : tensor<?x3xf32>
}

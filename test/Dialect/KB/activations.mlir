// RUN: kb-opt %s | kb-opt | FileCheck %s
// RUN: kb-opt %s --mlir-print-op-generic | kb-opt | FileCheck %s
// The activations and simple math ops of issue #45 round-trip: each prints
// in its declarative form (constants as f32), in f32 and in 16-bit types.

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[A:.+]] = kb.selu %{{.*}} : tensor<4x8xf32>
  %0 = kb.selu %x : tensor<4x8xf32>
  // CHECK: %[[B:.+]] = kb.hardsigmoid %[[A]] : tensor<4x8xf32>
  %1 = kb.hardsigmoid %0 : tensor<4x8xf32>
  // CHECK: %[[C:.+]] = kb.hardswish %[[B]] : tensor<4x8xf32>
  %2 = kb.hardswish %1 : tensor<4x8xf32>
  // CHECK: %[[D:.+]] = kb.mish %[[C]] : tensor<4x8xf32>
  %3 = kb.mish %2 : tensor<4x8xf32>
  // CHECK: %[[E:.+]] = kb.softsign %[[D]] : tensor<4x8xf32>
  %4 = kb.softsign %3 : tensor<4x8xf32>
  // CHECK: %[[F:.+]] = kb.abs %[[E]] : tensor<4x8xf32>
  %5 = kb.abs %4 : tensor<4x8xf32>
  // CHECK: %[[G:.+]] = kb.neg %[[F]] : tensor<4x8xf32>
  %6 = kb.neg %5 : tensor<4x8xf32>
  // CHECK: %[[H:.+]] = kb.sqrt %[[G]] : tensor<4x8xf32>
  %7 = kb.sqrt %6 : tensor<4x8xf32>
  // CHECK: %[[I:.+]] = kb.rsqrt %[[H]] : tensor<4x8xf32>
  %8 = kb.rsqrt %7 : tensor<4x8xf32>
  // CHECK: kb.log %[[I]] : tensor<4x8xf32>
  %9 = kb.log %8 : tensor<4x8xf32>
  return %9 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @with_constants
func.func @with_constants(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: kb.softplus %{{.*}} beta(2.000000e+00) threshold(1.500000e+01) : tensor<4x8xf32>
  %0 = kb.softplus %x beta(2.0) threshold(15.0) : tensor<4x8xf32>
  // CHECK: kb.elu %{{.*}} alpha(5.000000e-01) : tensor<4x8xf32>
  %1 = kb.elu %0 alpha(0.5) : tensor<4x8xf32>
  // CHECK: kb.hardtanh %{{.*}} min_val(-2.000000e+00) max_val(3.000000e+00) : tensor<4x8xf32>
  %2 = kb.hardtanh %1 min_val(-2.0) max_val(3.0) : tensor<4x8xf32>
  // CHECK: kb.clamp %{{.*}} min(0.000000e+00) max(6.000000e+00) : tensor<4x8xf32>
  %3 = kb.clamp %2 min(0.0) max(6.0) : tensor<4x8xf32>
  // CHECK: kb.clamp %{{.*}} min(1.000000e+00) : tensor<4x8xf32>
  %4 = kb.clamp %3 min(1.0) : tensor<4x8xf32>
  // CHECK: kb.clamp %{{.*}} max(5.000000e+00) : tensor<4x8xf32>
  %5 = kb.clamp %4 max(5.0) : tensor<4x8xf32>
  // min == max is allowed (as in PyTorch)
  // CHECK: kb.clamp %{{.*}} min(2.000000e+00) max(2.000000e+00) : tensor<4x8xf32>
  %6 = kb.clamp %5 min(2.0) max(2.0) : tensor<4x8xf32>
  // CHECK: kb.minimum %{{.*}}, %{{.*}} : tensor<4x8xf32>
  %7 = kb.minimum %6, %y : tensor<4x8xf32>
  // CHECK: kb.maximum %{{.*}}, %{{.*}} : tensor<4x8xf32>
  %8 = kb.maximum %7, %x : tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @half
func.func @half(%x: tensor<4x8xbf16>, %h: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // CHECK: kb.mish %{{.*}} : tensor<4x8xbf16>
  %0 = kb.mish %x : tensor<4x8xbf16>
  // CHECK: kb.softplus %{{.*}} beta(1.000000e+00) threshold(2.000000e+01) : tensor<4x8xf16>
  %1 = kb.softplus %h beta(1.0) threshold(20.0) : tensor<4x8xf16>
  // CHECK: kb.maximum %{{.*}}, %{{.*}} : tensor<4x8xf16>
  %2 = kb.maximum %1, %h : tensor<4x8xf16>
  return %2 : tensor<4x8xf16>
}

// RUN: kb-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @scale_by_one
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NOT: kb.scale
// CHECK: return %[[X]]
func.func @scale_by_one(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.scale %x by 1.0 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @dropout_p_zero
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NOT: kb.dropout
// CHECK: return %[[X]]
func.func @dropout_p_zero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.dropout %x p(0.0) seed(7) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A scale by another factor and a real dropout stay.
// CHECK-LABEL: func.func @kept
// CHECK: kb.scale
// CHECK: kb.dropout
func.func @kept(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.scale %x by 2.0 : tensor<4x8xf32>
  %1 = kb.dropout %0 p(0.5) seed(7) : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// RUN: kb-opt %s --kb-fuse-elementwise -split-input-file | FileCheck %s

// Norms are anchors as a softmax is: the chain feeding only the norm's
// input becomes its prologue, a chain reading its result its epilogue; the
// weight and bias stay fusion inputs. kb.reduce fuses with nothing.

// Residual add + layer_norm: one kb.fusion.
// CHECK-LABEL: func.func @residual_layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<64x128xf32>, %[[R:.+]]: tensor<64x128xf32>, %[[W:.+]]: tensor<128xf32>, %[[B:.+]]: tensor<128xf32>)
// CHECK: %[[F:.+]] = kb.fusion ins(%[[X]], %[[R]], %[[W]], %[[B]] : tensor<64x128xf32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128xf32>) {
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<64x128xf32>, %[[A1:.+]]: tensor<64x128xf32>, %[[A2:.+]]: tensor<128xf32>, %[[A3:.+]]: tensor<128xf32>):
// CHECK-NEXT: %[[S:.+]] = kb.add %[[A0]], %[[A1]]
// CHECK-NEXT: %[[N:.+]] = kb.layer_norm %[[S]], %[[A2]], %[[A3]]
// CHECK-NEXT: kb.yield %[[N]]
// CHECK: return %[[F]]
func.func @residual_layer_norm(%x: tensor<64x128xf32>, %r: tensor<64x128xf32>, %w: tensor<128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %0 = kb.add %x, %r : tensor<64x128xf32>
  %1 = kb.layer_norm %0, %w, %b eps(1.0e-05) : tensor<64x128xf32>, tensor<128xf32>, tensor<128xf32> -> tensor<64x128xf32>
  return %1 : tensor<64x128xf32>
}

// -----

// Dropout + rms_norm + an epilogue (scale): prologue and epilogue in one.
// CHECK-LABEL: func.func @prologue_and_epilogue
// CHECK: kb.fusion
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kb.dropout
// CHECK-NEXT: kb.rms_norm
// CHECK-NEXT: kb.scale
// CHECK-NEXT: kb.yield
// CHECK-NOT: kb.fusion
func.func @prologue_and_epilogue(%x: tensor<64x128xbf16>, %w: tensor<128xbf16>) -> tensor<64x128xbf16> {
  %0 = kb.dropout %x p(0.1) seed(3) : tensor<64x128xbf16>
  %1 = kb.rms_norm %0, %w eps(1.0e-06) : tensor<64x128xbf16>, tensor<128xbf16> -> tensor<64x128xbf16>
  %2 = kb.scale %1 by 2.0 : tensor<64x128xbf16>
  return %2 : tensor<64x128xbf16>
}

// -----

// Negative: the residual sum is returned too (a transformer keeps it for
// the next block), so the add stays its own kernel and the norm reads it.
// CHECK-LABEL: func.func @residual_kept
// CHECK-NOT: kb.fusion
// CHECK: %[[S:.+]] = kb.add
// CHECK: kb.layer_norm %[[S]]
func.func @residual_kept(%x: tensor<64x128xf32>, %r: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %0 = kb.add %x, %r : tensor<64x128xf32>
  %1 = kb.layer_norm %0 eps(1.0e-05) : tensor<64x128xf32> -> tensor<64x128xf32>
  return %0, %1 : tensor<64x128xf32>, tensor<64x128xf32>
}

// -----

// Negative: a reduce is no anchor; the relu before it stays a kernel.
// CHECK-LABEL: func.func @reduce_alone
// CHECK-NOT: kb.fusion
// CHECK: kb.relu
// CHECK: kb.reduce
func.func @reduce_alone(%x: tensor<64x128xf32>) -> tensor<64xf32> {
  %0 = kb.relu %x : tensor<64x128xf32>
  %1 = kb.reduce %0 sum : tensor<64x128xf32> -> tensor<64xf32>
  return %1 : tensor<64xf32>
}

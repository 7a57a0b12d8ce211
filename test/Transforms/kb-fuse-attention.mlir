// RUN: kb-opt %s --kb-fuse-attention -split-input-file -verify-diagnostics | FileCheck %s

// kb-fuse-attention: q k^T -> [scale] -> [mask, causal_mask] -> softmax ->
// [convert] -> @ v becomes one kb.attention, with a remark at the last
// matmul; a chain that does not fit stays as it is, and the remark says why
// (a note points at the link that broke it).

// CHECK-LABEL: func.func @scale_mask
// CHECK-SAME: (%[[Q:.+]]: tensor<8x128x64xf32>, %[[K:.+]]: tensor<8x256x64xf32>, %[[V:.+]]: tensor<8x256x32xf32>, %[[M:.+]]: tensor<8x128x256xf32>)
// CHECK-NEXT: %[[O:.+]] = kb.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]]) scale(1.250000e-01) precision(tf32) : tensor<8x128x64xf32>, tensor<8x256x64xf32>, tensor<8x256x32xf32>, tensor<8x128x256xf32> -> tensor<8x128x32xf32>
// CHECK-NEXT: return %[[O]]
func.func @scale_mask(%q: tensor<8x128x64xf32>, %k: tensor<8x256x64xf32>, %v: tensor<8x256x32xf32>, %m: tensor<8x128x256xf32>) -> tensor<8x128x32xf32> {
  %0 = kb.matmul %q, %k precision(tf32) transpose_b : tensor<8x128x64xf32>, tensor<8x256x64xf32> -> tensor<8x128x256xf32>
  %1 = kb.scale %0 by 0.125 : tensor<8x128x256xf32>
  %2 = kb.add %1, %m : tensor<8x128x256xf32>
  %3 = kb.softmax %2 : tensor<8x128x256xf32>
  // expected-remark @+1 {{fused into kb.attention: q k^T -> scale 1.250000e-01 -> add mask -> softmax -> @ v}}
  %4 = kb.matmul %3, %v precision(tf32) : tensor<8x128x256xf32>, tensor<8x256x32xf32> -> tensor<8x128x32xf32>
  return %4 : tensor<8x128x32xf32>
}

// -----

// The mask on the left of the add, two scales multiplied.
// CHECK-LABEL: func.func @mask_lhs_two_scales
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) scale(2.500000e-01) precision(tf32)
// CHECK-NOT: kb.softmax
func.func @mask_lhs_two_scales(%q: tensor<2x100x64xf32>, %k: tensor<2x100x64xf32>, %v: tensor<2x100x64xf32>, %m: tensor<2x100x100xf32>) -> tensor<2x100x64xf32> {
  %0 = kb.matmul %q, %k precision(tf32) transpose_b : tensor<2x100x64xf32>, tensor<2x100x64xf32> -> tensor<2x100x100xf32>
  %1 = kb.scale %0 by 0.5 : tensor<2x100x100xf32>
  %2 = kb.scale %1 by 0.5 : tensor<2x100x100xf32>
  %3 = kb.add %m, %2 : tensor<2x100x100xf32>
  %4 = kb.softmax %3 : tensor<2x100x100xf32>
  // expected-remark @+1 {{fused into kb.attention: q k^T -> scale 5.000000e-01 -> scale 5.000000e-01 -> add mask -> softmax -> @ v}}
  %5 = kb.matmul %4, %v precision(tf32) : tensor<2x100x100xf32>, tensor<2x100x64xf32> -> tensor<2x100x64xf32>
  return %5 : tensor<2x100x64xf32>
}

// -----

// ieee: the fused kernel is tf32 only, so the chain stays as it is (and
// compiles to its three kernels).
// CHECK-LABEL: func.func @ieee_stays
// CHECK: kb.softmax
// CHECK-NOT: kb.attention
func.func @ieee_stays(%q: tensor<2x100x64xf32>, %k: tensor<2x100x64xf32>, %v: tensor<2x100x64xf32>) -> tensor<2x100x64xf32> {
  %0 = kb.matmul %q, %k precision(ieee) transpose_b : tensor<2x100x64xf32>, tensor<2x100x64xf32> -> tensor<2x100x100xf32>
  %1 = kb.scale %0 by 0.125 : tensor<2x100x100xf32>
  %2 = kb.softmax %1 : tensor<2x100x100xf32>
  // expected-remark @+1 {{not fused into kb.attention: precision ieee (the fused kernel is built for tf32 only; the chain runs unfused)}}
  %3 = kb.matmul %2, %v precision(ieee) : tensor<2x100x100xf32>, tensor<2x100x64xf32> -> tensor<2x100x64xf32>
  return %3 : tensor<2x100x64xf32>
}

// -----

// No scale: scale(1.0); bf16 throughout (no precision keyword).
// CHECK-LABEL: func.func @no_scale_bf16
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} scale(1.000000e+00) : tensor<4x64x64xbf16>, tensor<4x64x64xbf16>, tensor<4x64x64xbf16> -> tensor<4x64x64xbf16>
// CHECK-NOT: kb.matmul
func.func @no_scale_bf16(%q: tensor<4x64x64xbf16>, %k: tensor<4x64x64xbf16>, %v: tensor<4x64x64xbf16>) -> tensor<4x64x64xbf16> {
  %0 = kb.matmul %q, %k transpose_b : tensor<4x64x64xbf16>, tensor<4x64x64xbf16> -> tensor<4x64x64xbf16>
  %1 = kb.softmax %0 : tensor<4x64x64xbf16>
  // expected-remark @+1 {{fused into kb.attention: q k^T -> softmax -> @ v}}
  %2 = kb.matmul %1, %v : tensor<4x64x64xbf16>, tensor<4x64x64xbf16> -> tensor<4x64x64xbf16>
  return %2 : tensor<4x64x64xbf16>
}

// -----

// kb.causal_mask becomes `causal`; with a mask too, in either order.
// CHECK-LABEL: func.func @causal
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) causal precision(tf32) :
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) scale(1.250000e-01) causal precision(tf32) :
// CHECK-NOT: kb.causal_mask
func.func @causal(%q: tensor<4x64x64xf32>, %m: tensor<4x64x64xf32>) -> (tensor<4x64x64xf32>, tensor<4x64x64xf32>) {
  %0 = kb.matmul %q, %q precision(tf32) transpose_b : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  %1 = kb.scale %0 by 0.125 : tensor<4x64x64xf32>
  %2 = kb.causal_mask %1 : tensor<4x64x64xf32>
  %3 = kb.softmax %2 : tensor<4x64x64xf32>
  // expected-remark @+1 {{fused into kb.attention: q k^T -> scale 1.250000e-01 -> causal_mask -> softmax -> @ v}}
  %4 = kb.matmul %3, %q precision(tf32) : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  %5 = kb.matmul %q, %q precision(tf32) transpose_b : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  %6 = kb.scale %5 by 0.125 : tensor<4x64x64xf32>
  %7 = kb.add %6, %m : tensor<4x64x64xf32>
  %8 = kb.causal_mask %7 : tensor<4x64x64xf32>
  %9 = kb.softmax %8 : tensor<4x64x64xf32>
  // expected-remark @+1 {{fused into kb.attention: q k^T -> scale 1.250000e-01 -> add mask -> causal_mask -> softmax -> @ v}}
  %10 = kb.matmul %9, %q precision(tf32) : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  return %4, %10 : tensor<4x64x64xf32>, tensor<4x64x64xf32>
}

// -----

// k given as [D, Sk] through a kb.transpose of a [Sk, D] tensor: the
// attention reads the transpose's input.
// CHECK-LABEL: func.func @transposed_k
// CHECK-SAME: %[[K:[^:]+]]: tensor<4x96x64xf32>
// CHECK-NEXT: kb.attention %{{.*}}, %[[K]], %{{.*}} scale(1.250000e-01) precision(tf32)
// CHECK-NOT: kb.transpose
func.func @transposed_k(%q: tensor<4x64x64xf32>, %k: tensor<4x96x64xf32>, %v: tensor<4x96x64xf32>) -> tensor<4x64x64xf32> {
  %kt = kb.transpose %k : tensor<4x96x64xf32> -> tensor<4x64x96xf32>
  %0 = kb.matmul %q, %kt precision(tf32) : tensor<4x64x64xf32>, tensor<4x64x96xf32> -> tensor<4x64x96xf32>
  %1 = kb.scale %0 by 0.125 : tensor<4x64x96xf32>
  %2 = kb.softmax %1 : tensor<4x64x96xf32>
  // expected-remark @+1 {{fused into kb.attention}}
  %3 = kb.matmul %2, %v precision(tf32) : tensor<4x64x96xf32>, tensor<4x96x64xf32> -> tensor<4x64x64xf32>
  return %3 : tensor<4x64x64xf32>
}

// -----

// 16-bit operands with f32 scores, converted back before @ v.
// CHECK-LABEL: func.func @f32_scores_convert
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) : tensor<4x64x64xf16>, tensor<4x64x64xf16>, tensor<4x64x64xf16> -> tensor<4x64x64xf16>
// CHECK-NOT: kb.convert
func.func @f32_scores_convert(%q: tensor<4x64x64xf16>, %k: tensor<4x64x64xf16>, %v: tensor<4x64x64xf16>) -> tensor<4x64x64xf16> {
  %0 = kb.matmul %q, %k transpose_b : tensor<4x64x64xf16>, tensor<4x64x64xf16> -> tensor<4x64x64xf32>
  %1 = kb.scale %0 by 0.125 : tensor<4x64x64xf32>
  %2 = kb.softmax %1 : tensor<4x64x64xf32>
  %3 = kb.convert %2 : tensor<4x64x64xf32> -> tensor<4x64x64xf16>
  // expected-remark @+1 {{fused into kb.attention: q k^T -> scale 1.250000e-01 -> softmax -> convert -> @ v}}
  %4 = kb.matmul %3, %v : tensor<4x64x64xf16>, tensor<4x64x64xf16> -> tensor<4x64x64xf16>
  return %4 : tensor<4x64x64xf16>
}

// -----

// An intermediate with a second use: nothing fused.
// CHECK-LABEL: func.func @second_use
// CHECK: kb.matmul
// CHECK: kb.scale
// CHECK: kb.softmax
// CHECK: kb.matmul
// CHECK-NOT: kb.attention
func.func @second_use(%q: tensor<4x64x64xf32>) -> (tensor<4x64x64xf32>, tensor<4x64x64xf32>) {
  %0 = kb.matmul %q, %q precision(tf32) transpose_b : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  // expected-note @+1 {{here}}
  %1 = kb.scale %0 by 0.125 : tensor<4x64x64xf32>
  %2 = kb.softmax %1 : tensor<4x64x64xf32>
  // expected-remark @+1 {{not fused into kb.attention: the scaled score tensor has another use (kb.attention never writes it to memory)}}
  %3 = kb.matmul %2, %q precision(tf32) : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  return %3, %1 : tensor<4x64x64xf32>, tensor<4x64x64xf32>
}

// -----

// The probabilities used twice.
// CHECK-LABEL: func.func @probs_second_use
// CHECK-NOT: kb.attention
func.func @probs_second_use(%q: tensor<4x64x64xf32>) -> (tensor<4x64x64xf32>, tensor<4x64x64xf32>) {
  %0 = kb.matmul %q, %q precision(tf32) transpose_b : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  // expected-note @+1 {{here}}
  %1 = kb.softmax %0 : tensor<4x64x64xf32>
  // expected-remark @+1 {{not fused into kb.attention: the softmax's result has another use}}
  %2 = kb.matmul %1, %q precision(tf32) : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  return %2, %1 : tensor<4x64x64xf32>, tensor<4x64x64xf32>
}

// -----

// Softmax over the other axis (a transpose in front of it): the chain does
// not reach q k^T.
// CHECK-LABEL: func.func @softmax_other_axis
// CHECK-NOT: kb.attention
func.func @softmax_other_axis(%q: tensor<4x64x64xf32>, %k: tensor<4x32x64xf32>, %v: tensor<4x64x16xf32>) -> tensor<4x32x16xf32> {
  %0 = kb.matmul %q, %k precision(tf32) transpose_b : tensor<4x64x64xf32>, tensor<4x32x64xf32> -> tensor<4x64x32xf32>
  // expected-note @+1 {{here}}
  %1 = kb.transpose %0 : tensor<4x64x32xf32> -> tensor<4x32x64xf32>
  %2 = kb.softmax %1 : tensor<4x32x64xf32>
  // expected-remark @+1 {{not fused into kb.attention: the softmax's input comes from kb.transpose, not from q k^T (a kb.matmul)}}
  %3 = kb.matmul %2, %v precision(tf32) : tensor<4x32x64xf32>, tensor<4x64x16xf32> -> tensor<4x32x16xf32>
  return %3 : tensor<4x32x16xf32>
}

// -----

// v @ p: the softmax is the right operand.
// CHECK-LABEL: func.func @softmax_rhs
// CHECK-NOT: kb.attention
func.func @softmax_rhs(%q: tensor<4x64x64xf32>) -> tensor<4x64x64xf32> {
  %0 = kb.matmul %q, %q precision(tf32) transpose_b : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  %1 = kb.softmax %0 : tensor<4x64x64xf32>
  // expected-remark @+1 {{not fused into kb.attention: the softmax's result is the matmul's right operand (attention is softmax(...) @ v)}}
  %2 = kb.matmul %q, %1 precision(tf32) : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  return %2 : tensor<4x64x64xf32>
}

// -----

// k given as [D, Sk] (no transpose_b, not a kb.transpose).
// CHECK-LABEL: func.func @k_not_transposed
// CHECK-NOT: kb.attention
func.func @k_not_transposed(%q: tensor<4x64x32xf32>, %kt: tensor<4x32x64xf32>, %v: tensor<4x64x32xf32>) -> tensor<4x64x32xf32> {
  // expected-note @+1 {{here}}
  %0 = kb.matmul %q, %kt precision(tf32) : tensor<4x64x32xf32>, tensor<4x32x64xf32> -> tensor<4x64x64xf32>
  %1 = kb.softmax %0 : tensor<4x64x64xf32>
  // expected-remark @+1 {{not fused into kb.attention: k is given as [..., D, Sk] (no transpose_b, and not a kb.transpose of a [..., Sk, D] tensor)}}
  %2 = kb.matmul %1, %v precision(tf32) : tensor<4x64x64xf32>, tensor<4x64x32xf32> -> tensor<4x64x32xf32>
  return %2 : tensor<4x64x32xf32>
}

// -----

// Rank 2: kb.attention needs a batch axis.
// CHECK-LABEL: func.func @rank2
// CHECK-NOT: kb.attention
func.func @rank2(%q: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-note @+1 {{here}}
  %0 = kb.matmul %q, %q precision(tf32) transpose_b : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %1 = kb.softmax %0 : tensor<64x64xf32>
  // expected-remark @+1 {{not fused into kb.attention: q k^T is a rank-2 matmul, and kb.attention takes a batch axis (rank 3 or 4; kb has no reshape to add one)}}
  %2 = kb.matmul %1, %q precision(tf32) : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %2 : tensor<64x64xf32>
}

// -----

// The mask added before the scale (it would be scaled too).
// CHECK-LABEL: func.func @mask_before_scale
// CHECK-NOT: kb.attention
func.func @mask_before_scale(%q: tensor<4x64x64xf32>, %m: tensor<4x64x64xf32>) -> tensor<4x64x64xf32> {
  %0 = kb.matmul %q, %q precision(tf32) transpose_b : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  // expected-note @+1 {{here}}
  %1 = kb.add %0, %m : tensor<4x64x64xf32>
  %2 = kb.scale %1 by 0.125 : tensor<4x64x64xf32>
  %3 = kb.softmax %2 : tensor<4x64x64xf32>
  // expected-remark @+1 {{not fused into kb.attention: the mask comes before the scale}}
  %4 = kb.matmul %3, %q precision(tf32) : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  return %4 : tensor<4x64x64xf32>
}

// -----

// Two precisions.
// CHECK-LABEL: func.func @two_precisions
// CHECK-NOT: kb.attention
func.func @two_precisions(%q: tensor<4x64x64xf32>) -> tensor<4x64x64xf32> {
  %0 = kb.matmul %q, %q precision(tf32) transpose_b : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  %1 = kb.softmax %0 : tensor<4x64x64xf32>
  // expected-remark @+1 {{not fused into kb.attention: the two matmuls have precisions tf32 and ieee}}
  %2 = kb.matmul %1, %q precision(ieee) : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  return %2 : tensor<4x64x64xf32>
}

// -----

// No softmax in front of a matmul: no remark, nothing changes.
// CHECK-LABEL: func.func @plain_matmul
// CHECK: kb.matmul
func.func @plain_matmul(%a: tensor<4x64x64xf32>) -> tensor<4x64x64xf32> {
  %0 = kb.matmul %a, %a precision(tf32) : tensor<4x64x64xf32>, tensor<4x64x64xf32> -> tensor<4x64x64xf32>
  return %0 : tensor<4x64x64xf32>
}

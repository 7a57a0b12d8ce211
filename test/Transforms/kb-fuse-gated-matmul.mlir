// kb-fuse-gated-matmul: SwiGLU's and GeGLU's two linears of one A become one
// kb.gated_matmul; anything that does not match stays as it is.
// RUN: kb-opt %s --kb-fuse-gated-matmul | FileCheck %s

// Llama's MLP: silu(h W1^T) * (h W3^T), bf16; the matmuls, silu and mul go.
// CHECK-LABEL: func.func @swiglu
// CHECK-NEXT: %[[Y:.*]] = kb.gated_matmul %arg0, %arg1, %arg2 gate(silu) transpose_b : tensor<1000x1504xbf16>, tensor<700x1504xbf16>, tensor<700x1504xbf16> -> tensor<1000x700xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @swiglu(%h: tensor<1000x1504xbf16>, %w1: tensor<700x1504xbf16>, %w3: tensor<700x1504xbf16>) -> tensor<1000x700xbf16> {
  %g = kb.matmul %h, %w1 transpose_b : tensor<1000x1504xbf16>, tensor<700x1504xbf16> -> tensor<1000x700xbf16>
  %s = kb.silu %g : tensor<1000x700xbf16>
  %u = kb.matmul %h, %w3 transpose_b : tensor<1000x1504xbf16>, tensor<700x1504xbf16> -> tensor<1000x700xbf16>
  %y = kb.mul %s, %u : tensor<1000x700xbf16>
  return %y : tensor<1000x700xbf16>
}

// The mul's operands the other way round, GeGLU's tanh GELU, f32 tf32; the
// epilogue after the mul (a scale) stays after the gated matmul.
// CHECK-LABEL: func.func @geglu_swapped
// CHECK-NEXT: %[[Y:.*]] = kb.gated_matmul %arg0, %arg1, %arg2 precision(tf32) gate(gelu_tanh) transpose_b
// CHECK-NEXT: kb.scale %[[Y]]
func.func @geglu_swapped(%h: tensor<256x512xf32>, %w1: tensor<384x512xf32>, %w3: tensor<384x512xf32>) -> tensor<256x384xf32> {
  %g = kb.matmul %h, %w1 precision(tf32) transpose_b : tensor<256x512xf32>, tensor<384x512xf32> -> tensor<256x384xf32>
  %u = kb.matmul %h, %w3 precision(tf32) transpose_b : tensor<256x512xf32>, tensor<384x512xf32> -> tensor<256x384xf32>
  %s = kb.gelu %g approx(tanh) : tensor<256x384xf32>
  %y = kb.mul %u, %s : tensor<256x384xf32>
  %z = kb.scale %y by 2.0 : tensor<256x384xf32>
  return %z : tensor<256x384xf32>
}

// CHECK-LABEL: func.func @gelu_erf
// CHECK: kb.gated_matmul %arg0, %arg1, %arg2 gate(gelu_erf) transpose_b
func.func @gelu_erf(%h: tensor<128x256xf16>, %w1: tensor<256x256xf16>, %w3: tensor<256x256xf16>) -> tensor<128x256xf16> {
  %g = kb.matmul %h, %w1 transpose_b : tensor<128x256xf16>, tensor<256x256xf16> -> tensor<128x256xf16>
  %s = kb.gelu %g approx(erf) : tensor<128x256xf16>
  %u = kb.matmul %h, %w3 transpose_b : tensor<128x256xf16>, tensor<256x256xf16> -> tensor<128x256xf16>
  %y = kb.mul %s, %u : tensor<128x256xf16>
  return %y : tensor<128x256xf16>
}

// Negative: the two matmuls read different A values.
// CHECK-LABEL: func.func @different_a
// CHECK-NOT: kb.gated_matmul
// CHECK: kb.matmul %arg0, %arg2
// CHECK: kb.silu
// CHECK: kb.matmul %arg1, %arg3
// CHECK: kb.mul
func.func @different_a(%h: tensor<128x256xbf16>, %x: tensor<128x256xbf16>, %w1: tensor<256x256xbf16>, %w3: tensor<256x256xbf16>) -> tensor<128x256xbf16> {
  %g = kb.matmul %h, %w1 transpose_b : tensor<128x256xbf16>, tensor<256x256xbf16> -> tensor<128x256xbf16>
  %s = kb.silu %g : tensor<128x256xbf16>
  %u = kb.matmul %x, %w3 transpose_b : tensor<128x256xbf16>, tensor<256x256xbf16> -> tensor<128x256xbf16>
  %y = kb.mul %s, %u : tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}

// Negative: a third user of the gate matmul's result (it must go to memory
// anyway, so the fused kernel would not save its write).
// CHECK-LABEL: func.func @third_user
// CHECK-NOT: kb.gated_matmul
// CHECK: kb.matmul
func.func @third_user(%h: tensor<128x256xbf16>, %w1: tensor<256x256xbf16>, %w3: tensor<256x256xbf16>) -> (tensor<128x256xbf16>, tensor<128x256xbf16>) {
  %g = kb.matmul %h, %w1 transpose_b : tensor<128x256xbf16>, tensor<256x256xbf16> -> tensor<128x256xbf16>
  %s = kb.silu %g : tensor<128x256xbf16>
  %u = kb.matmul %h, %w3 transpose_b : tensor<128x256xbf16>, tensor<256x256xbf16> -> tensor<128x256xbf16>
  %y = kb.mul %s, %u : tensor<128x256xbf16>
  return %y, %g : tensor<128x256xbf16>, tensor<128x256xbf16>
}

// Negative: a row-major B (not F.linear's B^T) and a gate that is not one
// (relu).
// CHECK-LABEL: func.func @row_major_b
// CHECK-NOT: kb.gated_matmul
// CHECK: return
func.func @row_major_b(%h: tensor<128x256xbf16>, %w1: tensor<256x256xbf16>, %w3: tensor<256x256xbf16>) -> tensor<128x256xbf16> {
  %g = kb.matmul %h, %w1 : tensor<128x256xbf16>, tensor<256x256xbf16> -> tensor<128x256xbf16>
  %s = kb.silu %g : tensor<128x256xbf16>
  %u = kb.matmul %h, %w3 : tensor<128x256xbf16>, tensor<256x256xbf16> -> tensor<128x256xbf16>
  %y = kb.mul %s, %u : tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}
// CHECK-LABEL: func.func @relu_is_no_gate
// CHECK-NOT: kb.gated_matmul
// CHECK: kb.relu
func.func @relu_is_no_gate(%h: tensor<128x256xbf16>, %w1: tensor<256x256xbf16>, %w3: tensor<256x256xbf16>) -> tensor<128x256xbf16> {
  %g = kb.matmul %h, %w1 transpose_b : tensor<128x256xbf16>, tensor<256x256xbf16> -> tensor<128x256xbf16>
  %s = kb.relu %g : tensor<128x256xbf16>
  %u = kb.matmul %h, %w3 transpose_b : tensor<128x256xbf16>, tensor<256x256xbf16> -> tensor<128x256xbf16>
  %y = kb.mul %s, %u : tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}

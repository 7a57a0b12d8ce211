// RUN: kb-opt %s --kb-fuse-elementwise -split-input-file -verify-diagnostics | FileCheck %s

// kb.rotary joins a matmul's epilogue when the kernel holds C's column
// pairs in one thread (mma.sync's and wgmma's fragments), with the
// elementwise ops around it; else it stays an elementwise kernel and the
// matmul its own, said in a remark at the rotary.

// The q projection of a Llama block: one kernel, bias before and a scale
// after the rotary.
// CHECK-LABEL: func.func @q_projection
// CHECK: kb.fusion
// CHECK: kb.matmul
// CHECK-NEXT: kb.bias_add
// CHECK-NEXT: kb.rotary
// CHECK-NEXT: kb.scale
// CHECK-NEXT: kb.yield
// CHECK-NOT: kb.fusion
func.func @q_projection(%x: tensor<256x512xf32>, %w: tensor<256x512xf32>, %c: tensor<128x32xf32>, %s: tensor<128x32xf32>, %b: tensor<256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b : tensor<256x512xf32>, tensor<256x512xf32> -> tensor<256x256xf32>
  %1 = kb.bias_add %0, %b : tensor<256x256xf32>, tensor<256xf32> -> tensor<256x256xf32>
  %2 = kb.rotary %1, %c, %s : tensor<256x256xf32>, tensor<128x32xf32>, tensor<128x32xf32> -> tensor<256x256xf32>
  %3 = kb.scale %2 by 0.5 : tensor<256x256xf32>
  return %3 : tensor<256x256xf32>
}

// -----

// A 16-bit linear, the rotary alone after it.
// CHECK-LABEL: func.func @bf16_linear
// CHECK: kb.fusion
// CHECK: kb.matmul
// CHECK-NEXT: kb.rotary
func.func @bf16_linear(%x: tensor<256x256xbf16>, %w: tensor<256x256xbf16>, %c: tensor<128x32xbf16>, %s: tensor<128x32xbf16>) -> tensor<256x256xbf16> {
  %0 = kb.matmul %x, %w transpose_b : tensor<256x256xbf16>, tensor<256x256xbf16> -> tensor<256x256xbf16>
  %1 = kb.rotary %0, %c, %s : tensor<256x256xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16> -> tensor<256x256xbf16>
  return %1 : tensor<256x256xbf16>
}

// -----

// precision ieee is the FFMA kernel (one element a store): the matmul
// stays whole, the rotary and the scale an elementwise kernel.
// CHECK-LABEL: func.func @ieee
// CHECK: kb.matmul
// CHECK: kb.fusion
// CHECK-NOT: kb.matmul
// CHECK: kb.rotary
// CHECK-NEXT: kb.scale
func.func @ieee(%x: tensor<256x512xf32>, %w: tensor<256x512xf32>, %c: tensor<128x32xf32>, %s: tensor<128x32xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %x, %w precision(ieee) transpose_b : tensor<256x512xf32>, tensor<256x512xf32> -> tensor<256x256xf32>
  // expected-remark @+1 {{kb.rotary stays out of the epilogue of 'kb.matmul': precision ieee is the FFMA kernel, one element a store; it runs in an elementwise kernel}}
  %1 = kb.rotary %0, %c, %s : tensor<256x256xf32>, tensor<128x32xf32>, tensor<128x32xf32> -> tensor<256x256xf32>
  %2 = kb.scale %1 by 0.5 : tensor<256x256xf32>
  return %2 : tensor<256x256xf32>
}

// -----

// At most 16 rows: the gemv kernel (decode, one token).
// CHECK-LABEL: func.func @decode
// CHECK: kb.matmul
// CHECK-NOT: kb.fusion
// CHECK: kb.rotary
func.func @decode(%x: tensor<1x256xbf16>, %w: tensor<256x256xbf16>, %c: tensor<1x32xbf16>, %s: tensor<1x32xbf16>) -> tensor<1x256xbf16> {
  %0 = kb.matmul %x, %w transpose_b : tensor<1x256xbf16>, tensor<256x256xbf16> -> tensor<1x256xbf16>
  // expected-remark @+1 {{kb.rotary stays out of the epilogue of 'kb.matmul': the matmul has at most 16 rows or columns (the gemv kernel, one column a thread); it runs in an elementwise kernel}}
  %1 = kb.rotary %0, %c, %s : tensor<1x256xbf16>, tensor<1x32xbf16>, tensor<1x32xbf16> -> tensor<1x256xbf16>
  return %1 : tensor<1x256xbf16>
}

// -----

// An f32 row-major B may be the wgmma kernel of C^T.
// CHECK-LABEL: func.func @row_major_b
// CHECK: kb.matmul
// CHECK-NOT: kb.fusion
// CHECK: kb.rotary
func.func @row_major_b(%x: tensor<256x512xf32>, %w: tensor<512x256xf32>, %c: tensor<128x32xf32>, %s: tensor<128x32xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %x, %w precision(tf32) : tensor<256x512xf32>, tensor<512x256xf32> -> tensor<256x256xf32>
  // expected-remark @+1 {{kb.rotary stays out of the epilogue of 'kb.matmul': an f32 matmul of a row-major B may be the wgmma kernel whose accumulators hold C^T (pairs of rows, not columns); it runs in an elementwise kernel}}
  %1 = kb.rotary %0, %c, %s : tensor<256x256xf32>, tensor<128x32xf32>, tensor<128x32xf32> -> tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}

// -----

// A norm's epilogue holds no pairs: the norm keeps its kernel.
// CHECK-LABEL: func.func @after_norm
// CHECK: kb.rms_norm
// CHECK-NOT: kb.fusion
// CHECK: kb.rotary
func.func @after_norm(%x: tensor<256x256xf32>, %c: tensor<128x32xf32>, %s: tensor<128x32xf32>) -> tensor<256x256xf32> {
  %0 = kb.rms_norm %x eps(1.0e-06) : tensor<256x256xf32> -> tensor<256x256xf32>
  // expected-remark @+1 {{kb.rotary stays out of the epilogue of 'kb.rms_norm': a rms_norm kernel holds no column pairs; it runs in an elementwise kernel}}
  %1 = kb.rotary %0, %c, %s : tensor<256x256xf32>, tensor<128x32xf32>, tensor<128x32xf32> -> tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}

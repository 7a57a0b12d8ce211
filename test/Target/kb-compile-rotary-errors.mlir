// RUN: rm -rf %t && kb-opt %s -split-input-file -verify-diagnostics --kb-compile="output=%t ptxas=none" -o /dev/null
// kb.rotary where its kernel would not hold whole pairs: refused at the op,
// in one line (kb-fuse-elementwise never builds these; they are written by
// hand).

// The FFMA kernel (precision ieee) stores one element a thread.
func.func @ffma_epilogue(%x: tensor<256x512xf32>, %w: tensor<256x512xf32>, %c: tensor<128x32xf32>, %s: tensor<128x32xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{'kb.fusion' op has a kb.rotary in its matmul epilogue, which needs column pairs in one thread: the FFMA kernel stores one element a thread}}
  %0 = kb.fusion ins(%x, %w, %c, %s : tensor<256x512xf32>, tensor<256x512xf32>, tensor<128x32xf32>, tensor<128x32xf32>) {
  ^bb0(%a: tensor<256x512xf32>, %b: tensor<256x512xf32>, %ca: tensor<128x32xf32>, %sa: tensor<128x32xf32>):
    %1 = kb.matmul %a, %b precision(ieee) transpose_b : tensor<256x512xf32>, tensor<256x512xf32> -> tensor<256x256xf32>
    %2 = kb.rotary %1, %ca, %sa : tensor<256x256xf32>, tensor<128x32xf32>, tensor<128x32xf32> -> tensor<256x256xf32>
    kb.yield %2 : tensor<256x256xf32>
  } -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A vector of one element splits every pair.
func.func @vector_one(%x: tensor<64x128xf32>, %c: tensor<64x32xf32>, %s: tensor<64x32xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{'kb.rotary' op config asks for vector width 1; kb.rotary needs whole pairs of elements a vector (2, 4 or 8)}}
  %0 = kb.rotary %x, %c, %s {config = #kb.config<vector = 1>} : tensor<64x128xf32>, tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// operands = "ba": the 16-bit wgmma kernel's accumulators hold C^T (a
// thread's pairs are two rows of one column).
func.func @swapped_epilogue(%x: tensor<256x512xbf16>, %w: tensor<512x256xbf16>, %c: tensor<128x32xbf16>, %s: tensor<128x32xbf16>) -> tensor<256x256xbf16> {
  // expected-error @+1 {{'kb.fusion' op has a kb.rotary in its matmul epilogue, which needs column pairs in one thread: operands = "ba" holds C^T (pairs of rows)}}
  %0 = kb.fusion ins(%x, %w, %c, %s : tensor<256x512xbf16>, tensor<512x256xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16>) attributes {config = #kb.config<block = [80, 64, 64], operands = "ba">} {
  ^bb0(%a: tensor<256x512xbf16>, %b: tensor<512x256xbf16>, %ca: tensor<128x32xbf16>, %sa: tensor<128x32xbf16>):
    %1 = kb.matmul %a, %b : tensor<256x512xbf16>, tensor<512x256xbf16> -> tensor<256x256xbf16>
    %2 = kb.rotary %1, %ca, %sa : tensor<256x256xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16> -> tensor<256x256xbf16>
    kb.yield %2 : tensor<256x256xbf16>
  } -> tensor<256x256xbf16>
  return %0 : tensor<256x256xbf16>
}

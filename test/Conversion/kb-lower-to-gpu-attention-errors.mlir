// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics

// The attention lowering refuses configs its kernel cannot run, in one
// located line (kb-select-config never writes them; a hand-written or
// tuned config may).

func.func @keys_not_multiple_of_16(%q: tensor<8x128x64xf32>, %k: tensor<8x128x64xf32>, %v: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  // expected-error @+1 {{'kb.attention' op #kb.config: block = [64, 40]: BKV must be 16 to 128 keys, a multiple of 16}}
  %o = kb.attention %q, %k, %v scale(1.250000e-01) precision(tf32) {config = #kb.config<block = [64, 40], threads = 128, stages = 3, mma = "mma_sync_tf32">} : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}

// -----

func.func @threads_not_one_warp_per_16_rows(%q: tensor<8x128x64xbf16>, %k: tensor<8x128x64xbf16>, %v: tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16> {
  // expected-error @+1 {{'kb.attention' op #kb.config: threads = 256 with BQ = 64: the kernel runs one warp per 16 query rows, 128 threads}}
  %o = kb.attention %q, %k, %v scale(1.250000e-01) {config = #kb.config<block = [64, 64], threads = 256, stages = 2>} : tensor<8x128x64xbf16>, tensor<8x128x64xbf16>, tensor<8x128x64xbf16> -> tensor<8x128x64xbf16>
  return %o : tensor<8x128x64xbf16>
}

// -----

func.func @head_dim_256(%q: tensor<8x128x256xbf16>, %k: tensor<8x128x256xbf16>, %v: tensor<8x128x256xbf16>) -> tensor<8x128x256xbf16> {
  // expected-error @+1 {{'kb.attention' op #kb.config: head dims D = 256, Dv = 256: the kernel takes multiples of 16 up to 128}}
  %o = kb.attention %q, %k, %v scale(1.250000e-01) {config = #kb.config<block = [64, 32], threads = 128, stages = 2>} : tensor<8x128x256xbf16>, tensor<8x128x256xbf16>, tensor<8x128x256xbf16> -> tensor<8x128x256xbf16>
  return %o : tensor<8x128x256xbf16>
}

// -----

func.func @ieee(%q: tensor<8x128x64xf32>, %k: tensor<8x128x64xf32>, %v: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  // expected-error @+1 {{'kb.attention' op precision(ieee) is not built for attention yet: the kernel multiplies on tf32 tensor cores (precision(tf32))}}
  %o = kb.attention %q, %k, %v scale(1.250000e-01) precision(ieee) {config = #kb.config<block = [64, 64], threads = 128, stages = 3, mma = "mma_sync_tf32">} : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}

// -----

func.func @no_config(%q: tensor<8x128x64xf32>, %k: tensor<8x128x64xf32>, %v: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  // expected-error @+1 {{has no #kb.config}}
  %o = kb.attention %q, %k, %v scale(1.250000e-01) precision(tf32) : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}

// -----

// A kb.causal_mask outside a kb.attention has no kernel of its own.
func.func @causal_mask(%s: tensor<4x128x128xf32>) -> tensor<4x128x128xf32> {
  // expected-error @+1 {{has no kernel of its own: kb lowers it only inside a kb.attention}}
  %0 = kb.causal_mask %s : tensor<4x128x128xf32>
  return %0 : tensor<4x128x128xf32>
}

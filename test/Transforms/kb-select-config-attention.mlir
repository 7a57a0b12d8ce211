// RUN: kb-opt %s --kb-select-config=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s
// RUN: kb-opt %s --kb-select-config=chip=sm_80 -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=SM80

// kb.attention's config (lib/Transforms/SelectAttentionConfig.cpp): BQ = 64
// query rows (four warps, 128 threads); BKV and stages the first of (64, 3),
// (64, 2), (32, 3), (32, 2) with which two blocks fit in an SM's shared
// memory (stages x BKV x (D + pad + Dv + pad) x element bytes, pad = 16
// bytes); mma = "mma_sync_tf32" for f32, none for 16-bit (mma.sync in the
// operands' type).
// sm_90 (228 KB an SM): f32 D = 64 and bf16 D = 64, 128 keep 64 keys and 3
// stages; f32 D = 128 halves the key block (3 x 64 x 264 x 4 = 202752 bytes
// would leave room for one block).
// sm_80 (164 KB an SM): f32 D = 64 drops to 2 stages.
// CHECK-LABEL: func.func @defaults
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [64, 64], threads = 128, stages = 3, mma = "mma_sync_tf32">} : tensor<8x128x64xf32>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [64, 32], threads = 128, stages = 3, mma = "mma_sync_tf32">} : tensor<8x128x128xf32>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [64, 64], threads = 128, stages = 3>} : tensor<2x4x1000x64xbf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [64, 64], threads = 128, stages = 3>} : tensor<2x4x1000x128xbf16>
// SM80-LABEL: func.func @defaults
// SM80: kb.attention {{.*}} {config = #kb.config<block = [64, 64], threads = 128, stages = 2, mma = "mma_sync_tf32">} : tensor<8x128x64xf32>
func.func @defaults(%q: tensor<8x128x64xf32>, %q2: tensor<8x128x128xf32>, %h: tensor<2x4x1000x64xbf16>, %h2: tensor<2x4x1000x128xbf16>)
    -> (tensor<8x128x64xf32>, tensor<8x128x128xf32>, tensor<2x4x1000x64xbf16>, tensor<2x4x1000x128xbf16>) {
  %0 = kb.attention %q, %q, %q scale(1.250000e-01) : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>
  %1 = kb.attention %q2, %q2, %q2 scale(1.250000e-01) causal : tensor<8x128x128xf32>, tensor<8x128x128xf32>, tensor<8x128x128xf32> -> tensor<8x128x128xf32>
  %2 = kb.attention %h, %h, %h scale(1.250000e-01) : tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16> -> tensor<2x4x1000x64xbf16>
  %3 = kb.attention %h2, %h2, %h2 scale(1.250000e-01) causal : tensor<2x4x1000x128xbf16>, tensor<2x4x1000x128xbf16>, tensor<2x4x1000x128xbf16> -> tensor<2x4x1000x128xbf16>
  return %0, %1, %2, %3 : tensor<8x128x64xf32>, tensor<8x128x128xf32>, tensor<2x4x1000x64xbf16>, tensor<2x4x1000x128xbf16>
}

// -----

// A hand-written block and stages are kept; one that cannot fit is refused
// with its bytes.
// CHECK-LABEL: func.func @kept
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [32, 128], threads = 64, stages = 2, mma = "mma_sync_tf32">}
func.func @kept(%q: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  %0 = kb.attention %q, %q, %q scale(1.250000e-01) {config = #kb.config<block = [32, 128], stages = 2>} : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>
  return %0 : tensor<8x128x64xf32>
}

// -----

func.func @too_big(%q: tensor<8x128x128xf32>) -> tensor<8x128x128xf32> {
  // expected-error @+1 {{'kb.attention' op config needs 540672 bytes of shared memory per block (block = [64, 128], stages = 4, D = 128, Dv = 128); sm_}}
  %0 = kb.attention %q, %q, %q scale(1.250000e-01) {config = #kb.config<block = [64, 128], stages = 4>} : tensor<8x128x128xf32>, tensor<8x128x128xf32>, tensor<8x128x128xf32> -> tensor<8x128x128xf32>
  return %0 : tensor<8x128x128xf32>
}

// -----

func.func @ieee(%q: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  // expected-error @+1 {{'kb.attention' op precision(ieee) is not built for attention yet}}
  %0 = kb.attention %q, %q, %q scale(1.250000e-01) precision(ieee) : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>
  return %0 : tensor<8x128x64xf32>
}

// -----

func.func @wgmma_not_built(%q: tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16> {
  // expected-error @+1 {{'kb.attention' op mma = "wgmma_bf16" needs wgmma, which sm_}}
  %0 = kb.attention %q, %q, %q scale(1.250000e-01) {config = #kb.config<mma = "wgmma_bf16">} : tensor<8x128x64xbf16>, tensor<8x128x64xbf16>, tensor<8x128x64xbf16> -> tensor<8x128x64xbf16>
  return %0 : tensor<8x128x64xbf16>
}

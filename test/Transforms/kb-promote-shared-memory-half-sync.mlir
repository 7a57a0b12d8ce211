// RUN: kb-opt %s --kb-promote-shared-memory=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// kb-promote-shared-memory alone on 16-bit mma.sync tiles (mma =
// "mma_sync_bf16", "mma_sync_f16"): cp.async always, rows padded by 8
// elements (16 bytes, for ldmatrix), 3 stages where they fit in half an
// SM's shared memory (128 x 256 x 32 bf16: 27 KB a stage); a config over
// the chip's per-block limit, a misaligned pad and register copies are
// refused with their location.

// CHECK-LABEL: func.func @default_stages
// CHECK: #kb.config<block = [128, 256, 32], warp = [64, 64], threads = 256, stages = 3, pad = [8, 8], mma = "mma_sync_bf16", copy = "cp_async">
func.func @default_stages(%a: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %0 = kb.matmul %a, %a {config = #kb.config<block = [128, 256, 32], warp = [64, 64], mma = "mma_sync_bf16">} : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xbf16>
  return %0 : tensor<4096x4096xbf16>
}

// -----

func.func @too_much_shared(%a: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  // expected-error @+1 {{config needs 282624 bytes of shared memory per block (block = [256, 256, 64], stages = 4); sm_90 allows at most}}
  %0 = kb.matmul %a, %a {config = #kb.config<block = [256, 256, 64], warp = [64, 128], stages = 4, mma = "mma_sync_bf16">} : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xbf16>
  return %0 : tensor<4096x4096xbf16>
}

// -----

func.func @misaligned_pad(%a: tensor<512x512xf16>) -> tensor<512x512xf16> {
  // expected-error @+1 {{mma = "mma_sync_f16" needs pad = [padA, padB] in multiples of 8 elements (ldmatrix reads 16-byte rows)}}
  %0 = kb.matmul %a, %a {config = #kb.config<block = [64, 64, 32], warp = [32, 32], pad = [4, 8], mma = "mma_sync_f16">} : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf16>
  return %0 : tensor<512x512xf16>
}

// -----

func.func @register_copy(%a: tensor<512x512xf16>) -> tensor<512x512xf16> {
  // expected-error @+1 {{mma = "mma_sync_f16" copies its tiles by cp.async only, not copy = "registers"}}
  %0 = kb.matmul %a, %a {config = #kb.config<block = [64, 64, 32], warp = [32, 32], copy = "registers", mma = "mma_sync_f16">} : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf16>
  return %0 : tensor<512x512xf16>
}

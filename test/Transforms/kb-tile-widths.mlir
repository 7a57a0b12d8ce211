// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a}))" | FileCheck %s

// kb-tile's widths between 128 and 256 (TileWgmma.cpp, defaultWgmmaTile;
// bench/results/2026-12-03-width): 128 x 160 or 128 x 224 B^T tiles where
// the waves model costs them at least 5% under 128 x 256 / 128 x 192, then
// the persistent grid over them.

// Taken: 1024 x 5120 x 13824 (216 tiles of 128 x 192, 1.64 waves; 256 of
// 128 x 160, 1.94) -> 128 x 160; 2048 x 5120 x 13824 (320 of 128 x 256,
// 2.42 waves; 368 of 128 x 224, 2.79) -> 128 x 224; 2048 x 5120 x 5120 +
// bias + GELU at 128 x 224 (a fusion on its persistent grid).
// CHECK-LABEL: func.func @widths
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 160, 32], mma = "wgmma_tf32", grid = 132, raster = 8>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 224, 32], mma = "wgmma_tf32", grid = 132, raster = 16>
// CHECK: kb.fusion {{.*}}config = #kb.config<block = [128, 224, 32], mma = "wgmma_tf32", grid = 132, raster = 16>
func.func @widths(%a: tensor<1024x13824xf32>, %b: tensor<5120x13824xf32>, %c: tensor<2048x13824xf32>, %d: tensor<2048x5120xf32>, %e: tensor<5120x5120xf32>, %bias: tensor<5120xf32>) -> tensor<2048x5120xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<1024x13824xf32>, tensor<5120x13824xf32> -> tensor<1024x5120xf32>
  %1 = kb.matmul %c, %b precision(tf32) transpose_b : tensor<2048x13824xf32>, tensor<5120x13824xf32> -> tensor<2048x5120xf32>
  %2 = kb.fusion ins(%d, %e, %bias : tensor<2048x5120xf32>, tensor<5120x5120xf32>, tensor<5120xf32>) {
  ^bb0(%x: tensor<2048x5120xf32>, %w: tensor<5120x5120xf32>, %v: tensor<5120xf32>):
    %m = kb.matmul %x, %w precision(tf32) transpose_b : tensor<2048x5120xf32>, tensor<5120x5120xf32> -> tensor<2048x5120xf32>
    %y = kb.bias_add %m, %v : tensor<2048x5120xf32>, tensor<5120xf32> -> tensor<2048x5120xf32>
    %g = kb.gelu %y approx(erf) : tensor<2048x5120xf32>
    kb.yield %g : tensor<2048x5120xf32>
  } -> tensor<2048x5120xf32>
  return %2 : tensor<2048x5120xf32>
}

// Not taken: 4096 x 4096 x 4096 (512 tiles of 128 x 256: 3.88 waves, full);
// 1536 x 14336 x 4096 + bias + GELU, where 128 x 224 would beat 128 x 256
// by 9% but its 768 tiles are too many for the persistent grid, and a
// fusion takes 128 x 224 only there (one block a tile, 2048 x 5120 x 5120
// + GELU spilled 136 bytes); 2048 x 5120 x 5120 + GELU with a hand-set
// cluster = 2 (no persistent grid then: 128 x 224 one block a tile spilled
// 88 bytes); a row-major B; a hand-set block.
// CHECK-LABEL: func.func @widths_bounds
// CHECK-NOT: block = [128, {{160|224}}, 32]
// CHECK: return
func.func @widths_bounds(%a: tensor<4096x4096xf32>, %x8: tensor<1536x4096xf32>, %w14: tensor<14336x4096xf32>, %bias: tensor<14336xf32>, %c: tensor<1024x13824xf32>, %b: tensor<13824x5120xf32>, %b2: tensor<5120x13824xf32>, %d: tensor<2048x5120xf32>, %e: tensor<5120x5120xf32>, %v5: tensor<5120xf32>) -> tensor<1024x5120xf32> {
  %0 = kb.matmul %a, %a precision(tf32) transpose_b : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %1 = kb.fusion ins(%x8, %w14, %bias : tensor<1536x4096xf32>, tensor<14336x4096xf32>, tensor<14336xf32>) {
  ^bb0(%x: tensor<1536x4096xf32>, %w: tensor<14336x4096xf32>, %v: tensor<14336xf32>):
    %m = kb.matmul %x, %w precision(tf32) transpose_b : tensor<1536x4096xf32>, tensor<14336x4096xf32> -> tensor<1536x14336xf32>
    %y = kb.bias_add %m, %v : tensor<1536x14336xf32>, tensor<14336xf32> -> tensor<1536x14336xf32>
    %g = kb.gelu %y approx(erf) : tensor<1536x14336xf32>
    kb.yield %g : tensor<1536x14336xf32>
  } -> tensor<1536x14336xf32>
  %c2 = kb.fusion ins(%d, %e, %v5 : tensor<2048x5120xf32>, tensor<5120x5120xf32>, tensor<5120xf32>) attributes {config = #kb.config<cluster = 2>} {
  ^bb0(%x: tensor<2048x5120xf32>, %w: tensor<5120x5120xf32>, %v: tensor<5120xf32>):
    %m = kb.matmul %x, %w precision(tf32) transpose_b : tensor<2048x5120xf32>, tensor<5120x5120xf32> -> tensor<2048x5120xf32>
    %y = kb.bias_add %m, %v : tensor<2048x5120xf32>, tensor<5120xf32> -> tensor<2048x5120xf32>
    %g = kb.gelu %y approx(erf) : tensor<2048x5120xf32>
    kb.yield %g : tensor<2048x5120xf32>
  } -> tensor<2048x5120xf32>
  %2 = kb.matmul %c, %b precision(tf32) : tensor<1024x13824xf32>, tensor<13824x5120xf32> -> tensor<1024x5120xf32>
  %3 = kb.matmul %c, %b2 precision(tf32) transpose_b {config = #kb.config<block = [128, 192, 32]>} : tensor<1024x13824xf32>, tensor<5120x13824xf32> -> tensor<1024x5120xf32>
  return %3 : tensor<1024x5120xf32>
}

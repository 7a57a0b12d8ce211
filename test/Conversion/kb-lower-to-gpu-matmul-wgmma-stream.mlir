// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// reduce = "stream" (stream-K, MatmulWgmma.cpp, streamKPlan): 12 output
// tiles of 16 k tiles over a persistent grid of 8 blocks: one round of 8
// whole tiles, then the 4 tiles left over in 8 / 4 = 2 chunks of 8 k tiles,
// block g taking chunk g % 2 of tile 8 + g / 2. Pinned here: the launch of
// 8 blocks with the workspace (4 flags a block, then 4 x 1 partial tiles of
// 128 x 128: 32 + 65536 words) just before C, the workspace without
// noalias (C keeps it: nothing loads it); the producer's and the
// consumers' round loops (1 round of 16 k tiles) and then their chunks,
// for blocks below 4 x 2; chunk 0's thread 0 spins on each later chunk's flag with an acquire load and resets it,
// the warpgroup's barrier, then the partials loaded (as i32, bitcast) and
// added in chunk order; the other chunks store their accumulators
// (bitcast), the warpgroup's barrier, then thread 0 fences (acq_rel) and
// sets its flag.
// CHECK-LABEL: func.func @stream
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul blocks in (%c8, %c1{{.*}}, %c1{{.*}}) {{.*}}args(%arg0 : memref<512x512xf32>, %arg1 : memref<384x512xf32>, %{{.*}} : memref<32xi32>, %{{.*}} : memref<32xi32>, %{{.*}} : memref<65568xi32>, %arg2 : memref<512x384xf32>)
// CHECK: gpu.func @k0_matmul({{.*}}%arg4: memref<65568xi32>, %arg5: memref<512x384xf32> {llvm.noalias}) kernel
// CHECK: scf.for %{{.*}} = %c0 to %c1 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c1 {
// CHECK: arith.cmpi ult, %block_id_x, %c8 : index
// CHECK: arith.divui %block_id_x, %c2 : index
// CHECK: arith.remui %block_id_x, %c2 : index
// CHECK: scf.for %{{.*}} = %c0 to %c1 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args
// CHECK: arith.cmpi ult, %block_id_x, %c8 : index
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.for %{{.*}} = %c1 to %c2 step %c1 {
// CHECK: scf.while : () -> () {
// CHECK-NEXT: llvm.inline_asm has_side_effects "ld.acquire.gpu.global.u32 $0, [$1];", "=r,l,~{memory}"
// CHECK: llvm.inline_asm has_side_effects "st.relaxed.gpu.global.u32 [$0], 0;", "l,~{memory}"
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-NEXT: scf.for %{{.*}} = %c1 to %c2 step %c1 iter_args
// CHECK: %[[W:.*]] = memref.load %arg4[%{{.*}}] : memref<65568xi32>
// CHECK-NEXT: %[[P:.*]] = arith.bitcast %[[W]] : i32 to f32
// CHECK: arith.addf %{{.*}}, %[[P]] : f32
// CHECK: } else {
// CHECK: %[[X:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: memref.store %[[X]], %arg4[%{{.*}}] : memref<65568xi32>
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK: llvm.inline_asm has_side_effects "fence.acq_rel.gpu;\0Ast.relaxed.gpu.global.u32 [$0], 1;", "l,~{memory}"
// CHECK: gpu.return
func.func @stream(%a: tensor<512x512xf32>, %b: tensor<384x512xf32>) -> tensor<512x384xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 8, copy = "tma", reduce = "stream">} : tensor<512x512xf32>, tensor<384x512xf32> -> tensor<512x384xf32>
  return %0 : tensor<512x384xf32>
}

// -----

// 12 tiles over 12 blocks: no rest, so no chunk, no workspace beyond the
// flags (4 x 12 words), and no flag is waited for: a persistent grid.
// CHECK-LABEL: func.func @no_rest
// CHECK: gpu.launch_func {{.*}}blocks in (%c12, %c1{{.*}}, %c1{{.*}}) {{.*}}%{{.*}} : memref<48xi32>, %arg2 : memref<512x384xf32>)
// CHECK-NOT: ld.acquire
// CHECK: gpu.return
func.func @no_rest(%a: tensor<512x512xf32>, %b: tensor<384x512xf32>) -> tensor<512x384xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 12, copy = "tma", reduce = "stream">} : tensor<512x512xf32>, tensor<384x512xf32> -> tensor<512x384xf32>
  return %0 : tensor<512x384xf32>
}

// -----

// A batched matmul is not split.
func.func @batched(%a: tensor<2x256x512xf32>, %b: tensor<2x128x512xf32>) -> tensor<2x256x128xf32> {
  // expected-error @+1 {{#kb.config reduce = "stream" needs an unbatched, unsplit matmul}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 8, copy = "tma", reduce = "stream">} : tensor<2x256x512xf32>, tensor<2x128x512xf32> -> tensor<2x256x128xf32>
  return %0 : tensor<2x256x128xf32>
}

// -----

// Five consumer warpgroups (BM = 320) would need a fifth flag a block.
func.func @five_warpgroups(%a: tensor<640x512xf32>, %b: tensor<256x512xf32>) -> tensor<640x256xf32> {
  // expected-error @+1 {{#kb.config reduce = "stream" needs at most 4 consumer warpgroups (four flags a block), BM <= 256 with B^T or BN <= 256 with a row-major B}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [320, 64, 32], threads = 672, stages = 3, pad = [0, 0], mma = "wgmma_tf32", grid = 8, copy = "tma", reduce = "stream">} : tensor<640x512xf32>, tensor<256x512xf32> -> tensor<640x256xf32>
  return %0 : tensor<640x256xf32>
}

// -----

// Not tiled yet (no block, no copy): kb-lower-to-gpu cannot size the
// workspace, and says so in one line.
func.func @untiled(%a: tensor<512x512xf32>, %b: tensor<384x512xf32>) -> tensor<512x384xf32> {
  // expected-error @+1 {{#kb.config reduce = "stream" needs a tiled matmul with a persistent grid: run kb-tile first}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<threads = 288, mma = "wgmma_tf32", grid = 8, reduce = "stream">} : tensor<512x512xf32>, tensor<384x512xf32> -> tensor<512x384xf32>
  return %0 : tensor<512x384xf32>
}

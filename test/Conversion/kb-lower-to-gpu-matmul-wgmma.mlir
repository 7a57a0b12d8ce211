// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// kb-lower-to-gpu alone on wgmma matmul kernels (sm_90a): every #kb.config is written out
// complete (as kb-select-mma, kb-select-config, kb-tile and
// kb-promote-shared-memory chose it, chip sm_90a), so this file breaks only when
// the lowering changes.

// cp.async copies (asked for): wgmma with K = 100, not a multiple of 32 (BK): B^T's rows are padded to
// 128 floats by the transpose in front, and only the last of the 4 k tiles
// needs the K guard, so the loop issues it behind a uniform branch
// (`next == 3`) and the other tiles' copies without clamping anything to K.
// CHECK-LABEL: func.func @awkward_k
// CHECK: gpu.launch_func @k0_transpose_module::@k0_transpose {{.*}} args(%arg1 : memref<100x72xf32>, %[[BT:.*]] : memref<72x128xf32>)
// CHECK: gpu.launch_func @k1_matmul_module::@k1_matmul {{.*}} args(%arg0 : memref<100x100xf32>, %[[BT]] : memref<72x128xf32>, %{{.*}} : memref<100x72xf32>)
// CHECK-SAME: padded_b = true
// CHECK: gpu.func @k1_matmul
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %{{.*}}, %c3 : index
// CHECK-NEXT: scf.if %[[LAST]] {
// The last tile: each chunk copies min(K - k, 4) elements.
// CHECK: arith.minui %{{.*}}, %c100 : index
// CHECK: nvgpu.device_async_copy %arg0
// CHECK: nvgpu.device_async_copy %arg1
// CHECK: } else {
// The others: no K clamp.
// CHECK-NOT: arith.minui
// CHECK: nvgpu.device_async_copy %arg0
// CHECK-NOT: arith.minui
// CHECK: nvgpu.device_async_copy %arg1
// CHECK-NOT: arith.minui
// CHECK: nvvm.wgmma.mma_async
func.func @awkward_k(%arg0: tensor<100x100xf32>, %arg1: tensor<100x72xf32>) -> tensor<100x72xf32> {
  %0 = kb.transpose %arg1 pad(32) {config = #kb.config<block = [64, 64], threads = 256>} : tensor<100x72xf32> -> tensor<72x128xf32>
  %1 = kb.matmul %arg0, %0 precision(tf32) transpose_b padded_b {config = #kb.config<block = [64, 64, 32], threads = 128, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "cp_async">} : tensor<100x100xf32>, tensor<72x128xf32> -> tensor<100x72xf32>
  return %1 : tensor<100x72xf32>
}

// -----

// TMA copies (the default): the same matmul takes two tensor maps (128-byte
// buffers kb-run encodes: A, and B^T up to K = 100 of its 128-float rows,
// in boxes of BM or BN rows by 32 floats) before its output, and runs one
// warpgroup plus a producer warp (160 threads). Thread 0 sets up two
// mbarriers per stage (full: count 1; empty: one arrival per consumer warp,
// 4). Lane 0 of warp 4 issues every tile's two tensor copies behind
// arrive.expect_tx of the whole stage's bytes ((64 + 64) x 128), waiting on
// the stage's empty barrier from tile 4 on. The consumers wait on the tile's
// full phase, run their wgmma, and once tile kt - 1 is retired lane 0 of
// each warp arrives on its empty barrier. No block barrier in the loop, no
// guard, no cp.async.
// CHECK-LABEL: func.func @tma
// CHECK: %[[TM1:.*]] = memref.alloc() {kb.name = "tm{{[0-9]+}}", kb.role = "tensor_map", kb.tensor_map = {box = [64, 32], dims = [100, 100], of = "arg0"}} : memref<32xi32>
// CHECK: %[[TM2:.*]] = memref.alloc() {kb.name = "tm{{[0-9]+}}", kb.role = "tensor_map", kb.tensor_map = {box = [64, 32], dims = [72, 100], of = "t0"}} : memref<32xi32>
// CHECK: gpu.launch_func @k{{[0-9]+}}_matmul_module::@k{{[0-9]+}}_matmul {{.*}} threads in (%c160{{.*}} args(%arg0 : memref<100x100xf32>, %{{.*}} : memref<72x128xf32>, %[[TM1]] : memref<32xi32>, %[[TM2]] : memref<32xi32>, %{{.*}} : memref<100x72xf32>)
// CHECK: gpu.func @k{{[0-9]+}}_matmul
// CHECK-NOT: nvgpu.device_async_copy
// CHECK-NOT: arith.minui
// The warpgroup index, broadcast from lane 0 so that ptxas keeps what is
// built from it in uniform registers.
// CHECK: gpu.shuffle idx %{{.*}}, %c0_i32, %c32_i32 : i32
// CHECK: %[[MAPA:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK: %[[MAPB:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// The producer: lane 0 of warp 4.
// CHECK: %[[WARP:.*]] = arith.divui %{{.*}}, %c32 : index
// CHECK: %[[IS4:.*]] = arith.cmpi eq, %[[WARP]], %c4 : index
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.cmpi uge, %{{.*}}, %c4 : index
// CHECK: scf.if
// The wait for tile kt - 4's release: parity (kt / 4 + 1) mod 2.
// CHECK: %[[Q:.*]] = arith.divui %{{.*}}, %c4 : index
// CHECK-NEXT: %[[Q1:.*]] = arith.addi %[[Q]], %c1 : index
// CHECK-NEXT: %[[P:.*]] = arith.remui %[[Q1]], %c2 : index
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: }
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}]
// The consumers: threads below 128.
// CHECK: arith.cmpi ult, %{{.*}}, %c128 : index
// CHECK: scf.if
// CHECK: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// Each descriptor: the start address in 32 bits, then a constant high word
// (stride 1024 bytes, 128-byte swizzle) joined by inline PTX.
// CHECK: %[[LO:.*]] = arith.shrui %{{.*}}, %c4_i32 : i32
// CHECK-NEXT: %[[LOW:.*]] = arith.ori %[[LO]], %c65536_i32 : i32
// CHECK-NEXT: llvm.inline_asm "mov.b64 $0, {$1, $2};", "=l,r,r" %[[LOW]], %c1073741888_i32 : (i32, i32) -> i64
// CHECK: nvvm.wgmma.mma_async
// The next k8 step: the start address 32 bytes (2 units) further.
// CHECK: %[[LO1:.*]] = arith.shrui %{{.*}}, %c4_i32 : i32
// CHECK-NEXT: %[[STEP1:.*]] = arith.addi %[[LO1]], %c2_i32 : i32
// CHECK-NEXT: %[[LOW1:.*]] = arith.ori %[[STEP1]], %c65536_i32 : i32
// CHECK-NEXT: llvm.inline_asm "mov.b64 $0, {$1, $2};", "=l,r,r" %[[LOW1]], %c1073741888_i32
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK-NOT: gpu.barrier
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @tma(%arg0: tensor<100x100xf32>, %arg1: tensor<100x72xf32>) -> tensor<100x72xf32> {
  %0 = kb.transpose %arg1 pad(32) {config = #kb.config<block = [64, 64], threads = 256>} : tensor<100x72xf32> -> tensor<72x128xf32>
  %1 = kb.matmul %arg0, %0 precision(tf32) transpose_b padded_b {config = #kb.config<block = [64, 64, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<100x100xf32>, tensor<72x128xf32> -> tensor<100x72xf32>
  return %1 : tensor<100x72xf32>
}

// -----

// B^T with two consumer warpgroups and 384 threads (as a config may ask):
// the producer is warpgroup 2, which keeps 72 registers (setmaxnreg) and gives
// the rest to the consumers (168 + 128 x 96 / 256 = 216); its warp 8 issues
// the copies.
// CHECK-LABEL: func.func @tma_producer_warpgroup
// CHECK: gpu.launch_func @k{{[0-9]+}}_matmul_module::@k{{[0-9]+}}_matmul {{.*}} threads in (%c384
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK: arith.cmpi uge, %{{.*}}, %c256 : index
// CHECK: nvvm.setmaxregister decrease 72
// CHECK: arith.cmpi eq, %{{.*}}, %c8 : index
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK: arith.cmpi ult, %{{.*}}, %c256 : index
// CHECK: nvvm.setmaxregister increase 216
// CHECK: scf.for
// CHECK-NOT: nvvm.setmaxregister
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @tma_producer_warpgroup(%arg0: tensor<256x256xf32>, %arg1: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 384, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// TMA with two warpgroups (BM = 128), kb's default: the producer is warp 8
// (288 threads), no setmaxnreg,
// the empty barriers count 8 consumer warps, the stage's bytes are
// (128 + 128) x 128.
// CHECK-LABEL: func.func @tma_two_warpgroups
// CHECK: gpu.launch_func @k{{[0-9]+}}_matmul_module::@k{{[0-9]+}}_matmul {{.*}} threads in (%c288
// CHECK: gpu.func @k{{[0-9]+}}_matmul
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK: arith.cmpi eq, %{{.*}}, %c8 : index
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK: arith.cmpi ult, %{{.*}}, %c256 : index
// CHECK-NOT: nvvm.setmaxregister
// CHECK: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @tma_two_warpgroups(%arg0: tensor<256x256xf32>, %arg1: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A row-major B (no transpose_b): the kernel computes C^T = B^T A^T. B's
// tensor map copies boxes of 32 k rows x 32 columns (dims as stored: K x N),
// four per 128-column tile; A's is as ever (BM rows x 32). Two consumer
// warpgroups of 64 columns and a whole producer warpgroup (384 threads),
// which gives its registers away (setmaxnreg 40) to the consumers (232).
// Each k tile: the 16 fragment words of B^T from shared memory, the fence,
// four register-sourced wgmma (inline PTX; m64n256: N is the tile's 256
// rows), and wait_group 0 before the next tile's fragment loads.
// CHECK-LABEL: func.func @row_major_b
// CHECK: kb.tensor_map = {box = [256, 32], dims = [512, 200], of = "arg0"}
// CHECK: kb.tensor_map = {box = [32, 32], dims = [200, 256], of = "arg1"}
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul blocks in (%c2, %c2{{.*}}, %c1) threads in (%c384
// CHECK: nvvm.setmaxregister decrease 40
// CHECK-COUNT-5: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-16: memref.load %view
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma.mma_async
func.func @row_major_b(%arg0: tensor<512x200xf32>, %arg1: tensor<200x256xf32>) -> tensor<512x256xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<block = [256, 128, 32], threads = 384, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<512x200xf32>, tensor<200x256xf32> -> tensor<512x256xf32>
  return %0 : tensor<512x256xf32>
}

// -----

// Four consumer warpgroups (a row-major B, BN = 256): a block of 640
// threads starts with 96 registers each (65536 / 640 in steps of 8), and
// setmaxnreg.inc can take only what the producer released (128 x (96 - 40)),
// shared by 512 threads: 104. The old count, (65536 - 128 x 40) / 512 = 112,
// waited for registers that never came (the GPU run 5 hang).
// CHECK-LABEL: func.func @row_major_b_four_consumers
// CHECK: threads in (%c640
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.setmaxregister increase 104
// CHECK-NOT: nvvm.setmaxregister
func.func @row_major_b_four_consumers(%arg0: tensor<128x256xf32>, %arg1: tensor<256x512xf32>) -> tensor<128x512xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<block = [128, 256, 32], threads = 640, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<128x256xf32>, tensor<256x512xf32> -> tensor<128x512xf32>
  return %0 : tensor<128x512xf32>
}


// -----

// An uneven split (kb-split-k's chunks of ceil(32 / 5) = 7 k tiles, the
// last of 4): the prologue's copies are all guarded, and the loop guards
// each tile whose end runs past K (split z's tile at 224 z + 32 kt + 32 >
// 1024), not only its last one.
// CHECK-LABEL: func.func @uneven_split
// CHECK: gpu.func @k0_matmul
// CHECK: arith.minui %{{.*}}, %c1024 : index
// CHECK: scf.for %{{.*}} = %c0 to %c7 step %c1
// CHECK: gpu.barrier
// CHECK: %[[PAST:.*]] = arith.cmpi ugt, %{{.*}}, %c1024 : index
// CHECK-NEXT: scf.if %[[PAST]] {
func.func @uneven_split(%arg0: tensor<64x1024xf32>, %arg1: tensor<64x1024xf32>) -> tensor<5x64x64xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 128, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "cp_async", split = 5>, split_chunk = 224 : i64} : tensor<64x1024xf32>, tensor<64x1024xf32> -> tensor<5x64x64xf32>
  return %0 : tensor<5x64x64xf32>
}

// -----

// A persistent grid (grid = 20 for 8 x 4 = 32 output tiles): 20 blocks;
// block g takes tiles g and g + 20 ((51 - g) / 20 of them). Its producer
// counts k tiles over its output tiles; each consumer warpgroup runs a k
// loop per tile, retires every wgmma, releases the tile's last stage (the
// producer may be waiting for it, to copy the next tile) and stores.
// CHECK-LABEL: func.func @persistent
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul blocks in (%c20, %c1, %c1{{.*}}) threads in (%c288
// CHECK: gpu.func @k0_matmul
// The producer:
// CHECK: %[[G:.*]] = gpu.block_id x
// CHECK: %[[R:.*]] = arith.subi %c51, %[[G]] : index
// CHECK: %[[N:.*]] = arith.divui %[[R]], %c20 : index
// CHECK: scf.for %[[I:.*]] = %c0 to %[[N]] step %c1 {
// Output tile g + 20 i of the 32: row tile (t % 32) / 4, column tile t % 4.
// CHECK: %[[T0:.*]] = arith.muli %[[I]], %c20 : index
// CHECK: %[[T:.*]] = arith.addi %{{.*}}, %[[T0]] : index
// CHECK: arith.remui %[[T]], %c32 : index
// CHECK: scf.for %[[KT:.*]] = %c0 to %c8 step %c1 {
// The block's k tile c = 8 i + kt picks the stage and the empty wait.
// CHECK: %[[C0:.*]] = arith.muli %[[I]], %c8 : index
// CHECK: %[[C:.*]] = arith.addi %[[C0]], %[[KT]] : index
// CHECK: arith.cmpi uge, %[[C]], %c4 : index
// CHECK: arith.remui %[[C]], %c4 : index
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// The consumers:
// CHECK: arith.subi %c51, %{{.*}} : index
// CHECK: scf.for %[[J:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK: %[[D0:.*]] = arith.muli %[[J]], %c8 : index
// CHECK: scf.for %[[KU:.*]] = %c0 to %c8 step %c1 iter_args
// CHECK: %[[D:.*]] = arith.addi %[[D0]], %[[KU]] : index
// CHECK: arith.remui %[[D]], %c4 : index
// CHECK: arith.divui %[[D]], %c4 : index
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// The tile's last stage (k tile 8 j + 7), released after every wgmma retired.
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: arith.addi %[[D0]], %c7 : index
// CHECK: nvvm.mbarrier.arrive
// B^T with N % 4 == 0: the epilogue is staged through shared memory (8-byte
// pairs in, 16-byte chunks out: aligned, so that NVPTX keeps them vectors)
// and stored as 16-byte vectors.
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: nvvm.bar.warp.sync
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.store %{{.*}} : memref<1000x512xf32>, vector<4xf32>
func.func @persistent(%arg0: tensor<1000x256xf32>, %arg1: tensor<512x256xf32>) -> tensor<1000x512xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 20, copy = "tma">} : tensor<1000x256xf32>, tensor<512x256xf32> -> tensor<1000x512xf32>
  return %0 : tensor<1000x512xf32>
}

// -----

// A persistent grid over split-K partials: 6 tiles x 7 chunks (of 45 k
// tiles, the last of 43) = 42 tiles for 10 blocks. Tile t's chunk is t / 6:
// the producer's K coordinate is (45 (t / 6) + kt) x 32, and the consumers
// store into partial t / 6 of C (staged: 16-byte stores).
// CHECK-LABEL: func.func @persistent_split
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul blocks in (%c10, %c1, %c1{{.*}}) threads in (%c288
// CHECK: %[[S:.*]] = arith.divui %{{.*}}, %c6 : index
// CHECK: scf.for %[[KT:.*]] = %c0 to %c45 step %c1 {
// CHECK: %[[K0:.*]] = arith.muli %[[S]], %c45 : index
// CHECK: %[[K1:.*]] = arith.addi %[[K0]], %[[KT]] : index
// CHECK: %[[K:.*]] = arith.muli %[[K1]], %c32 : index
// CHECK: %[[KI:.*]] = arith.index_castui %[[K]] : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%[[KI]], %{{.*}}]
// CHECK: %[[CS:.*]] = arith.divui %{{.*}}, %c6 : index
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[CS]], %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<7x300x256xf32>, vector<4xf32>
func.func @persistent_split(%arg0: tensor<300x10000xf32>, %arg1: tensor<256x10000xf32>) -> tensor<7x300x256xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 10, copy = "tma", split = 7>, split_chunk = 1440 : i64} : tensor<300x10000xf32>, tensor<256x10000xf32> -> tensor<7x300x256xf32>
  return %0 : tensor<7x300x256xf32>
}

// -----

// The staging does not fit beside three stages of 384 x 128 tiles (197680 +
// 49152 bytes > 227 KB): the epilogue stores directly (8-byte pairs), and
// the block asks for the stages' bytes only (12 tiles: a grid of 12).
// CHECK-LABEL: func.func @persistent_no_room_to_stage
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul blocks in (%c12, %c1, %c1{{.*}}) threads in (%c800{{.*}}) dynamic_shared_memory_size %c197680_i32
// CHECK-NOT: vector.load %{{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.store %{{.*}} : memref<1000x512xf32>, vector<2xf32>
func.func @persistent_no_room_to_stage(%arg0: tensor<1000x256xf32>, %arg1: tensor<512x256xf32>) -> tensor<1000x512xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [384, 128, 32], threads = 800, stages = 3, pad = [0, 0], mma = "wgmma_tf32", grid = 20, copy = "tma">} : tensor<1000x256xf32>, tensor<512x256xf32> -> tensor<1000x512xf32>
  return %0 : tensor<1000x512xf32>
}

// -----

func.func @persistent_cp_async(%arg0: tensor<256x256xf32>, %arg1: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{wgmma_tf32 with grid = 4 (a persistent grid) needs copy = "tma"}}
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 128, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 4, copy = "cp_async">} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

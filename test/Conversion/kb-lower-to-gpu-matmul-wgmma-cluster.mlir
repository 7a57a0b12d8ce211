// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// cluster = 2 on a wgmma matmul with TMA copies and B^T (MatmulWgmma.cpp):
// two blocks of one column of tiles share B^T's tile. Pinned here: the
// launch's clusters (1 x 2 x 1), B's tensor map boxes of half the tile's
// rows, the pair's tile from block id y / 2 and the rank y % 2, empty
// barriers counting both blocks' consumer warps (4 x 2), a cluster barrier
// after their set-up (no block barrier), the producer's half of B
// multicast to both blocks (mask 3) and, after its 16 k tiles (K = 512),
// its tail: waits for the releases of the last 4 (S) k tiles, 12 to 15;
// each consumer release arriving on the peer's barrier through mapa with the
// default (CTA-scope) semantics, the last k tile's too after the loop; no
// cluster barrier at the end.
// CHECK-LABEL: func.func @pair
// CHECK: kb.tensor_map = {box = [64, 32], dims = [256, 512], of = "arg0"}
// CHECK: kb.tensor_map = {box = [32, 32], dims = [128, 512], of = "arg1"}
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul clusters in (%{{.*}}, %c2{{.*}}, %{{.*}}) blocks in (%c2{{.*}}, %c4, %{{.*}})
// CHECK: gpu.func @k0_matmul
// CHECK: %[[BY:.+]] = gpu.block_id  y
// CHECK: arith.divui %[[BY]], %c2 : index
// CHECK: arith.remui %[[BY]], %c2 : index
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] :
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %c3_i16
// CHECK: scf.for %{{.*}} = %c12 to %c16 step %c1 {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32 remote, $0, $1;\0Ambarrier.arrive.shared::cluster.b64 _, [remote];
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32
// CHECK-NOT: nvvm.cluster.arrive
// CHECK: gpu.return
func.func @pair(%arg0: tensor<256x512xf32>, %arg1: tensor<128x512xf32>) -> tensor<256x128xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">} : tensor<256x512xf32>, tensor<128x512xf32> -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
}

// -----

// With a persistent grid (grid = 6): 6 blocks in clusters of 2 x 1 x 1, the
// rank from block id x % 2, the pair p = x / 2 walking tiles of 128 rows
// (2 x 64) three pairs apart.
// CHECK-LABEL: func.func @pair_persistent
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul clusters in (%c2{{.*}}, %c1{{.*}}, %c1{{.*}}) blocks in (%c6, %c1{{.*}}, %c1{{.*}})
// CHECK: gpu.func @k0_matmul
// CHECK: %[[BX:.+]] = gpu.block_id  x
// CHECK: arith.remui %[[BX]], %c2 : index
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK: %[[BX2:.+]] = gpu.block_id  x
// CHECK-NEXT: arith.divui %[[BX2]], %c2 : index
// CHECK: multicast_mask = %c3_i16
// CHECK: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32
func.func @pair_persistent(%arg0: tensor<256x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<256x128xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, grid = 6, copy = "tma">} : tensor<256x128xf32>, tensor<128x128xf32> -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
}

// -----

// An odd number of row tiles (130 rows make three of 64): the grid's rows
// are rounded up to whole clusters (four), as cuBLAS's are; the fourth
// block (rows 192..255) copies its half of B^T for its peer and stores
// nothing (M % BM != 0: the stores were guarded already).
// CHECK-LABEL: func.func @odd_row_tiles
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul clusters in (%{{.*}}, %c2{{.*}}, %{{.*}}) blocks in (%c2{{.*}}, %c4{{.*}}, %{{.*}})
// CHECK: arith.cmpi ult, %{{.*}}, %c130 : index
func.func @odd_row_tiles(%arg0: tensor<130x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<130x128xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">} : tensor<130x128xf32>, tensor<128x128xf32> -> tensor<130x128xf32>
  return %0 : tensor<130x128xf32>
}

// -----

// M a multiple of BM (192: three row tiles) but not of the cluster's rows:
// the rounded-up grid's last block lies wholly past M, so the stores get
// the row guard that M % BM == 0 alone would leave out.
// CHECK-LABEL: func.func @whole_row_tiles
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul clusters in (%{{.*}}, %c2{{.*}}, %{{.*}}) blocks in (%c2{{.*}}, %c4{{.*}}, %{{.*}})
// CHECK: arith.cmpi ult, %{{.*}}, %c192 : index
func.func @whole_row_tiles(%arg0: tensor<192x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<192x128xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">} : tensor<192x128xf32>, tensor<128x128xf32> -> tensor<192x128xf32>
  return %0 : tensor<192x128xf32>
}

// -----

// Without a cluster, 192 rows in tiles of 64 need no row guard.
// CHECK-LABEL: func.func @whole_row_tiles_alone
// CHECK-NOT: %c192 : index
// CHECK: gpu.return
func.func @whole_row_tiles_alone(%arg0: tensor<192x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<192x128xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<192x128xf32>, tensor<128x128xf32> -> tensor<192x128xf32>
  return %0 : tensor<192x128xf32>
}

// -----

// A persistent grid with clusters of two still needs an even number of row
// tiles: refused in one line.
func.func @odd_row_tiles_persistent(%arg0: tensor<130x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<130x128xf32> {
  // expected-error @+1 {{and with a persistent grid an even number of row tiles (M = 130 makes 3)}}
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, grid = 4, copy = "tma">} : tensor<130x128xf32>, tensor<128x128xf32> -> tensor<130x128xf32>
  return %0 : tensor<130x128xf32>
}

// -----

// A cluster of four (since session 14; not yet run on a GPU): 256 rows in
// four row tiles of 64, one cluster (1 x 4 x 1). B^T's boxes are a quarter
// of the tile's rows (16); the rank is y % 4; the empty barriers count the
// four blocks' consumer warps (4 x 4); the producer's quarter goes to all
// four (mask 15); each consumer release arrives on its own barrier and on
// the three others' (rank ^ 1, ^ 2, ^ 3).
// CHECK-LABEL: func.func @four
// CHECK: kb.tensor_map = {box = [16, 32], dims = [128, 128], of = "arg1"}
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul clusters in (%{{.*}}, %c4{{.*}}, %{{.*}}) blocks in (%c2{{.*}}, %c4{{.*}}, %{{.*}})
// CHECK: %[[BY:.+]] = gpu.block_id  y
// CHECK: arith.divui %[[BY]], %c4 : index
// CHECK: arith.remui %[[BY]], %c4 : index
// CHECK: nvvm.mbarrier.init %{{.*}}, %c16_i32
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK: multicast_mask = %c15_i16
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK-COUNT-3: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32
// CHECK-NOT: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @four(%arg0: tensor<256x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<256x128xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 4, copy = "tma">} : tensor<256x128xf32>, tensor<128x128xf32> -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
}

// -----

// A cluster of eight with B^T (BN = 64: parts of 8 rows): mask 255, seven
// remote arrives a release.
// CHECK-LABEL: func.func @eight
// CHECK: kb.tensor_map = {box = [8, 32], dims = [64, 128], of = "arg1"}
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul clusters in (%{{.*}}, %c8{{.*}}, %{{.*}}) blocks in (%c1{{.*}}, %c8{{.*}}, %{{.*}})
// CHECK: nvvm.mbarrier.init %{{.*}}, %c32_i32
// CHECK: multicast_mask = %c255_i16
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK-COUNT-7: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32
// CHECK-NOT: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @eight(%arg0: tensor<512x128xf32>, %arg1: tensor<64x128xf32>) -> tensor<512x64xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 8, copy = "tma">} : tensor<512x128xf32>, tensor<64x128xf32> -> tensor<512x64xf32>
  return %0 : tensor<512x64xf32>
}

// -----

// A cluster of four with a row-major B (BN = 128: one box of 32 columns a
// block, at column 32 x rank), mask 15.
// CHECK-LABEL: func.func @four_row_major
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul clusters in (%{{.*}}, %c4{{.*}}, %{{.*}}) blocks in (%c1{{.*}}, %c4{{.*}}, %{{.*}})
// CHECK: nvvm.mbarrier.init %{{.*}}, %c32_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] :
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %c15_i16
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-COUNT-3: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32
func.func @four_row_major(%arg0: tensor<256x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<256x128xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<block = [64, 128, 32], threads = 384, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 4, copy = "tma">} : tensor<256x128xf32>, tensor<128x128xf32> -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
}

// -----

// A cluster of eight with a row-major B needs BN = 256 (one box of 32
// columns a block): BN = 128 refused.
func.func @eight_row_major_narrow(%arg0: tensor<512x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<512x128xf32> {
  // expected-error @+1 {{BN a multiple of 8 x cluster with B transposed or of 32 x cluster (64 x cluster in 16-bit) with a row-major B (each block copies its part of B's tile; BN = 128)}}
  %0 = kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<block = [64, 128, 32], threads = 384, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 8, copy = "tma">} : tensor<512x128xf32>, tensor<128x128xf32> -> tensor<512x128xf32>
  return %0 : tensor<512x128xf32>
}

// -----

// A cluster of three: refused (2, 4 or 8).
func.func @three(%arg0: tensor<192x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<192x128xf32> {
  // expected-error @+1 {{#kb.config cluster = 3: a matmul shares B's tile over 2, 4 or 8 blocks}}
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 48, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 3, copy = "tma">} : tensor<192x128xf32>, tensor<128x128xf32> -> tensor<192x128xf32>
  return %0 : tensor<192x128xf32>
}

// -----

// A persistent grid takes clusters of two at most.
func.func @four_persistent(%arg0: tensor<256x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<256x128xf32> {
  // expected-error @+1 {{wgmma_tf32 with grid = 8 (a persistent grid) takes cluster = 2 at most, got cluster = 4}}
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 4, grid = 8, copy = "tma">} : tensor<256x128xf32>, tensor<128x128xf32> -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
}

// -----

// A row-major B (its kernel reads B's boxes of 32 columns through
// registers): each block of the pair copies half of B's BN / 32 boxes (BN =
// 128: two, the rank's: boxes 2r and 2r + 1) and multicasts them; its A
// tile alone. The boxes stay BK x 32; the empty barriers count both
// blocks' consumer warps (8 x 2).
// CHECK-LABEL: func.func @row_major_b
// CHECK: kb.tensor_map = {box = [32, 32], dims = [256, 128], of = "arg1"}
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul clusters in (%{{.*}}, %c2{{.*}}, %{{.*}}) blocks in (%c1{{.*}}, %c4, %{{.*}})
// CHECK: nvvm.mbarrier.init %{{.*}}, %c16_i32
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c24576_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] :
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %c3_i16
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %c3_i16
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32
func.func @row_major_b(%arg0: tensor<256x256xf32>, %arg1: tensor<256x128xf32>) -> tensor<256x128xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<block = [64, 128, 32], threads = 384, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">} : tensor<256x256xf32>, tensor<256x128xf32> -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
}

// -----

// A row-major B with BN = 32 (one box, which does not halve): refused.
func.func @row_major_b_narrow(%arg0: tensor<256x128xf32>, %arg1: tensor<128x32xf32>) -> tensor<256x32xf32> {
  // expected-error @+1 {{BN a multiple of 8 x cluster with B transposed or of 32 x cluster (64 x cluster in 16-bit) with a row-major B (each block copies its part of B's tile; BN = 32)}}
  %0 = kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<block = [64, 32, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">} : tensor<256x128xf32>, tensor<128x32xf32> -> tensor<256x32xf32>
  return %0 : tensor<256x32xf32>
}

// -----

// BN = 24: each half of B^T's tile (12 rows, 1536 bytes) would start off
// the 1024-byte grid of the 128-byte swizzle: refused.
func.func @odd_half(%arg0: tensor<256x128xf32>, %arg1: tensor<48x128xf32>) -> tensor<256x48xf32> {
  // expected-error @+1 {{BN a multiple of 8 x cluster with B transposed or of 32 x cluster (64 x cluster in 16-bit) with a row-major B (each block copies its part of B's tile; BN = 24)}}
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 24, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">} : tensor<256x128xf32>, tensor<48x128xf32> -> tensor<256x48xf32>
  return %0 : tensor<256x48xf32>
}

// -----

// An odd persistent grid with cluster = 2: refused (whole clusters of two).
func.func @odd_grid(%arg0: tensor<256x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<256x128xf32> {
  // expected-error @+1 {{wgmma_tf32 with grid = 5 and cluster = 2 needs an even grid (whole clusters of two)}}
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, grid = 5, copy = "tma">} : tensor<256x128xf32>, tensor<128x128xf32> -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
}

// -----

// 16-bit with a row-major B (read MN-major, boxes of 64 columns: 128 bytes):
// each block of the pair copies half of B's BN / 64 boxes (BN = 256: two,
// the rank's) and multicasts them; its A tile alone. Stage bytes: A 128 x 64
// and B 64 x 256 bf16, 49152.
// CHECK-LABEL: func.func @half_row_major_b
// CHECK: kb.tensor_map = {box = [64, 64], dims = [256, 512], of = "arg1"}
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul clusters in (%{{.*}}, %c2{{.*}}, %{{.*}}) blocks in (%c2{{.*}}, %c4{{.*}}, %{{.*}})
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c49152_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] :
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %c3_i16
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %c3_i16
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32
func.func @half_row_major_b(%arg0: tensor<512x256xbf16>, %arg1: tensor<256x512xbf16>) -> tensor<512x512xbf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [128, 256, 64], threads = 288, stages = 4, mma = "wgmma_bf16", cluster = 2, copy = "tma">} : tensor<512x256xbf16>, tensor<256x512xbf16> -> tensor<512x512xbf16>
  return %0 : tensor<512x512xbf16>
}

// -----

// 16-bit B^T in a persistent grid of pairs: B^T's tile split by rows (BN /
// 2 = 128 rows a block), multicast to both.
// CHECK-LABEL: func.func @half_pairs_bt
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul clusters in (%c2{{.*}}, %c1{{.*}}, %{{.*}})
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %c3_i16
func.func @half_pairs_bt(%arg0: tensor<512x256xf16>, %arg1: tensor<512x256xf16>) -> tensor<512x512xf16> {
  %0 = kb.matmul %arg0, %arg1 transpose_b {config = #kb.config<block = [128, 256, 64], threads = 288, stages = 4, mma = "wgmma_f16", cluster = 2, grid = 4, copy = "tma">} : tensor<512x256xf16>, tensor<512x256xf16> -> tensor<512x512xf16>
  return %0 : tensor<512x512xf16>
}

// -----

// 16-bit, a row-major B, a cluster of four with BN = 128 (two boxes of 64
// columns, which do not split in four): refused.
func.func @half_row_major_four_narrow(%arg0: tensor<512x256xbf16>, %arg1: tensor<256x128xbf16>) -> tensor<512x128xbf16> {
  // expected-error @+1 {{BN a multiple of 8 x cluster with B transposed or of 32 x cluster (64 x cluster in 16-bit) with a row-major B (each block copies its part of B's tile; BN = 128)}}
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [128, 128, 64], threads = 288, stages = 4, mma = "wgmma_bf16", cluster = 4, copy = "tma">} : tensor<512x256xbf16>, tensor<256x128xbf16> -> tensor<512x128xbf16>
  return %0 : tensor<512x128xbf16>
}

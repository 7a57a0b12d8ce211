// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// store = "tma" on a wgmma matmul with TMA copies and B^T (MatmulWgmma.cpp,
// the TMA-store epilogue). 200 x 96 x 64 on 128 x 64 tiles: rows past M in
// the second row of tiles, which TMA clips (no guard on any store). Pinned
// here: a third tensor map, C's (the output buffer, boxes of 64 rows x 32
// columns), passed after A's and B's; the shared memory of 4 stages
// (98,304), the 1 KB alignment slack, the mbarriers and the C buffer on the
// next 1024 bytes (1,024 - 64 + 2 warpgroups x 2 boxes x 8 KB): 133,120;
// for each of the 2 boxes of 32 columns of a warpgroup, 8 shared-memory
// pair stores, fence.proxy.async.shared::cta, thread 0 of the warpgroup
// waiting for the reads of its previous store (wait_group.read 0), the
// warpgroup's named barrier (1 + w, 128 threads), then thread 0's tensor
// store of the box from shared memory and its commit; at the end thread 0
// waits for its stores to complete (wait_group 0, not .read). No global
// store of C.
// CHECK-LABEL: func.func @tma_store
// CHECK: kb.tensor_map = {box = [128, 32], dims = [200, 64], of = "arg0"}
// CHECK: kb.tensor_map = {box = [64, 32], dims = [96, 64], of = "arg1"}
// CHECK: %[[TMC:.+]] = memref.alloc() {kb.name = "tm2", kb.role = "tensor_map", kb.tensor_map = {box = [64, 32], dims = [200, 96], of = "out0"}}
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul {{.*}} dynamic_shared_memory_size %c133120_i32 args(%arg0 : memref<200x64xf32>, %arg1 : memref<96x64xf32>, %{{.*}} : memref<32xi32>, %{{.*}} : memref<32xi32>, %[[TMC]] : memref<32xi32>, %arg2 : memref<200x96xf32>)
// CHECK: gpu.func @k0_matmul
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: memref<200x96xf32>
// CHECK-COUNT-8: vector.store %{{.*}}, %view[%{{.*}}] {alignment = 8 : i64} : memref<33024xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-COUNT-8: vector.store %{{.*}}, %view
// CHECK-NEXT: nvvm.fence.proxy
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NOT: vector.store
// CHECK-NOT: memref<200x96xf32>
// CHECK: nvvm.cp.async.bulk.wait_group 0{{$}}
// CHECK: gpu.return
func.func @tma_store(%arg0: tensor<200x64xf32>, %arg1: tensor<96x64xf32>) -> tensor<200x96xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [128, 64, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", store = "tma">} : tensor<200x64xf32>, tensor<96x64xf32> -> tensor<200x96xf32>
  return %0 : tensor<200x96xf32>
}

// -----

// With a persistent grid (grid = 3): each tile's epilogue starts with
// thread 0's wait for the reads of the previous tile's last store and the
// warpgroup's barrier; the final wait_group 0 comes after the tile loop.
// CHECK-LABEL: func.func @tma_store_persistent
// CHECK: gpu.func @k0_matmul
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: }
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK: vector.store
// CHECK: nvvm.fence.proxy
// CHECK-COUNT-2: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: arith.remui %thread_id_x, %c128
// CHECK: nvvm.cp.async.bulk.wait_group 0{{$}}
// CHECK: gpu.return
func.func @tma_store_persistent(%arg0: tensor<256x64xf32>, %arg1: tensor<128x64xf32>) -> tensor<256x128xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [128, 64, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 3, copy = "tma", store = "tma">} : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
}

// -----

// A row-major B (the accumulators hold C^T) is not supported yet.
func.func @tma_store_row_b(%arg0: tensor<128x64xf32>, %arg1: tensor<64x128xf32>) -> tensor<128x128xf32> {
  // expected-error @+1 {{store = "tma" (the wgmma TMA-store epilogue) needs B transposed (transpose_b)}}
  %0 = kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<block = [64, 128, 32], threads = 384, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", store = "tma">} : tensor<128x64xf32>, tensor<64x128xf32> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// -----

// Boxes of 32 columns: BN a multiple of 32.
func.func @tma_store_bn(%arg0: tensor<128x64xf32>, %arg1: tensor<48x64xf32>) -> tensor<128x48xf32> {
  // expected-error @+1 {{store = "tma" (the wgmma TMA-store epilogue) needs BN a multiple of 32 (boxes of 128-byte rows); BN = 48}}
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [64, 48, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", store = "tma">} : tensor<128x64xf32>, tensor<48x64xf32> -> tensor<128x48xf32>
  return %0 : tensor<128x48xf32>
}

// -----

// A 16-bit C: boxes of 64 rows x 64 columns (128-byte rows, as f32's 32),
// C's tensor map over the bf16 output; each thread's pair rounded once and
// stored as one 4-byte word, 16 a box (8 column groups x 2 row halves), two
// boxes of a warpgroup for BN = 128. A row-major B (read MN-major) takes it
// too.
// CHECK-LABEL: func.func @half_tma_store
// CHECK: kb.tensor_map = {box = [64, 64], dims = [256, 256], of = "out0"}
// CHECK: gpu.func @k0_matmul
// CHECK-COUNT-16: vector.store %{{.*}}, %view[%{{.*}}] {alignment = 4 : i64} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<1xf32>
// CHECK-NEXT: nvvm.fence.proxy
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-COUNT-16: vector.store %{{.*}}, %view
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NOT: vector.store
// CHECK: nvvm.cp.async.bulk.wait_group 0{{$}}
func.func @half_tma_store(%arg0: tensor<256x128xbf16>, %arg1: tensor<128x256xbf16>) -> tensor<256x256xbf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [128, 128, 64], threads = 288, stages = 3, mma = "wgmma_bf16", copy = "tma", store = "tma">} : tensor<256x128xbf16>, tensor<128x256xbf16> -> tensor<256x256xbf16>
  return %0 : tensor<256x256xbf16>
}

// -----

// A 16-bit C with BN = 96: not whole boxes of 64 columns, refused.
func.func @half_tma_store_narrow(%arg0: tensor<256x128xf16>, %arg1: tensor<192x128xf16>) -> tensor<256x192xf16> {
  // expected-error @+1 {{store = "tma" (the wgmma TMA-store epilogue) needs BN a multiple of 64 (boxes of 128-byte rows); BN = 96}}
  %0 = kb.matmul %arg0, %arg1 transpose_b {config = #kb.config<block = [128, 96, 64], threads = 288, stages = 3, mma = "wgmma_f16", copy = "tma", store = "tma">} : tensor<256x128xf16>, tensor<192x128xf16> -> tensor<256x192xf16>
  return %0 : tensor<256x192xf16>
}

// -----

// A batched 16-bit C: C's tensor map is 3-D (dims [batch, M, N], boxes of
// one batch's 64 x 64), so a box of the second row of tiles (rows 128-255
// of M = 200) is clipped at the end of its own batch, not written into
// the next one's first rows; each box's tensor store takes the batch (the
// block's z) as its third coordinate. No global store of C.
// CHECK-LABEL: func.func @half_tma_store_batched
// CHECK: kb.tensor_map = {box = [1, 128, 64], dims = [2, 200, 128], of = "arg0"}
// CHECK: kb.tensor_map = {box = [1, 64, 64], dims = [2, 200, 128], of = "out0"}
// CHECK: gpu.func @k0_matmul
// CHECK: %[[BZ:.+]] = gpu.block_id  z
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: memref<2x200x128xbf16>
// CHECK: %[[BZI:.+]] = arith.index_castui %[[BZ]] : index to i32
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %[[BZI]]] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK-NOT: memref<2x200x128xbf16>
// CHECK: nvvm.cp.async.bulk.wait_group 0{{$}}
// CHECK: gpu.return
func.func @half_tma_store_batched(%arg0: tensor<2x200x128xbf16>, %arg1: tensor<2x128x128xbf16>) -> tensor<2x200x128xbf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [128, 128, 64], threads = 288, stages = 3, mma = "wgmma_bf16", copy = "tma", store = "tma">} : tensor<2x200x128xbf16>, tensor<2x128x128xbf16> -> tensor<2x200x128xbf16>
  return %0 : tensor<2x200x128xbf16>
}

// -----

// Batched on a persistent grid (grid = 3 over 2 batches x 2 x 1 tiles of
// B^T): the batch coordinate is the walked tile's (g + 3i over 2 tiles a
// batch), not the block's z; C stays a 3-D map.
// CHECK-LABEL: func.func @half_tma_store_batched_persistent
// CHECK: kb.tensor_map = {box = [1, 64, 64], dims = [2, 256, 128], of = "out0"}
// CHECK: gpu.func @k0_matmul
// CHECK-NOT: gpu.block_id  z
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK: %[[T:.+]] = arith.addi %block_id_x{{.*}}, %{{.*}} : index
// CHECK: %[[BATCH:.+]] = arith.divui %[[T]], %c2 : index
// CHECK: %[[BZI:.+]] = arith.index_castui %[[BATCH]] : index to i32
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%c0_i32, %{{.*}}, %[[BZI]]] : !llvm.ptr, <3>
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%c64_i32, %{{.*}}, %[[BZI]]] : !llvm.ptr, <3>
// CHECK: nvvm.cp.async.bulk.wait_group 0{{$}}
func.func @half_tma_store_batched_persistent(%arg0: tensor<2x256x128xf16>, %arg1: tensor<2x128x128xf16>) -> tensor<2x256x128xf16> {
  %0 = kb.matmul %arg0, %arg1 transpose_b {config = #kb.config<block = [128, 128, 64], threads = 288, stages = 3, mma = "wgmma_f16", grid = 3, copy = "tma", store = "tma">} : tensor<2x256x128xf16>, tensor<2x128x128xf16> -> tensor<2x256x128xf16>
  return %0 : tensor<2x256x128xf16>
}

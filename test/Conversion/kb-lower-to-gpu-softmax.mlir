// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on softmax kernels, one case per strategy (and fused prologues/epilogues): every #kb.config is written out
// complete (as kb-select-mma, kb-select-config, kb-tile and
// kb-promote-shared-memory chose it), so this file breaks only when
// the lowering changes.

// Softmax, row in registers: every load before the first reduction, warp
// shuffles then one exchange through shared memory per reduction, no loop.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_softmax
// CHECK-SAME: workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: scf.for
// CHECK-COUNT-4: vector.load
// CHECK: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: math.exp
// CHECK-COUNT-4: vector.store
func.func @softmax_registers(%arg0: tensor<16x4096xf32>) -> tensor<16x4096xf32> {
  %0 = kb.softmax %arg0 {config = #kb.config<block = [1], threads = 256, vector = 4, strategy = "registers">} : tensor<16x4096xf32>
  return %0 : tensor<16x4096xf32>
}

// -----

// Softmax with rows 4099 long (rows start at any word): 16-byte loads of the
// aligned chunks that overlap the row (a chunk running past the buffer's end
// loads lane by lane, clamped), lanes outside the row masked to -inf, whole
// chunks stored with one 16-byte store and the edge chunks lane by lane.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_softmax
// CHECK: arith.remui %{{.*}}, %c4
// CHECK: scf.if
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<12297xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: arith.minui %{{.*}}, %c12296
// CHECK-COUNT-4: memref.load
// CHECK: arith.select
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<12297xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: scf.if
// CHECK: memref.store
func.func @softmax_unaligned_rows(%arg0: tensor<3x4099xf32>) -> tensor<3x4099xf32> {
  %0 = kb.softmax %arg0 {config = #kb.config<block = [1], threads = 288, vector = 4, strategy = "registers">} : tensor<3x4099xf32>
  return %0 : tensor<3x4099xf32>
}

// -----

// split_shared with two rows per cluster (block = [2]): while a thread stores
// its chunk of row 0 it issues the copy of row 1 into the same slot (one group
// per chunk, inside the store loop); row 1's running max/sum waits on those
// groups; the second exchange first waits for the first one to finish.
// CHECK-LABEL: func.func @softmax_split_shared_rows
// CHECK: gpu.launch_func @{{[^ ]*}} clusters in (%c8, %c1, %c1_0) blocks in (%c8_1, %c1_2, %c1_3)
// CHECK-SAME: block = [2], threads = 1024, vector = 4, strategy = "split_shared", cluster = 8
// CHECK-COUNT-13: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_wait %[[G:.*]] {numGroups = 12 : i32}
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK: scf.for
// CHECK: vector.store
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %[[G]] {numGroups = 12 : i32}
// CHECK: nvvm.cluster.wait {aligned}
// CHECK: memref.store
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: scf.for
// CHECK: vector.store
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.return
func.func @softmax_split_shared_rows(%arg0: tensor<2x400000xf32>) -> tensor<2x400000xf32> {
  %0 = kb.softmax %arg0 {config = #kb.config<block = [2], threads = 1024, vector = 4, strategy = "split_shared", cluster = 8>} : tensor<2x400000xf32>
  return %0 : tensor<2x400000xf32>
}

// -----

// Softmax split_shared on rows 400001 long: the part is covered by aligned
// chunks (one more than 50004 / 4), the chunk running past the end of the
// buffer is loaded lane by lane (clamped) and stored to shared memory from
// registers, lanes outside the part masked.
// CHECK-LABEL: func.func @softmax_split_shared_unaligned
// CHECK: gpu.func @k{{[0-9]+}}_softmax
// CHECK: memref.view {{.*}} to memref<50008xf32, #gpu.address_space<workgroup>>
// CHECK: arith.remui %{{.*}}, %c4
// CHECK: scf.if
// CHECK: nvgpu.device_async_copy %{{.*}}, 4 {bypassL1}
// CHECK: } else {
// CHECK: arith.minui %{{.*}}, %c1200002
// CHECK: vector.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : memref<50008xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: arith.select
// CHECK: nvvm.mapa
// CHECK: scf.for
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<1200003xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: memref.store
func.func @softmax_split_shared_unaligned(%arg0: tensor<3x400001xf32>) -> tensor<3x400001xf32> {
  %0 = kb.softmax %arg0 {config = #kb.config<block = [1], threads = 1024, vector = 4, strategy = "split_shared", cluster = 8>} : tensor<3x400001xf32>
  return %0 : tensor<3x400001xf32>
}

// -----

// Softmax, online (forced): a loop with a running max and sum, then a second
// loop that reads the row again.
// CHECK-LABEL: func.func @softmax_online
// CHECK: gpu.func @k{{[0-9]+}}_softmax
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.load
// CHECK: gpu.shuffle xor
// CHECK: scf.for
// CHECK: vector.load
// CHECK: vector.store
func.func @softmax_online(%arg0: tensor<4x400000xf32>) -> tensor<4x400000xf32> {
  %0 = kb.softmax %arg0 {config = #kb.config<block = [1], threads = 1024, vector = 4, strategy = "online">} : tensor<4x400000xf32>
  return %0 : tensor<4x400000xf32>
}

// -----

// Softmax, split over the registers of a cluster of 16 blocks (forced): 4
// rows x 16 blocks launched as clusters of 16; each block holds its
// 25000 columns in registers (7 loads of 16 bytes per thread, the last one
// guarded), no loop; its partial (max, sum) goes to shared memory, a cluster
// barrier, lanes read the other blocks' pairs through mapa, a second arrive
// before the stores and the wait after them, so that no block leaves while
// its shared memory is still read.
// CHECK-LABEL: func.func @softmax_split
// CHECK: gpu.launch_func @{{.*}} clusters in (%{{.*}}, %{{.*}}, %{{.*}}) blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in
// CHECK-SAME: kb.config = #kb.config<block = [1], threads = 1024, vector = 4, strategy = "split", cluster = 16>
// CHECK: gpu.func @k{{[0-9]+}}_softmax
// CHECK-SAME: workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %[[P:.*]] : memref<2xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: scf.for
// CHECK-COUNT-6: vector.load
// CHECK: scf.if
// CHECK: vector.load
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[P]]
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.load %{{.*}} : !llvm.ptr<7> -> f32
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-COUNT-6: vector.store
// CHECK: vector.store
// CHECK: nvvm.cluster.wait {aligned}
// CHECK-NOT: scf.for
func.func @softmax_split(%arg0: tensor<4x400000xf32>) -> tensor<4x400000xf32> {
  %0 = kb.softmax %arg0 {config = #kb.config<block = [1], threads = 1024, vector = 4, strategy = "split", cluster = 16>} : tensor<4x400000xf32>
  return %0 : tensor<4x400000xf32>
}

// -----

// Softmax, split over the shared memory of a cluster of 8 blocks of 1024
// threads (asked for; the default for 400000-wide rows until split_global
// measured as fast): each block's 50000 columns
// (200000 bytes of dynamic shared memory, the reduction scratch after them)
// copied in by cp.async, 13 groups per thread all in flight; the running max
// and sum are updated as each group lands (wait for at most 12, then 11...
// pending groups); then the cluster exchange and one loop over shared memory
// for the normalised stores.
// CHECK-LABEL: func.func @softmax_split_shared
// CHECK: gpu.launch_func @{{.*}} clusters in (%{{.*}}, %{{.*}}, %{{.*}}) blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %{{.*}} args
// CHECK-SAME: strategy = "split_shared", cluster = 8
// CHECK: gpu.func @k{{[0-9]+}}_softmax
// CHECK-NOT: workgroup(
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<50000xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-13: nvgpu.device_async_copy {{.*}}{bypassL1}
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 12 : i32}
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 11 : i32}
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK: gpu.barrier
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvvm.mapa
// CHECK: scf.for
// CHECK: vector.store
// CHECK: nvvm.cluster.wait {aligned}
func.func @softmax_split_shared(%arg0: tensor<4x400000xf32>) -> tensor<4x400000xf32> {
  %0 = kb.softmax %arg0 {config = #kb.config<block = [4], threads = 1024, vector = 4, strategy = "split_shared", cluster = 8>} : tensor<4x400000xf32>
  return %0 : tensor<4x400000xf32>
}

// -----

// Softmax split_global (forced): the row over 16 ordinary blocks of 512
// threads (no cluster), two rows per group of blocks, each part (25000
// columns, 100000 bytes) staged in shared memory as for split_shared. An i32
// workspace (2 + 2 * 4 rows + 2 * 4 * 16 partial words) goes to the kernel
// before the output, writable (not readonly). Thread 0 draws the block's
// ticket (atomic add; the last ticket resets the counter); per row it
// publishes its partial with one relaxed 8-byte store, counts itself in with
// an acq_rel add (inline PTX), spins on an acquire load (nanosleep) unless it
// was the 16th, reads the 16 partials with relaxed gpu-scope loads, and
// after the block barrier counts itself out; the last to do so resets the
// row's two counters.
// CHECK-LABEL: func.func @softmax_split_global
// CHECK: %[[WS:.*]] = memref.alloc() {kb.name = "ws{{[0-9]+}}", kb.role = "workspace"} : memref<138xi32>
// CHECK: gpu.launch_func @{{.*}} blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %{{.*}} args(%{{.*}} : memref<4x400000xf32>, %[[WS]] : memref<138xi32>, %{{.*}} : memref<4x400000xf32>)
// CHECK-SAME: block = [2], threads = 512, vector = 4, strategy = "split_global", cluster = 16
// CHECK: gpu.func @k{{[0-9]+}}_softmax(%{{.*}}: memref<4x400000xf32> {llvm.noalias, llvm.readonly}, %[[W:.*]]: memref<138xi32> {llvm.noalias}, %{{.*}}: memref<4x400000xf32> {llvm.noalias})
// CHECK: memref.view {{.*}} to memref<25000xf32, #gpu.address_space<workgroup>>
// CHECK: memref.atomic_rmw addi %{{.*}}, %[[W]][%{{.*}}] : (i32, memref<138xi32>) -> i32
// CHECK: memref.atomic_rmw assign
// CHECK: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK: llvm.store %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64
// CHECK: llvm.inline_asm has_side_effects "atom.acq_rel.gpu.add.u32
// CHECK: arith.cmpi ne
// CHECK: scf.while
// CHECK-NEXT: llvm.load %{{.*}} atomic syncscope("device") acquire
// CHECK: nvvm.nanosleep
// CHECK-COUNT-16: llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
// CHECK-NOT: llvm.load
// CHECK: gpu.barrier
// CHECK: memref.atomic_rmw addi
// CHECK: memref.atomic_rmw assign
// CHECK-NEXT: memref.atomic_rmw assign
// CHECK: scf.for
// CHECK: vector.store
// CHECK-NOT: nvvm.cluster
func.func @softmax_split_global(%arg0: tensor<4x400000xf32>) -> tensor<4x400000xf32> {
  %0 = kb.softmax %arg0 {config = #kb.config<block = [2], threads = 512, vector = 4, strategy = "split_global", cluster = 16>} : tensor<4x400000xf32>
  return %0 : tensor<4x400000xf32>
}

// -----

// A softmax with a fused prologue (scale, mask) and epilogue (dropout): the
// row is computed from x and the mask as it is loaded, the dropout applied
// just before the store. One read of x, one write of y.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_fused_scale_bias_add_softmax_dropout
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: memref<8x256xf32> {{.*}}, %[[M:[a-z0-9_]+]]: memref<256xf32> {{.*}}, %[[Y:[a-z0-9_]+]]: memref<8x256xf32> {{.*}})
// CHECK: vector.load %{{.*}} : memref<2048xf32>, vector<4xf32>
// CHECK: vector.load %[[M]]
// CHECK: arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: gpu.shuffle xor
// CHECK: arith.mului_extended
// CHECK: vector.store %{{.*}} : memref<2048xf32>, vector<4xf32>
func.func @softmax_fused(%arg0: tensor<8x256xf32>, %arg1: tensor<256xf32>) -> tensor<8x256xf32> {
  %0 = kb.fusion ins(%arg0, %arg1 : tensor<8x256xf32>, tensor<256xf32>) attributes {config = #kb.config<block = [1], threads = 32, vector = 4, strategy = "registers">} {
  ^bb0(%arg2: tensor<8x256xf32>, %arg3: tensor<256xf32>):
    %1 = kb.scale %arg2 by 1.250000e-01 : tensor<8x256xf32>
    %2 = kb.bias_add %1, %arg3 : tensor<8x256xf32>, tensor<256xf32> -> tensor<8x256xf32>
    %3 = kb.softmax %2 : tensor<8x256xf32>
    %4 = kb.dropout %3 p(1.000000e-01) seed(7) : tensor<8x256xf32>
    kb.yield %4 : tensor<8x256xf32>
  } -> tensor<8x256xf32>
  return %0 : tensor<8x256xf32>
}

// -----

// Softmax split_global with a persistent grid (kb-select-config's choice at
// 131072 columns, 8 blocks per row): 396 blocks for 8192 parts. Thread 0
// draws the first ticket (the last of the 8192 + 396 draws resets the
// counter); the first part's copies go out before the loop; an scf.while
// carries the ticket (i32) while it is below 8192; in the exchange thread 0
// draws the next ticket after the count is complete; pass 2 refills each
// shared-memory slot with the next part's chunk under a uniform guard; no
// copy is left in flight at the end.
// CHECK-LABEL: func.func @softmax_persistent
// CHECK: gpu.launch_func @{{.*}} blocks in (%c396,
// CHECK: gpu.func @k{{[0-9]+}}_softmax(%{{.*}}: memref<1024x131072xf32> {llvm.noalias, llvm.readonly}, %[[W:.*]]: memref<18434xi32> {llvm.noalias}
// CHECK: memref.atomic_rmw addi %{{.*}}, %[[W]][%c0]
// CHECK: arith.cmpi eq, %{{.*}}, %c8587_i32 : i32
// CHECK: memref.atomic_rmw assign %{{.*}}, %[[W]][%c0]
// CHECK-COUNT-8: nvgpu.device_async_create_group
// CHECK-NEXT: scf.while (%{{.*}} = %{{.*}}) : (i32) -> i32
// CHECK: arith.cmpi ult, %{{.*}}, %c8192_i32 : i32
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_wait %[[G:[0-9]+]] {numGroups = 7 : i32}
// CHECK: llvm.inline_asm has_side_effects "atom.acq_rel.gpu.add.u32
// CHECK: scf.while
// CHECK: memref.atomic_rmw addi %{{.*}}, %[[W]][%c0]
// CHECK: arith.cmpi eq, %{{.*}}, %c8587_i32 : i32
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: vector.store
// CHECK: arith.andi
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.yield %{{.*}} : i32
// CHECK: nvgpu.device_async_wait %[[G]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.return
func.func @softmax_persistent(%arg0: tensor<1024x131072xf32>) -> tensor<1024x131072xf32> {
  %0 = kb.softmax %arg0 {config = #kb.config<block = [1], threads = 512, vector = 4, stages = 2, strategy = "split_global", cluster = 8, grid = 396>} : tensor<1024x131072xf32>
  return %0 : tensor<1024x131072xf32>
}

// -----

// Index width: a small kernel computes with 32-bit indices; a split_global
// softmax keeps 64-bit ones, because it takes its workspace's address as an
// index (a 32-bit index cut the pointer: CUDA_ERROR_ILLEGAL_ADDRESS on the
// H200). (When this test was written a fused prologue made the kernel free
// of nvgpu ops, which also force 64-bit indices; since 2026-11-30 run 44 the
// prologue's input is copied by cp.async, so both reasons hold here.)
// CHECK-LABEL: func.func @index_width
// CHECK: gpu.module @k{{[0-9]+}}_fused_scale_softmax_module {
// CHECK: memref.extract_aligned_pointer_as_index %{{.*}} : memref<{{[0-9]+}}xi32> -> index
// CHECK: gpu.module @k{{[0-9]+}}_relu_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i32>}
func.func @index_width(%arg0: tensor<4x400000xf32>, %arg1: tensor<4x8xf32>) -> (tensor<4x400000xf32>, tensor<4x8xf32>) {
  %0 = kb.fusion ins(%arg0 : tensor<4x400000xf32>) attributes {config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "split_global", cluster = 16>} {
  ^bb0(%arg2: tensor<4x400000xf32>):
    %2 = kb.scale %arg2 by 1.250000e-01 : tensor<4x400000xf32>
    %3 = kb.softmax %2 : tensor<4x400000xf32>
    kb.yield %3 : tensor<4x400000xf32>
  } -> tensor<4x400000xf32>
  %1 = kb.relu %arg1 {config = #kb.config<block = [1024], threads = 256, vector = 4>} : tensor<4x8xf32>
  return %0, %1 : tensor<4x400000xf32>, tensor<4x8xf32>
}

// -----

// A persistent grid with one stage: no copies before the loop; each part's
// copies go out at the start of its turn, and pass 2 copies nothing.
// CHECK-LABEL: func.func @softmax_persistent_one_stage
// CHECK: gpu.func @k{{[0-9]+}}_softmax
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: scf.while (%{{.*}} = %{{.*}}) : (i32) -> i32
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_wait
// CHECK: llvm.inline_asm has_side_effects "atom.acq_rel.gpu.add.u32
// CHECK: scf.for
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: scf.yield %{{.*}} : i32
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
func.func @softmax_persistent_one_stage(%arg0: tensor<1024x131072xf32>) -> tensor<1024x131072xf32> {
  %0 = kb.softmax %arg0 {config = #kb.config<block = [1], threads = 512, vector = 4, stages = 1, strategy = "split_global", cluster = 8, grid = 396>} : tensor<1024x131072xf32>
  return %0 : tensor<1024x131072xf32>
}

// -----

// split_global with a fused prologue: x is copied into shared memory by
// cp.async like an unfused input (13 chunks of 4 floats per thread), the
// mask (a bias, the prologue's other input) is loaded for every chunk before
// the first wait, and the prologue is applied as each chunk is read back.
// Before run 44 x went through registers one guarded chunk at a time: the
// attention softmax 256x200000 ran at 49% of copy, since then 59%.
// CHECK-LABEL: func.func @softmax_fused_split_global
// CHECK: gpu.func @k{{[0-9]+}}_fused_scale_bias_add_softmax(%{{.*}}: memref<4x400000xf32> {{.*}}, %[[M:[a-z0-9_]+]]: memref<400000xf32>
// CHECK-COUNT-13: nvgpu.device_async_copy
// CHECK-COUNT-13: vector.load %[[M]]
// CHECK-NOT: vector.load %[[M]]
// CHECK: nvgpu.device_async_wait
func.func @softmax_fused_split_global(%arg0: tensor<4x400000xf32>, %arg1: tensor<400000xf32>) -> tensor<4x400000xf32> {
  %0 = kb.fusion ins(%arg0, %arg1 : tensor<4x400000xf32>, tensor<400000xf32>) attributes {config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "split_global", cluster = 16>} {
  ^bb0(%arg2: tensor<4x400000xf32>, %arg3: tensor<400000xf32>):
    %1 = kb.scale %arg2 by 1.250000e-01 : tensor<4x400000xf32>
    %2 = kb.bias_add %1, %arg3 : tensor<4x400000xf32>, tensor<400000xf32> -> tensor<4x400000xf32>
    %3 = kb.softmax %2 : tensor<4x400000xf32>
    kb.yield %3 : tensor<4x400000xf32>
  } -> tensor<4x400000xf32>
  return %0 : tensor<4x400000xf32>
}

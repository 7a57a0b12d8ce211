// RUN: kb-opt %s --kb-select-config --kb-select-mma --kb-tile --kb-promote-shared-memory --kb-lower-to-gpu -split-input-file | FileCheck %s

// The fused chain: one kernel, 16-byte loads and stores, one Philox call per
// 4 elements, a guard for the grid's tail; the function takes its result as a
// trailing output buffer.
// CHECK-LABEL: func.func @bias_gelu_dropout
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<64x128xf32> {kb.name = "x", kb.role = "input"}
// CHECK-SAME: %[[Y:[a-z0-9_]+]]: memref<64x128xf32> {kb.name = "out0", kb.role = "output"}
// CHECK: gpu.launch_func @[[M:.+]]::@[[K:.+]] blocks in (%{{.*}}) threads in (%{{.*}}) args(%[[X]] : memref<64x128xf32>, %{{.*}} : memref<128xf32>, %[[Y]] : memref<64x128xf32>)
// CHECK-SAME: kb.ops = [{{.*}}op = "kb.bias_add"{{.*}}op = "kb.gelu"{{.*}}op = "kb.dropout", output = "out0"
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.module @[[M]]
// CHECK: gpu.func @[[K]]
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: scf.if
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<128xf32>, vector<4xf32>
// One Philox4x32-10 call for the 4 elements: 2 multiplies a round, less the
// first round's multiply of the zero counter word, which folds away.
// CHECK-COUNT-19: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK: math.exp
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
func.func @bias_gelu_dropout(%x: tensor<64x128xf32> {kb.name = "x"}, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %0 = kb.fusion ins(%x, %b : tensor<64x128xf32>, tensor<128xf32>) {
  ^bb0(%a: tensor<64x128xf32>, %c: tensor<128xf32>):
    %1 = kb.bias_add %a, %c : tensor<64x128xf32>, tensor<128xf32> -> tensor<64x128xf32>
    %2 = kb.gelu %1 approx(tanh) : tensor<64x128xf32>
    %3 = kb.dropout %2 p(0.3) seed(42) : tensor<64x128xf32>
    kb.yield %3 : tensor<64x128xf32>
  } -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// Unfused: one kernel per op, intermediates in scratch buffers.
// CHECK-LABEL: func.func @unfused
// CHECK: %[[T0:[a-z0-9_]+]] = memref.alloc() {kb.name = "t0"} : memref<4x8xf32>
// CHECK: gpu.launch_func {{.*}}args(%{{.*}}, %[[T0]] : memref<4x8xf32>)
// CHECK: gpu.launch_func {{.*}}args(%[[T0]] : memref<4x8xf32>, %{{.*}} : memref<4x8xf32>)
func.func @unfused(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.exp %x : tensor<4x8xf32>
  %1 = kb.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

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
func.func @softmax_registers(%x: tensor<16x4096xf32>) -> tensor<16x4096xf32> {
  %0 = kb.softmax %x : tensor<16x4096xf32>
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
func.func @softmax_unaligned_rows(%x: tensor<3x4099xf32>) -> tensor<3x4099xf32> {
  %0 = kb.softmax %x : tensor<3x4099xf32>
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
func.func @softmax_split_shared_rows(%x: tensor<2x400000xf32>) -> tensor<2x400000xf32> {
  %0 = kb.softmax %x {config = #kb.config<strategy = "split_shared">} : tensor<2x400000xf32>
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
func.func @softmax_split_shared_unaligned(%x: tensor<3x400001xf32>) -> tensor<3x400001xf32> {
  %0 = kb.softmax %x {config = #kb.config<strategy = "split_shared">} : tensor<3x400001xf32>
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
func.func @softmax_online(%x: tensor<4x400000xf32>) -> tensor<4x400000xf32> {
  %0 = kb.softmax %x {config = #kb.config<strategy = "online">} : tensor<4x400000xf32>
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
func.func @softmax_split(%x: tensor<4x400000xf32>) -> tensor<4x400000xf32> {
  %0 = kb.softmax %x {config = #kb.config<strategy = "split", cluster = 16>} : tensor<4x400000xf32>
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
func.func @softmax_split_shared(%x: tensor<4x400000xf32>) -> tensor<4x400000xf32> {
  %0 = kb.softmax %x {config = #kb.config<strategy = "split_shared">} : tensor<4x400000xf32>
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
func.func @softmax_split_global(%x: tensor<4x400000xf32>) -> tensor<4x400000xf32> {
  %0 = kb.softmax %x {config = #kb.config<strategy = "split_global", block = [2]>} : tensor<4x400000xf32>
  return %0 : tensor<4x400000xf32>
}

// -----

// FFMA matmul with stages = 2: operand tiles in dynamic shared memory,
// double-buffered (the
// first tile staged before the loop, the next one loaded to registers before
// the FFMAs and stored after them, one barrier per tile); accumulators carried
// in registers through the k loop (no store to C inside it), C written once
// after it. No tensor-core instruction. Edges are guarded (100 % 64 != 0).
// The inputs are marked read-only and unaliased, the output unaliased: a
// kernel writes only its own output buffer.
// CHECK-LABEL: func.func @matmul_ieee
// CHECK: gpu.launch_func {{.*}}dynamic_shared_memory_size
// CHECK: gpu.func @{{.*}}(%{{.*}}: memref<100x70xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<70x50xf32> {llvm.noalias, llvm.readonly}, %[[C:[a-z0-9_]+]]: memref<100x50xf32> {llvm.noalias})
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<8x68xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: memref.store %{{.*}}, %[[C]]
// CHECK: arith.minui
// CHECK: memref.load
// CHECK: math.fma
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<8x68xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield %{{.*}}, %{{.*}}, %{{.*}}
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK-NOT: nvvm.mma.sync
func.func @matmul_ieee(%a: tensor<100x70xf32>, %b: tensor<70x50xf32>) -> tensor<100x50xf32> {
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<stages = 2>} : tensor<100x70xf32>, tensor<70x50xf32> -> tensor<100x50xf32>
  return %0 : tensor<100x50xf32>
}

// -----

// FFMA matmul by default (row-major B, N a multiple of 4; 128x128x16 tiles,
// none of M, N, K a multiple): four cp.async stages, three tiles in
// flight. A is transposed on the way in by 4-byte copies (A[r][k] to
// As[k][r]; a copy past M or K copies nothing and zero-fills), B moves in
// 16-byte chunks; one wait and one barrier per k tile, no register staging,
// no store to C inside the loop. The thread's A and B fragments are 16-byte
// shared loads.
// CHECK-LABEL: func.func @matmul_ieee_async
// CHECK: gpu.func @{{.*}}(%[[A:[a-z0-9_]+]]: memref<1500x72xf32> {{.*}}, %[[B:[a-z0-9_]+]]: memref<72x1500xf32> {{.*}}, %[[C:[a-z0-9_]+]]: memref<1500x1500xf32> {{.*}})
// CHECK: nvgpu.device_async_copy %[[A]][{{.*}}], %{{.*}}[{{.*}}], 1, %{{.*}} : memref<1500x72xf32> to memref<16x132xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %[[B]][{{.*}}], %{{.*}}[{{.*}}], 4, %{{.*}} {bypassL1} : memref<72x1500xf32> to memref<16x128xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 2 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: memref.store %{{.*}}, %[[C]]
// CHECK: vector.load %{{.*}} : memref<16x132xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: math.fma
// CHECK: scf.yield
// CHECK: memref.store %{{.*}}, %[[C]]
func.func @matmul_ieee_async(%a: tensor<1500x72xf32>, %b: tensor<72x1500xf32>) -> tensor<1500x1500xf32> {
  %0 = kb.matmul %a, %b precision(ieee) : tensor<1500x72xf32>, tensor<72x1500xf32> -> tensor<1500x1500xf32>
  return %0 : tensor<1500x1500xf32>
}

// -----

// The FFMA micro-kernel's order: the thread's rows one after the other,
// every other row backwards, so that consecutive FMAs share an A value and,
// where the row changes, a B value too. 4096^3 went from 0.943x to 0.973x
// cuBLAS fp32 with this order alone (2026-11-30 run 46; ptxas: 127 -> 119
// registers). A row-major order (row 1 forwards) fails here.
// CHECK-LABEL: func.func @matmul_ffma_order
// CHECK: %[[VA:.*]] = vector.load %{{.*}} : memref<8x68xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NEXT: %[[A0:.*]] = vector.extract %[[VA]][0]
// CHECK-NEXT: %[[A1:.*]] = vector.extract %[[VA]][1]
// CHECK: %[[VB:.*]] = vector.load %{{.*}} : memref<8x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NEXT: %[[B0:.*]] = vector.extract %[[VB]][0]
// CHECK-NEXT: %[[B1:.*]] = vector.extract %[[VB]][1]
// CHECK-NEXT: %[[B2:.*]] = vector.extract %[[VB]][2]
// CHECK-NEXT: %[[B3:.*]] = vector.extract %[[VB]][3]
// CHECK-NEXT: math.fma %[[A0]], %[[B0]]
// CHECK-NEXT: math.fma %[[A0]], %[[B1]]
// CHECK-NEXT: math.fma %[[A0]], %[[B2]]
// CHECK-NEXT: math.fma %[[A0]], %[[B3]]
// CHECK-NEXT: math.fma %[[A1]], %[[B3]]
// CHECK-NEXT: math.fma %[[A1]], %[[B2]]
// CHECK-NEXT: math.fma %[[A1]], %[[B1]]
// CHECK-NEXT: math.fma %[[A1]], %[[B0]]
func.func @matmul_ffma_order(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<block = [64, 64, 8], thread = [4, 4], stages = 3>} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// TF32 matmul: a three-stage cp.async pipeline (two tiles in flight, 16-byte
// copies, one empty-or-not group committed per iteration); operands rounded to
// tf32 and multiplied on the tensor cores with m16n8k8 fragments;
// accumulators stay in registers.
// CHECK-LABEL: func.func @matmul_tf32
// CHECK: gpu.func @{{.*}}(%{{.*}}: memref<128x64xf32> {{.*}}, %{{.*}}: memref<64x128xf32> {{.*}}, %[[C:[a-z0-9_]+]]: memref<128x128xf32> {{.*}})
// CHECK: memref.view {{.*}} to memref<64x36xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<32x72xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 4, %{{.*}} {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: memref.store %{{.*}}, %[[C]]
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x36xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.addi %{{.*}}, %c4096_i32 : i32
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// CHECK: scf.yield
// Two consecutive columns of the fragment per 8-byte store.
// CHECK: vector.store %{{.*}}, %[[C]]{{.*}} : memref<128x128xf32>, vector<2xf32>
func.func @matmul_tf32(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<128x64xf32>, tensor<64x128xf32> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// -----

// A matmul with a fused epilogue: every accumulator of the thread goes
// through bias + GELU first (the bias index clamped into range, no branch),
// each value pinned there by an empty asm statement; only then the stores,
// each under its range guard (1000 % 64 != 0).
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK: gpu.func @{{.*}}(%{{.*}}: memref<1000x64xf32> {{.*}}, %{{.*}}: memref<64x96xf32> {{.*}}, %[[BIAS:[a-z0-9_]+]]: memref<96xf32> {{.*}}, %[[C:[a-z0-9_]+]]: memref<1000x96xf32> {{.*}})
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK-NOT: scf.if
// CHECK: arith.minui
// CHECK-NEXT: memref.load %[[BIAS]]
// CHECK: math.exp
// CHECK-NOT: scf.if
// CHECK: llvm.inline_asm has_side_effects "", "f,f"
// CHECK: scf.if
// CHECK-NEXT: vector.store %{{.*}}, %[[C]]
func.func @matmul_epilogue(%a: tensor<1000x64xf32>, %b: tensor<64x96xf32>, %v: tensor<96xf32>) -> tensor<1000x96xf32> {
  %0 = kb.fusion ins(%a, %b, %v : tensor<1000x64xf32>, tensor<64x96xf32>, tensor<96xf32>) {
  ^bb0(%x: tensor<1000x64xf32>, %y: tensor<64x96xf32>, %z: tensor<96xf32>):
    %1 = kb.matmul %x, %y precision(tf32) : tensor<1000x64xf32>, tensor<64x96xf32> -> tensor<1000x96xf32>
    %2 = kb.bias_add %1, %z : tensor<1000x96xf32>, tensor<96xf32> -> tensor<1000x96xf32>
    %3 = kb.gelu %2 approx(tanh) : tensor<1000x96xf32>
    kb.yield %3 : tensor<1000x96xf32>
  } -> tensor<1000x96xf32>
  return %0 : tensor<1000x96xf32>
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
func.func @softmax_fused(%x: tensor<8x256xf32>, %m: tensor<256xf32>) -> tensor<8x256xf32> {
  %0 = kb.fusion ins(%x, %m : tensor<8x256xf32>, tensor<256xf32>) {
  ^bb0(%a: tensor<8x256xf32>, %b: tensor<256xf32>):
    %1 = kb.scale %a by 0.125 : tensor<8x256xf32>
    %2 = kb.bias_add %1, %b : tensor<8x256xf32>, tensor<256xf32> -> tensor<8x256xf32>
    %3 = kb.softmax %2 : tensor<8x256xf32>
    %4 = kb.dropout %3 p(0.1) seed(7) : tensor<8x256xf32>
    kb.yield %4 : tensor<8x256xf32>
  } -> tensor<8x256xf32>
  return %0 : tensor<8x256xf32>
}

// -----

// A transpose: 64 x 64 tiles through a padded 64 x 65 shared tile, rows read
// and written whole by each warp; tiles at the edge are guarded.
// CHECK-LABEL: func.func @transpose
// CHECK: gpu.launch_func @k0_transpose_module::@k0_transpose blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in
// CHECK-LABEL: gpu.func @k0_transpose
// CHECK-SAME: workgroup(%[[T:.*]] : memref<64x65xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.if
// CHECK: memref.load %arg0
// CHECK: memref.store %{{.*}}, %[[T]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[T]]
// CHECK: memref.store %{{.*}}, %arg1
func.func @transpose(%x: tensor<3x100x70xf32>) -> tensor<3x70x100xf32> {
  %0 = kb.transpose %x : tensor<3x100x70xf32> -> tensor<3x70x100xf32>
  return %0 : tensor<3x70x100xf32>
}

// -----

// A transpose whose output rows are padded (kb-select-mma's B^T for wgmma
// when K is not a multiple of 32): the grid covers the padded rows (128 /
// 64 = 2 tiles), reads stop at the input's 100 rows, and the writes put
// zeros between column 100 and 128.
// CHECK-LABEL: func.func @padded_transpose
// CHECK: gpu.launch_func @{{.*}} blocks in (%c1, %c2, %c1{{.*}}) {{.*}} args(%{{.*}} : memref<100x64xf32>, %{{.*}} : memref<64x128xf32>)
// CHECK: gpu.func
// CHECK: arith.cmpi ult, %{{.*}}, %c100
// CHECK: memref.load %arg0
// CHECK: gpu.barrier
// CHECK: %[[INROW:.*]] = arith.cmpi ult, %[[J:.*]], %c128
// CHECK: scf.if
// CHECK: %[[V:.*]] = memref.load %arg2
// CHECK: %[[REAL:.*]] = arith.cmpi ult, %[[J]], %c100
// CHECK: %[[Z:.*]] = arith.select %[[REAL]], %[[V]], %cst : f32
// CHECK: memref.store %[[Z]], %arg1
func.func @padded_transpose(%b: tensor<100x64xf32>) -> tensor<64x128xf32> {
  %t = kb.transpose %b pad(32) : tensor<100x64xf32> -> tensor<64x128xf32>
  return %t : tensor<64x128xf32>
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
func.func @softmax_persistent(%x: tensor<1024x131072xf32>) -> tensor<1024x131072xf32> {
  %0 = kb.softmax %x : tensor<1024x131072xf32>
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
func.func @index_width(%x: tensor<4x400000xf32>, %y: tensor<4x8xf32>) -> (tensor<4x400000xf32>, tensor<4x8xf32>) {
  %0 = kb.fusion ins(%x : tensor<4x400000xf32>) {
  ^bb0(%a: tensor<4x400000xf32>):
    %s = kb.scale %a by 0.125 : tensor<4x400000xf32>
    %p = kb.softmax %s : tensor<4x400000xf32>
    kb.yield %p : tensor<4x400000xf32>
  } -> tensor<4x400000xf32>
  %2 = kb.relu %y : tensor<4x8xf32>
  return %0, %2 : tensor<4x400000xf32>, tensor<4x8xf32>
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
func.func @softmax_persistent_one_stage(%x: tensor<1024x131072xf32>) -> tensor<1024x131072xf32> {
  %0 = kb.softmax %x {config = #kb.config<strategy = "split_global", grid = 396, stages = 1>} : tensor<1024x131072xf32>
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
func.func @softmax_fused_split_global(%x: tensor<4x400000xf32>, %m: tensor<400000xf32>) -> tensor<4x400000xf32> {
  %0 = kb.fusion ins(%x, %m : tensor<4x400000xf32>, tensor<400000xf32>) {
  ^bb0(%a: tensor<4x400000xf32>, %b: tensor<400000xf32>):
    %1 = kb.scale %a by 0.125 : tensor<4x400000xf32>
    %2 = kb.bias_add %1, %b : tensor<4x400000xf32>, tensor<400000xf32> -> tensor<4x400000xf32>
    %3 = kb.softmax %2 : tensor<4x400000xf32>
    kb.yield %3 : tensor<4x400000xf32>
  } -> tensor<4x400000xf32>
  return %0 : tensor<4x400000xf32>
}

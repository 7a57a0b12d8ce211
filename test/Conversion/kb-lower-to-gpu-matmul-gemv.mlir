// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// kb-lower-to-gpu alone on gemv kernels: every #kb.config is written out
// complete (as kb-select-mma, kb-tile and kb-promote-shared-memory chose
// it), so this file breaks only when the lowering changes.

// B transposed, M = 2 (the weight B^T's rows K-contiguous): no shared
// memory; the weight's L2 policy (evict first) made once, and the weight's
// global address (its pointer plus the memref's offset, 0 here, through
// cvta.to.global) once;
// in the k loop,
// the weight as 16-byte read-only loads with that policy issued before
// any FMA, A's rows as vectors too, FMAs into registers carried by the loop
// (no store inside it); K = 1000 is not a multiple of BK = 512, so the last
// k tile follows the loop with its loads clamped and zeroed (selects); then
// a shuffle reduction and lane 0's guarded stores (N = 70 is not a multiple
// of the block's 4 rows).
// CHECK-LABEL: func.func @weight_b
// CHECK: gpu.launch_func {{.*}}blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in
// CHECK-NOT: dynamic_shared_memory_size
// CHECK: gpu.func @{{.*}}(%{{.*}}: memref<2x1000xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<70x1000xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<2x70xf32> {llvm.noalias})
// CHECK-NOT: gpu.dynamic_shared_memory
// CHECK: memref.collapse_shape
// CHECK: llvm.inline_asm "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l"
// CHECK: llvm.inline_asm "cvta.to.global.u64 $0, $1;"
// CHECK-NOT: createpolicy
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: memref.store
// CHECK-NOT: math.fma
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32 {$0, $1, $2, $3}, [$4], $5;"{{.*}} -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: math.fma
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32 {$0, $1, $2, $3}, [$4+512], $5;"
// CHECK-NOT: math.fma
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32 {$0, $1, $2, $3}, [$4+1536], $5;"
// CHECK-NOT: math.fma
// CHECK: vector.load {{.*}} : memref<2000xf32>, vector<4xf32>
// CHECK: math.fma
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK-NOT: createpolicy
// CHECK-NOT: [$4+
// CHECK: arith.select
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32 {$0, $1, $2, $3}, [$4], $5;"
// CHECK-NOT: [$4+
// CHECK-NOT: createpolicy
// CHECK: gpu.shuffle xor
// CHECK: scf.if
// CHECK: memref.store
// CHECK-NOT: nvvm.mma
// CHECK-NOT: nvvm.wgmma
func.func @weight_b(%a: tensor<2x1000xf32>, %b: tensor<70x1000xf32>) -> tensor<2x70xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [2, 4, 512], warp = [2, 1], threads = 128, mma = "gemv">} : tensor<2x1000xf32>, tensor<70x1000xf32> -> tensor<2x70xf32>
  return %0 : tensor<2x70xf32>
}

// -----

// N = 3 with a row-major B: A's rows are the weight (vectors), B's three
// columns are read one float at a time, N apart.
// CHECK-LABEL: func.func @weight_a
// CHECK: scf.for
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32
// CHECK: memref.load {{.*}} : memref<768xf32>
// CHECK: math.fma
// CHECK: scf.yield
// CHECK: gpu.shuffle xor
func.func @weight_a(%a: tensor<256x256xf32>, %b: tensor<256x3xf32>) -> tensor<256x3xf32> {
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<block = [4, 3, 512], warp = [1, 3], threads = 128, mma = "gemv">} : tensor<256x256xf32>, tensor<256x3xf32> -> tensor<256x3xf32>
  return %0 : tensor<256x3xf32>
}

// -----

// B row-major, M = 1, split 2 (kb-split-k's form: 2 partial products):
// each thread owns 4 columns and loads 8 rows of B a k tile as 16-byte
// read-only vectors with the evict-first policy (B is read once, as the
// rows form's weight), row i at row 0's address + i x 512 floats (2048
// bytes), A as vectors of 4; no warp reduction; 16-byte stores into the
// split's slice.
// CHECK-LABEL: func.func @columns
// CHECK: gpu.func @{{.*}}(%{{.*}}: memref<1x64xf32> {{.*}}, %{{.*}}: memref<64x512xf32> {{.*}}, %{{.*}}: memref<2x1x512xf32> {llvm.noalias})
// CHECK: llvm.inline_asm "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l"
// CHECK: gpu.block_id z
// CHECK: scf.for
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32 {$0, $1, $2, $3}, [$4], $5;"
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32 {$0, $1, $2, $3}, [$4+2048], $5;"
// CHECK-COUNT-5: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32 {$0, $1, $2, $3}, [$4+14336], $5;"
// CHECK: vector.load {{.*}} : memref<64xf32>, vector<4xf32>
// CHECK: math.fma
// CHECK: scf.yield
// CHECK-NOT: gpu.shuffle
// CHECK: vector.store {{.*}} : memref<2x1x512xf32>, vector<4xf32>
func.func @columns(%a: tensor<1x64xf32>, %b: tensor<64x512xf32>) -> tensor<2x1x512xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [1, 512, 8], thread = [1, 4], threads = 128, mma = "gemv", split = 2>, split_chunk = 32 : i64} : tensor<1x64xf32>, tensor<64x512xf32> -> tensor<2x1x512xf32>
  return %0 : tensor<2x1x512xf32>
}

// -----

// A config the kernel cannot run (the block holds 4 of the 8 rows) is
// refused.
func.func @wrong_tile(%a: tensor<8x512xf32>, %b: tensor<512x512xf32>) -> tensor<8x512xf32> {
  // expected-error @+1 {{gemv: block and warp tiles do not fit the shape: run kb-tile}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [4, 8, 256], warp = [4, 2], threads = 128, mma = "gemv">} : tensor<8x512xf32>, tensor<512x512xf32> -> tensor<8x512xf32>
  return %0 : tensor<8x512xf32>
}

// -----

// stages = 2 (the register pipeline): tile 0's weight loads before the
// loop; each iteration issues the next tile's weight loads before any FMA
// and multiplies the tile loaded one iteration earlier (carried by the
// loop); after it, the guarded last tile's loads (K = 3000 ends inside the
// sixth k tile of 512) go out before the FMAs of the last plain tile. A
// loop of more than 4 k tiles carries no loop annotation (LLVM may unroll
// it in part).
// CHECK-LABEL: func.func @weight_b_two_stages
// CHECK-NOT: math.fma
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32
// CHECK-NOT: math.fma
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: math.fma
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32
// CHECK-NOT: math.fma
// CHECK: vector.load {{.*}} : memref<6000xf32>, vector<4xf32>
// CHECK: math.fma
// CHECK: scf.yield
// CHECK-NOT: math.fma
// CHECK-NOT: loop_annotation
// CHECK: arith.select
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32
// CHECK: math.fma
// CHECK: gpu.shuffle xor
func.func @weight_b_two_stages(%a: tensor<2x3000xf32>, %b: tensor<70x3000xf32>) -> tensor<2x70xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [2, 4, 512], warp = [2, 1], threads = 128, stages = 2, mma = "gemv">} : tensor<2x3000xf32>, tensor<70x3000xf32> -> tensor<2x70xf32>
  return %0 : tensor<2x70xf32>
}

// -----

// stages = 2 over a row-major B: 8 rows of the thread's columns loaded
// ahead of the loop, 8 more at the top of each iteration, before A's
// vector and the FMAs. A loop of at most 4 k tiles (here 4 a chunk) is
// marked not to be unrolled (ptxas, unrolling it whole, scheduled each
// load beside its FMAs: docs/shapes.md run 14).
// CHECK-LABEL: func.func @columns_two_stages
// CHECK-COUNT-8: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32
// CHECK-NOT: math.fma
// CHECK: scf.for
// CHECK-COUNT-8: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.f32
// CHECK-NOT: math.fma
// CHECK: vector.load {{.*}} : memref<64xf32>, vector<4xf32>
// CHECK: math.fma
// CHECK: scf.yield
// CHECK: } {loop_annotation = #loop_annotation}
// CHECK: math.fma
// CHECK: vector.store {{.*}} : memref<2x1x512xf32>, vector<4xf32>
func.func @columns_two_stages(%a: tensor<1x64xf32>, %b: tensor<64x512xf32>) -> tensor<2x1x512xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [1, 512, 8], thread = [1, 4], threads = 128, stages = 2, mma = "gemv", split = 2>, split_chunk = 32 : i64} : tensor<1x64xf32>, tensor<64x512xf32> -> tensor<2x1x512xf32>
  return %0 : tensor<2x1x512xf32>
}

// -----

func.func @three_stages(%a: tensor<1x64xf32>, %b: tensor<64x512xf32>) -> tensor<1x512xf32> {
  // expected-error @+1 {{gemv: stages = 3: the register pipeline has 1 or 2}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [1, 512, 8], thread = [1, 4], threads = 128, stages = 3, mma = "gemv">} : tensor<1x64xf32>, tensor<64x512xf32> -> tensor<1x512xf32>
  return %0 : tensor<1x512xf32>
}

// -----

// k groups over a row-major B (thread = [M, TN, R], threads = BN / TN x
// BK / R): 8 column threads x 8 groups, each group 8 consecutive rows of a
// k tile of 64; after the k loop every group's sums go to shared memory
// (8 x 32 floats: 1024 bytes), a barrier, and the first group adds them in
// group order and stores.
// CHECK-LABEL: func.func @k_groups
// CHECK-DAG: %[[T64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[S1024:.*]] = arith.constant 1024 : i32
// CHECK: gpu.launch_func {{.*}}threads in (%[[T64]], %{{.*}}, %{{.*}}) dynamic_shared_memory_size %[[S1024]]
// CHECK: scf.for
// CHECK: scf.yield
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK: vector.store {{.*}} : memref<256xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-8: vector.load {{.*}} : memref<256xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: arith.addf
// CHECK: vector.store {{.*}} : memref<1x512xf32>, vector<4xf32>
func.func @k_groups(%a: tensor<1x256xf32>, %b: tensor<256x512xf32>) -> tensor<1x512xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [1, 32, 64], thread = [1, 4, 8], threads = 64, stages = 2, mma = "gemv">} : tensor<1x256xf32>, tensor<256x512xf32> -> tensor<1x512xf32>
  return %0 : tensor<1x512xf32>
}

// -----

func.func @k_groups_rows_disagree(%a: tensor<1x256xf32>, %b: tensor<256x512xf32>) -> tensor<1x512xf32> {
  // expected-error @+1 {{gemv: block and thread tiles do not fit the shape: run kb-tile}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [1, 32, 64], thread = [1, 4, 16], threads = 64, stages = 2, mma = "gemv">} : tensor<1x256xf32>, tensor<256x512xf32> -> tensor<1x512xf32>
  return %0 : tensor<1x512xf32>
}

// -----

// k groups with one column a thread (N % 4 != 0), K = 250 ending inside the
// fourth k tile of 64 (a loop of 3 plain tiles plus the guarded one: at
// most 8 over a row-major B, so marked not to be unrolled), N = 70 past the
// blocks of 32 columns (loads clamped to the last column); one-float loads
// of a weight under 32 MiB without a cache policy (MatmulGemv.cpp, streams).
// CHECK-LABEL: func.func @k_groups_edges
// CHECK: gpu.launch_func {{.*}}dynamic_shared_memory_size
// CHECK-NOT: createpolicy
// CHECK: arith.minui
// CHECK: scf.for
// CHECK-NOT: cache_hint
// CHECK: memref.load {{.*}} : memref<17500xf32>
// CHECK: scf.yield
// CHECK: } {loop_annotation = #loop_annotation}
// CHECK: arith.select
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: arith.addf
func.func @k_groups_edges(%a: tensor<2x250xf32>, %b: tensor<250x70xf32>) -> tensor<2x70xf32> {
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<block = [2, 32, 64], thread = [2, 1, 16], threads = 128, stages = 2, mma = "gemv">} : tensor<2x250xf32>, tensor<250x70xf32> -> tensor<2x70xf32>
  return %0 : tensor<2x70xf32>
}

// -----

func.func @k_groups_two_sizes(%a: tensor<1x256xf32>, %b: tensor<256x512xf32>) -> tensor<1x512xf32> {
  // A two-size thread tile with more threads than its columns: refused,
  // not taken for k groups.
  // expected-error @+1 {{gemv: block and thread tiles do not fit the shape: run kb-tile}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [1, 32, 64], thread = [1, 4], threads = 64, stages = 2, mma = "gemv">} : tensor<1x256xf32>, tensor<256x512xf32> -> tensor<1x512xf32>
  return %0 : tensor<1x512xf32>
}

// -----

// A weight over 256 MB (here 512 MB, B^T 65536 x 2048, and a row-major B
// of 8192 x 16384 read by columns) is read with plain vector loads: there
// the evict-first policy cost 3-5% (MatmulGemv.cpp, kStreamMaxBytes).
// CHECK-LABEL: func.func @large_weight
// CHECK-NOT: createpolicy
// CHECK: scf.for
// CHECK-NOT: cache_hint
// CHECK: vector.load {{.*}} : memref<134217728xf32>, vector<4xf32>
// CHECK-NOT: cache_hint
// CHECK: gpu.shuffle xor
func.func @large_weight(%a: tensor<1x2048xf32>, %b: tensor<65536x2048xf32>) -> tensor<1x65536xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [1, 4, 512], warp = [1, 1], threads = 128, mma = "gemv">} : tensor<1x2048xf32>, tensor<65536x2048xf32> -> tensor<1x65536xf32>
  return %0 : tensor<1x65536xf32>
}

// -----

// CHECK-LABEL: func.func @large_weight_columns
// CHECK-NOT: createpolicy
// CHECK: scf.for
// CHECK-NOT: cache_hint
// CHECK: vector.load {{.*}} : memref<134217728xf32>, vector<4xf32>
// CHECK-NOT: cache_hint
// CHECK: gpu.barrier
func.func @large_weight_columns(%a: tensor<1x8192xf32>, %b: tensor<8192x16384xf32>) -> tensor<1x16384xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [1, 32, 512], thread = [1, 4, 8], threads = 512, stages = 2, mma = "gemv">} : tensor<1x8192xf32>, tensor<8192x16384xf32> -> tensor<1x16384xf32>
  return %0 : tensor<1x16384xf32>
}

// -----

// B^T with K % 4 != 0 (rows not 16-byte aligned) and a 64 MB weight: read
// one float at a time, read-only with the evict-first policy (one-float
// loads take it from 32 to 128 MiB).
// A tile's loads share one address, the others at constant offsets of 32
// floats (128 bytes) in the instruction; the guarded last tile's (K = 4099
// ends inside it) each at its own clamped address.
// CHECK-LABEL: func.func @weight_b_one_float
// CHECK: llvm.inline_asm "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l"
// CHECK: scf.for
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.f32 $0, [$1], $2;", "=f,l,l"
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.f32 $0, [$1+128], $2;", "=f,l,l"
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.f32 $0, [$1+896], $2;", "=f,l,l"
// CHECK: math.fma
// CHECK: scf.yield
// CHECK-NOT: [$1+
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.f32 $0, [$1], $2;"
// CHECK-NOT: [$1+
// CHECK: gpu.shuffle xor
func.func @weight_b_one_float(%a: tensor<2x4099xf32>, %b: tensor<4093x4099xf32>) -> tensor<2x4093xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [2, 4, 256], warp = [2, 1], threads = 128, mma = "gemv">} : tensor<2x4099xf32>, tensor<4093x4099xf32> -> tensor<2x4093xf32>
  return %0 : tensor<2x4093xf32>
}

// -----

// One-float loads of a weight over 128 MiB (B^T 8191 x 4099, 134 MB):
// plain loads.
// CHECK-LABEL: func.func @weight_b_one_float_large
// CHECK-NOT: createpolicy
// CHECK: scf.for
// CHECK-NOT: cache_hint
// CHECK: memref.load {{.*}} : memref<33574909xf32>
// CHECK: gpu.shuffle xor
func.func @weight_b_one_float_large(%a: tensor<2x4099xf32>, %b: tensor<8191x4099xf32>) -> tensor<2x8191xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [2, 4, 256], warp = [2, 1], threads = 128, mma = "gemv">} : tensor<2x4099xf32>, tensor<8191x4099xf32> -> tensor<2x8191xf32>
  return %0 : tensor<2x8191xf32>
}

// -----

// The columns form with one-float loads (N % 4 != 0) of a 64 MB weight
// (4093 x 4099, the suite's matvec 1 x 4099 x 4093) takes the policy;
// K = 4093 ends inside the last k tile, whose guarded loads take no folded
// offset.
// CHECK-LABEL: func.func @columns_one_float
// CHECK: llvm.inline_asm "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l"
// CHECK: scf.for
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.f32 $0, [$1], $2;"
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.f32 $0, [$1+16396], $2;"
// CHECK: scf.yield
// CHECK-NOT: [$1+
// CHECK: arith.select
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.f32 $0, [$1], $2;"
// CHECK-NOT: [$1+
// CHECK: gpu.barrier
func.func @columns_one_float(%a: tensor<1x4093xf32>, %b: tensor<4093x4099xf32>) -> tensor<1x4099xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [1, 32, 256], thread = [1, 1, 16], threads = 512, stages = 2, mma = "gemv">} : tensor<1x4093xf32>, tensor<4093x4099xf32> -> tensor<1x4099xf32>
  return %0 : tensor<1x4099xf32>
}

// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// The gemv kernel's realigned loads (thread TN = 8, MatmulGemv.cpp) over a
// row-major bf16 B with N = 4093 (rows 2-byte aligned): each thread loads
// the 16-byte chunk under its 8 columns of a row (row i of its 8 rows
// i N - s_i elements past row 0's, s_i = (i N) mod 8: 8176 bytes for row 1,
// s = 5), and the segment's last thread (c = 3 of 4, or lane 31) the words
// of the next chunk that the row needs, predicated on it (row 1: all four,
// at +16 bytes; row 2, s = 2: one word). The words its neighbour loaded
// come by a shuffle down by one, replaced by its own load on the last
// thread; column l of row i is element s_i + l of the two chunks (row 1's
// first: the high half of word 2, then word 3's halves). The 32 / 4 = 8 k
// groups of a warp add their sums by shuffles (xor 4, 8, 16) before the
// warps' meet in shared memory; C's rows (4093 elements) take one element
// a store.
// CHECK-LABEL: func.func @realign
// CHECK: gpu.func @k0_matmul
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;", "=r,=r,=r,=r,l,l"
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4+8176], $5;"
// CHECK: llvm.inline_asm "{ .reg .pred p; setp.ne.b32 p, $6, 0; mov.b32 $0, 0; mov.b32 $1, 0; mov.b32 $2, 0; mov.b32 $3, 0; @p ld.global.nc.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4+8192], $5; }"
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4+16368], $5;"
// CHECK: llvm.inline_asm "{ .reg .pred p; setp.ne.b32 p, $3, 0; mov.b32 $0, 0; @p ld.global.nc.L2::cache_hint.b32 $0, [$1+16384], $2; }"
// CHECK: scf.for
// CHECK: %[[D:.*]], %{{.*}} = gpu.shuffle  down %[[W:.*]], %c1_i32, %c32_i32 : i32
// CHECK-NEXT: arith.select %{{.*}}, %{{.*}}, %[[D]] : i32
// CHECK: math.fma
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK: gpu.barrier
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %{{.*}} : memref<1x4093xbf16>
func.func @realign(%arg0: tensor<1x4099xbf16>, %arg1: tensor<4099x4093xbf16>) -> tensor<1x4093xbf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [1, 32, 1024], thread = [1, 8, 8], threads = 512, stages = 2, mma = "gemv">} : tensor<1x4099xbf16>, tensor<4099x4093xbf16> -> tensor<1x4093xbf16>
  return %0 : tensor<1x4093xbf16>
}

// -----

// The buffer's last chunk is partly inside it (4099 x 4093 = 16777207
// elements, 7 past the last 16-byte boundary): it is loaded once in the
// guarded last tile at constant addresses (an 8-byte and a 4-byte load and
// the last element), and replaces a chunk at that address; the tile's
// other chunks load at a selected address.
// CHECK-LABEL: func.func @realign_partial
// CHECK: scf.yield
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v2.b32 {$0, $1}, [$2], $3;"
// CHECK-NEXT: llvm.extractvalue
// CHECK-NEXT: llvm.extractvalue
// CHECK-NEXT: llvm.inline_asm "ld.global.nc.L2::cache_hint.b32 $0, [$1+8], $2;"
// CHECK-NEXT: memref.load %{{.*}}[%c16777206] : memref<16777207xbf16>
// CHECK: arith.cmpi eq, %{{.*}}, %c16777200 : index
func.func @realign_partial(%arg0: tensor<1x4099xbf16>, %arg1: tensor<4099x4093xbf16>) -> tensor<1x4093xbf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [1, 32, 1024], thread = [1, 8, 8], threads = 512, stages = 2, mma = "gemv">} : tensor<1x4099xbf16>, tensor<4099x4093xbf16> -> tensor<1x4093xbf16>
  return %0 : tensor<1x4093xbf16>
}

// -----

// BK divides K (4096): the last k tile is guarded all the same, after the
// loop (its chunks at selected addresses, zero where past K or the
// buffer); 4096 x 4093 elements end on a 16-byte boundary, so no partial
// chunk.
// CHECK-LABEL: func.func @realign_last_tile
// CHECK: scf.for
// CHECK: scf.yield
// CHECK: arith.cmpi ule, %{{.*}}, %c16764928 : index
// CHECK: arith.select %{{.*}} : index
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;"
// CHECK-NOT: memref.load %{{.*}} : memref<16764928xbf16>
func.func @realign_last_tile(%arg0: tensor<1x4096xbf16>, %arg1: tensor<4096x4093xbf16>) -> tensor<1x4093xbf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [1, 32, 1024], thread = [1, 8, 8], threads = 512, stages = 2, mma = "gemv">} : tensor<1x4096xbf16>, tensor<4096x4093xbf16> -> tensor<1x4093xbf16>
  return %0 : tensor<1x4093xbf16>
}

// -----

// f32 B: no realigned form (its rows in 4-byte elements); refused.
func.func @realign_f32(%arg0: tensor<1x4099xf32>, %arg1: tensor<4099x4093xf32>) -> tensor<1x4093xf32> {
  // expected-error @+1 {{gemv: thread TN = 8 (realigned 16-byte loads) needs a 16-bit B, BN / 8 dividing 32 or a multiple of it and R a multiple of 8; BN = 32, R = 8, cols = 4}}
  %0 = kb.matmul %arg0, %arg1 precision(ieee) {config = #kb.config<block = [1, 32, 1024], thread = [1, 8, 8], threads = 512, stages = 2, mma = "gemv">} : tensor<1x4099xf32>, tensor<4099x4093xf32> -> tensor<1x4093xf32>
  return %0 : tensor<1x4093xf32>
}

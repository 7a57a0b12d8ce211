// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// The gemv kernel on 16-bit operands (MatmulGemv.cpp): the same tiles and
// loads in elements, each load 2 bytes an element (a lane's 4 elements of
// the weight in one 8-byte load), widened to f32 as it arrives; f32 FMAs
// and reductions; one rounding, at the store.

// B^T (WeightB), M = 2: the 32 MB weight streamed evict-first, 8-byte
// loads (two 32-bit words, the lower address in the low half) at byte
// offsets 2 x 128 elements apart; A's rows read 4 bf16 at a time.
// CHECK-LABEL: func.func @rows
// CHECK: gpu.func @k0_matmul
// CHECK: llvm.inline_asm "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;"
// CHECK: %[[W:.*]] = llvm.inline_asm "ld.global.nc.L2::cache_hint.v2.b32 {$0, $1}, [$2], $3;", "=r,=r,l,l"
// CHECK: %[[W0:.*]] = llvm.extractvalue %[[W]][0] : !llvm.struct<(i32, i32)>
// CHECK-NEXT: %[[LO:.*]] = arith.trunci %[[W0]] : i32 to i16
// CHECK-NEXT: %[[LOB:.*]] = arith.bitcast %[[LO]] : i16 to bf16
// CHECK-NEXT: arith.extf %[[LOB]] : bf16 to f32
// CHECK-NEXT: %[[HI:.*]] = arith.shrui %[[W0]], %{{.*}} : i32
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v2.b32 {$0, $1}, [$2+256], $3;"
// CHECK: vector.load %{{.*}} : memref<8192xbf16>, vector<4xbf16>
// CHECK-NEXT: arith.extf %{{.*}} : vector<4xbf16> to vector<4xf32>
// CHECK: math.fma %{{.*}} : f32
// CHECK: gpu.shuffle  xor %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %[[R]], %arg2[%{{.*}}] : memref<2x4096xbf16>
func.func @rows(%arg0: tensor<2x4096xbf16>, %arg1: tensor<4096x4096xbf16>) -> tensor<2x4096xbf16> {
  %0 = kb.matmul %arg0, %arg1 transpose_b {config = #kb.config<block = [2, 4, 512], warp = [2, 1], threads = 128, stages = 2, mma = "gemv">} : tensor<2x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2x4096xbf16>
  return %0 : tensor<2x4096xbf16>
}

// -----

// A row-major f16 B (Columns), an f32 result: each thread's 4 columns an
// 8-byte load of every row, the k groups' f32 sums through shared memory,
// a 16-byte f32 store.
// CHECK-LABEL: func.func @columns
// CHECK: gpu.func @k0_matmul
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v2.b32 {$0, $1}, [$2], $3;"
// CHECK: arith.bitcast %{{.*}} : i16 to f16
// CHECK: math.fma %{{.*}} : f32
// CHECK: vector.store %{{.*}} : memref<{{.*}}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}] {{.*}} : memref<1x4096xf32>, vector<4xf32>
func.func @columns(%arg0: tensor<1x4096xf16>, %arg1: tensor<4096x4096xf16>) -> tensor<1x4096xf32> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [1, 32, 512], thread = [1, 4, 8], threads = 512, stages = 2, mma = "gemv">} : tensor<1x4096xf16>, tensor<4096x4096xf16> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}

// -----

// K and N not multiples of 4: one element a load; a weight 18 bytes under
// 32 MiB is not streamed (`streams`' window for one-element loads), so
// plain loads, widened.
// CHECK-LABEL: func.func @odd
// CHECK: gpu.func @k0_matmul
// CHECK-NOT: ld.global.nc.L2::cache_hint
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<16777207xbf16>
// CHECK-NEXT: arith.extf %[[X]] : bf16 to f32
// CHECK: math.fma
func.func @odd(%a: tensor<1x4093xbf16>, %b: tensor<4093x4099xbf16>) -> tensor<1x4099xbf16> {
  %0 = kb.matmul %a, %b {config = #kb.config<block = [1, 128, 16], thread = [1, 1, 16], threads = 128, stages = 2, mma = "gemv">} : tensor<1x4093xbf16>, tensor<4093x4099xbf16> -> tensor<1x4099xbf16>
  return %0 : tensor<1x4099xbf16>
}

// -----

// The same at 67 MB (inside the window): streamed, 2 bytes a load (`.b16`
// into an "h" register).
// CHECK-LABEL: func.func @odd_streamed
// CHECK: gpu.func @k0_matmul
// CHECK: %[[H:.*]] = llvm.inline_asm "ld.global.nc.L2::cache_hint.b16 $0, [$1], $2;", "=h,l,l"
// CHECK-NEXT: %[[X:.*]] = arith.bitcast %[[H]] : i16 to bf16
// CHECK-NEXT: arith.extf %[[X]] : bf16 to f32
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.b16 $0, [$1+8198], $2;"
func.func @odd_streamed(%a: tensor<1x8193xbf16>, %b: tensor<8193x4099xbf16>) -> tensor<1x4099xbf16> {
  %0 = kb.matmul %a, %b {config = #kb.config<block = [1, 32, 256], thread = [1, 1, 16], threads = 512, stages = 2, mma = "gemv">} : tensor<1x8193xbf16>, tensor<8193x4099xbf16> -> tensor<1x4099xbf16>
  return %0 : tensor<1x4099xbf16>
}

// -----

// One row against a row-major B with K = 4093 (K % 4 != 0) and N = 4099 (a
// column a thread): A's one row is aligned for any K, so the full k tiles
// read it 4 elements a load; the tile holding K's end reads one element a
// load (a vector would cross K's end).
// CHECK-LABEL: func.func @oddk
// CHECK: gpu.func @k0_matmul
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<4093xbf16>, vector<4xbf16>
// CHECK: memref.load %{{.*}} : memref<4093xbf16>
// CHECK: gpu.return
func.func @oddk(%arg0: tensor<1x4093xbf16>, %arg1: tensor<4093x4099xbf16>) -> tensor<1x4099xbf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [1, 32, 256], thread = [1, 1, 16], threads = 512, stages = 2, mma = "gemv">} : tensor<1x4093xbf16>, tensor<4093x4099xbf16> -> tensor<1x4099xbf16>
  return %0 : tensor<1x4099xbf16>
}

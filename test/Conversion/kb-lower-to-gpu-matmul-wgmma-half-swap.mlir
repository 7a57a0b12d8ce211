// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// operands = "ba": a 16-bit matmul with a row-major B computed as C^T = B^T
// A^T (MatmulWgmmaMma.cpp, mmaStepSwapped). B's tile comes in boxes of 64
// k rows x 64 columns (128 bytes, 128-byte swizzle: no `swizzle` key), one
// per consumer warpgroup, each wgmma's A operand read MN-major (layout col:
// imm-trans-a; descriptor low word | 8192 >> 4 << 16 = 33554432, high word
// 0x40000040, k16 steps 2048 bytes); the A tile (BM rows, K-major) is its
// B operand, N = BM (layout col, as B^T's tile is in the B^T kernel). The
// accumulators hold C^T: a thread's accumulators i and i + 1 are rows 2t
// and 2t + 1 of one column, stored one element each.

// 80 x 64 on 768 x 768 x 2048 (12 x 10 = 120 blocks, one wave): one
// consumer warpgroup and a producer warpgroup (256 threads); a stage is
// the A box (80 x 128 bytes) and one B box (8 KB), 18432 bytes.
// CHECK-LABEL: func.func @swap80
// CHECK: kb.tensor_map = {box = [80, 64], dims = [768, 2048], of = "arg0"}}
// CHECK: kb.tensor_map = {box = [64, 64], dims = [2048, 768], of = "arg1"}}
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul blocks in (%c12{{.*}}, %c10{{.*}}, %c1{{.*}}) threads in (%c256
// CHECK-NOT: nvvm.setmaxregister
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c18432_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] :
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] :
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// The consumer's A operand: box w (8 KB each) after the A tile (10240).
// CHECK: %[[WG:.*]] = arith.muli %{{.*}}, %c8192 : index
// CHECK-NEXT: arith.addi %[[WG]], %c10240 : index
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[LOWA:.*]] = arith.ori %{{.*}}, %c33554432_i32 : i32
// CHECK-NEXT: %[[A:.*]] = llvm.inline_asm "mov.b64 $0, {$1, $2};", "=l,r,r" %[[LOWA]], %c1073741888_i32
// CHECK: %[[LOWB:.*]] = arith.ori %{{.*}}, %c65536_i32 : i32
// CHECK-NEXT: %[[B:.*]] = llvm.inline_asm "mov.b64 $0, {$1, $2};", "=l,r,r" %[[LOWB]], %c1073741888_i32
// CHECK-NEXT: nvvm.wgmma.mma_async %[[A]], %[[B]], %{{.*}}, <m = 64, n = 80, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
// CHECK: arith.addi %{{.*}}, %c128_i32
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 80, k = 16>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The epilogue: C^T's accumulators 0 and 1 are rows row0 + 2t and + 1 of
// one column; lane g ^ 1 (lane ^ 4) holds the next column. One shuffle
// swaps a value of each pair: an even g stores row 2t's two columns (its
// own and g + 1's), an odd g row 2t + 1's (g - 1's and its own), as one
// 4-byte pair (rows past M = 768 guarded: 768 % 80 != 0).
// CHECK: %[[T2:.*]] = arith.muli %{{.*}}, %c2 : index
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %{{.*}}, %[[T2]] : index
// CHECK-NEXT: %[[ODD:.*]] = arith.remui %{{.*}}, %c2 : index
// CHECK-NEXT: %[[ISODD:.*]] = arith.cmpi ne, %[[ODD]], %c0 : index
// CHECK-NEXT: %[[X0:.*]] = llvm.extractvalue %{{.*}}[0]
// CHECK-NEXT: %[[X1:.*]] = llvm.extractvalue %{{.*}}[1]
// CHECK-NEXT: %[[SEND:.*]] = arith.select %[[ISODD]], %[[X0]], %[[X1]] : f32
// CHECK-NEXT: %[[GOT:.*]], %{{.*}} = gpu.shuffle  xor %[[SEND]], %c4_i32, %c32_i32 : f32
// CHECK-NEXT: %[[LO:.*]] = arith.select %[[ISODD]], %[[GOT]], %[[X0]] : f32
// CHECK-NEXT: %[[HI:.*]] = arith.select %[[ISODD]], %[[X1]], %[[GOT]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addi %[[ROW]], %[[ODD]] : index
// CHECK-NEXT: %[[C:.*]] = arith.subi %{{.*}}, %[[ODD]] : index
// CHECK-NEXT: %[[PAIR:.*]] = vector.from_elements %[[LO]], %[[HI]] : vector<2xf32>
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[R]], %c768 : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: %[[H:.*]] = arith.truncf %[[PAIR]] : vector<2xf32> to vector<2xbf16>
// CHECK-NEXT: vector.store %[[H]], %{{.*}}[%[[R]], %[[C]]] {alignment = 4 : i64} : memref<768x768xbf16>, vector<2xbf16>
func.func @swap80(%arg0: tensor<768x2048xbf16>, %arg1: tensor<2048x768xbf16>) -> tensor<768x768xbf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [80, 64, 64], threads = 256, stages = 8, mma = "wgmma_bf16", copy = "tma", operands = "ba">} : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// 48 x 128 (f16, an f32 C): two consumer warpgroups, warpgroup w's A
// operand the box at 6144 + 8192 w (after the 48-row A tile), m64n48k16;
// the producer warpgroup gives its registers down to 40. An f32 C is
// stored one element at a time (the f32 C^T kernel's epilogue: no
// shuffle).
// CHECK-LABEL: func.func @swap128
// CHECK: kb.tensor_map = {box = [48, 64], dims = [192, 384], of = "arg0"}}
// CHECK: kb.tensor_map = {box = [64, 64], dims = [384, 320], of = "arg1"}}
// CHECK: threads in (%c384
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c22528_i32
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: %[[WG:.*]] = arith.muli %{{.*}}, %c8192 : index
// CHECK-NEXT: arith.addi %[[WG]], %c6144 : index
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 48, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <col>], B[<f16>, <one>, <col>]
// CHECK-NOT: gpu.shuffle
// CHECK: memref.store %{{.*}} : memref<192x320xf32>
func.func @swap128(%arg0: tensor<192x384xf16>, %arg1: tensor<384x320xf16>) -> tensor<192x320xf32> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [48, 128, 64], threads = 384, stages = 4, mma = "wgmma_f16", copy = "tma", operands = "ba">} : tensor<192x384xf16>, tensor<384x320xf16> -> tensor<192x320xf32>
  return %0 : tensor<192x320xf32>
}

// -----

// B^T: nothing to swap.
func.func @swap_bt(%arg0: tensor<768x2048xbf16>, %arg1: tensor<768x2048xbf16>) -> tensor<768x768xbf16> {
  // expected-error @+1 {{wgmma_bf16 with operands = "ba" needs a row-major B (B^T is read K-major as it is)}}
  %0 = kb.matmul %arg0, %arg1 transpose_b {config = #kb.config<block = [80, 64, 64], threads = 256, stages = 8, mma = "wgmma_bf16", copy = "tma", operands = "ba">} : tensor<768x2048xbf16>, tensor<768x2048xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// BN is the warpgroups' 64 columns each.
func.func @swap_bn80(%arg0: tensor<768x2048xbf16>, %arg1: tensor<2048x768xbf16>) -> tensor<768x768xbf16> {
  // expected-error @+1 {{wgmma_bf16 with operands = "ba" needs block = [M, 64k, 64] with M a multiple of 8 up to 256 and 64k up to 256; got [64, 80, 64]}}
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [64, 80, 64], threads = 256, stages = 8, mma = "wgmma_bf16", copy = "tma", operands = "ba">} : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// The plain kernel's thread count (a producer warp) is not the swapped one's.
func.func @swap_threads(%arg0: tensor<768x2048xbf16>, %arg1: tensor<2048x768xbf16>) -> tensor<768x768xbf16> {
  // expected-error @+1 {{wgmma_bf16 runs one warpgroup per 64 columns and a producer warpgroup: 256 threads, got 160}}
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [80, 64, 64], threads = 160, stages = 8, mma = "wgmma_bf16", copy = "tma", operands = "ba">} : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

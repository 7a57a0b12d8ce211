// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// reduce = "cluster" (MatmulWgmma.cpp): split-K's two chunks summed in the
// wgmma kernel. Pinned here: the whole matmul writes C (no workspace, no
// split_sum), the launch's clusters (1 x 1 x 2) over blocks z = 0 and 1
// (the chunks, 8 k tiles each of K = 512); the producer's relaxed arrive on
// the cluster barrier; after the k loop, the warpgroups whose part of the
// tile the other block finishes (block z != warpgroup % 2) store their raw
// partial into C, every consumer arrives (release), and the others wait
// (acquire), load the partial from C, add it and store the sum.
// CHECK-LABEL: func.func @reduce
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul clusters in (%c1{{.*}}, %c1{{.*}}, %c2{{.*}}) blocks in (%c1{{.*}}, %c2{{.*}}, %c2{{.*}}) {{.*}}%arg2 : memref<256x128xf32>)
// CHECK-NOT: split_sum
// CHECK: gpu.func @k0_matmul
// CHECK: gpu.block_id  z
// CHECK: arith.muli %block_id_z, %c8 : index
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: %[[Z:.*]] = gpu.block_id  z
// CHECK-NEXT: %[[W:.*]] = arith.remui %{{.*}}, %c2 : index
// CHECK-NEXT: %[[FIN:.*]] = arith.cmpi eq, %[[Z]], %[[W]] : index
// CHECK-NEXT: %[[OTHER:.*]] = arith.xori %[[FIN]], %true : i1
// CHECK-NEXT: scf.if %[[OTHER]] {
// CHECK-NOT: memref.load
// CHECK: vector.store %{{.*}}, %arg4[{{.*}}] {alignment = 8 : i64} : memref<256x128xf32>, vector<2xf32>
// CHECK: nvvm.cluster.arrive{{$}}
// CHECK-NEXT: scf.if %[[FIN]] {
// CHECK-NEXT: nvvm.cluster.wait{{$}}
// CHECK: %[[P:.*]] = memref.load %arg4[%{{.*}}, %{{.*}}] : memref<256x128xf32>
// CHECK-NEXT: arith.addf %{{.*}}, %[[P]] : f32
// CHECK: vector.store %{{.*}}, %arg4[{{.*}}] {alignment = 8 : i64} : memref<256x128xf32>, vector<2xf32>
// CHECK: gpu.return
func.func @reduce(%a: tensor<256x512xf32>, %b: tensor<128x512xf32>) -> tensor<256x128xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">} : tensor<256x512xf32>, tensor<128x512xf32> -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
}

// -----

// One warpgroup (64 rows): block 0 finishes the whole tile.
// CHECK-LABEL: func.func @one_warpgroup
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: %[[Z:.*]] = gpu.block_id  z
// CHECK-NEXT: %[[FIN:.*]] = arith.cmpi eq, %[[Z]], %c0 : index
func.func @one_warpgroup(%a: tensor<256x512xf32>, %b: tensor<128x512xf32>) -> tensor<256x128xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [64, 128, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">} : tensor<256x512xf32>, tensor<128x512xf32> -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
}

// -----

// One k tile cannot make two chunks.
func.func @one_k_tile(%a: tensor<256x32xf32>, %b: tensor<128x32xf32>) -> tensor<256x128xf32> {
  // expected-error @+1 {{#kb.config reduce = "cluster" needs split = 2 with two non-empty chunks of the 1 k tiles}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">} : tensor<256x32xf32>, tensor<128x32xf32> -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
}

// -----

// A batched matmul is not split.
func.func @batched(%a: tensor<2x256x512xf32>, %b: tensor<2x128x512xf32>) -> tensor<2x256x128xf32> {
  // expected-error @+1 {{#kb.config reduce = "cluster" needs an unbatched matmul}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">} : tensor<2x256x512xf32>, tensor<2x128x512xf32> -> tensor<2x256x128xf32>
  return %0 : tensor<2x256x128xf32>
}

// -----

// A row-major B under a fused bias + ReLU, with edges (300 x 200, K = 332:
// chunks of 6 and 5 k tiles). The producer warpgroup gives its registers
// away and then arrives (relaxed); C carries no noalias (the other block
// writes the partials it loads); the storing warpgroups store raw
// partials (no ReLU before the arrive); the finishing ones load the
// partial at indices clamped into C (299, 199), add it, then the bias and
// the ReLU.
// CHECK-LABEL: func.func @row_b_fused
// CHECK: gpu.launch_func @k0_fused_matmul_bias_add_relu_module::@k0_fused_matmul_bias_add_relu clusters in (%c1{{.*}}, %c1{{.*}}, %c2{{.*}}) blocks in (%c2{{.*}}, %c3, %c2{{.*}})
// CHECK: gpu.func @k0_fused_matmul_bias_add_relu({{.*}}%arg5: memref<300x200xf32>) kernel
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: scf.for %{{.*}} = %c0 to %c6 step %c1 iter_args
// CHECK-NOT: arith.maximumf
// CHECK: nvvm.cluster.arrive{{$}}
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvvm.cluster.wait{{$}}
// CHECK: %[[R:.*]] = arith.minui %{{.*}}, %c299 : index
// CHECK-NEXT: %[[C:.*]] = arith.minui %{{.*}}, %c199 : index
// CHECK-NEXT: %[[P:.*]] = memref.load %arg5[%[[R]], %[[C]]] : memref<300x200xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %{{.*}}, %[[P]] : f32
// CHECK-NEXT: %[[B:.*]] = memref.load %arg2[%[[C]]] : memref<200xf32>
// CHECK-NEXT: %[[X:.*]] = arith.addf %[[S]], %[[B]] : f32
// CHECK-NEXT: arith.maximumf %[[X]], %{{.*}} : f32
func.func @row_b_fused(%a: tensor<300x332xf32>, %b: tensor<332x200xf32>, %bias: tensor<200xf32>) -> tensor<300x200xf32> {
  %0 = kb.fusion ins(%a, %b, %bias : tensor<300x332xf32>, tensor<332x200xf32>, tensor<200xf32>) attributes {config = #kb.config<block = [128, 128, 32], threads = 384, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">} {
  ^bb0(%x: tensor<300x332xf32>, %w: tensor<332x200xf32>, %c: tensor<200xf32>):
    %m = kb.matmul %x, %w precision(tf32) : tensor<300x332xf32>, tensor<332x200xf32> -> tensor<300x200xf32>
    %s = kb.bias_add %m, %c : tensor<300x200xf32>, tensor<200xf32> -> tensor<300x200xf32>
    %r = kb.relu %s : tensor<300x200xf32>
    kb.yield %r : tensor<300x200xf32>
  } -> tensor<300x200xf32>
  return %0 : tensor<300x200xf32>
}

// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on the row kernels' cluster strategy, configs written
// out: a row split over the registers of a cluster of blocks (block `rank` =
// block id % cluster holds columns [rank * n / cluster, (rank + 1) * n /
// cluster)); each block reduces its part, thread 0 publishes the result in
// shared memory, a cluster barrier, lane k of every warp reads block k's word
// through mapa + ld.shared::cluster and every lane combines them in rank
// order (shuffles from lanes 0, 1, ...); an arrive once the last exchange has
// read, the wait before the kernel returns. One read of the input, no loop.

// rms_norm of 4 rows of 65536 over clusters of 8 blocks of 512 threads:
// 4 x 8 blocks launched as clusters of 8; each thread loads its 4 vectors of
// the row once, one exchange (8 shuffles), then the stores.
// CHECK-LABEL: func.func @rms_norm_cluster
// CHECK: gpu.launch_func @{{.*}} clusters in (%c8, %c1, %c1_0) blocks in (%c32, %c1_1, %c1_2) threads in (%c512,
// CHECK-SAME: strategy = "cluster", cluster = 8
// CHECK: gpu.func @k{{[0-9]+}}_rms_norm
// CHECK-SAME: workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %[[P:.*]] : memref<2xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[X:.*]] = memref.collapse_shape %arg0
// CHECK: %[[B:.*]] = gpu.block_id x
// CHECK: %[[RANK:.*]] = arith.remui %[[B]], %c8
// CHECK: arith.muli %[[RANK]], %c8192
// CHECK-NOT: scf.for
// CHECK-COUNT-4: vector.load %[[X]]
// CHECK-NOT: vector.load %[[X]]
// CHECK: memref.store %{{.*}}, %[[P]][%c0]
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.load %{{.*}} : !llvm.ptr<7> -> f32
// CHECK: gpu.shuffle idx %[[W:.*]], %c0_i32, %c32_i32
// CHECK-COUNT-7: gpu.shuffle idx %[[W]]
// CHECK-NOT: gpu.shuffle
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK: math.rsqrt
// CHECK-NOT: vector.load %[[X]]
// CHECK-COUNT-4: vector.store
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.return
func.func @rms_norm_cluster(%x: tensor<4x65536xf32>, %w: tensor<65536xf32>) -> tensor<4x65536xf32> {
  %0 = kb.rms_norm %x, %w eps(1.0e-06) {config = #kb.config<threads = 512, vector = 4, strategy = "cluster", cluster = 8>} : tensor<4x65536xf32>, tensor<65536xf32> -> tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}

// -----

// layer_norm with the residual add fused in front, rows of 40000 over 8
// blocks (5000 columns each: 3 chunks of 512 x 4, the last guarded): each
// block's part's mean (a block reduction, divided by 5000), the squared
// deviations from it (a second block reduction), then one exchange, the pair
// through words 0 and 1: 8 + 8 shuffles, the means summed and divided by 8,
// M2 = sum M2_k + 5000 sum (m_k - mean)^2; no second cluster barrier before
// the arrive; then the stores; both inputs read once.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_fused_add_layer_norm
// CHECK-SAME: %[[P:[a-z0-9]+]] : memref<2xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[C:.*]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[PL:.*]] = arith.constant 5.000000e+03 : f32
// CHECK: %[[N:.*]] = arith.constant 4.000000e+04 : f32
// CHECK-NOT: scf.for
// CHECK: vector.load {{.*}} : memref<640000xf32>, vector<4xf32>
// CHECK: vector.load {{.*}} : memref<640000xf32>, vector<4xf32>
// CHECK: arith.addf
// CHECK: scf.if
// CHECK: vector.load {{.*}} : memref<640000xf32>, vector<4xf32>
// CHECK: vector.load {{.*}} : memref<640000xf32>, vector<4xf32>
// CHECK-NOT: vector.load {{.*}} : memref<640000xf32>
// CHECK-NOT: nvvm.cluster
// CHECK: %[[MB:.*]] = arith.divf %{{.*}}, %[[PL]] : f32
// CHECK-NOT: nvvm.cluster
// CHECK: %[[D0:.*]] = arith.subf %{{.*}}, %[[MB]] : f32
// CHECK-NOT: nvvm.cluster
// CHECK: memref.store %[[MB]], %[[P]][%c0]
// CHECK-NEXT: memref.store %[[Q:.*]], %[[P]][%c1]
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: %[[R:.*]] = nvvm.mapa
// CHECK-NEXT: llvm.load %[[R]] : !llvm.ptr<7> -> f32
// CHECK-NEXT: %[[R1:.*]] = llvm.getelementptr %[[R]][1]
// CHECK-NEXT: llvm.load %[[R1]] : !llvm.ptr<7> -> f32
// CHECK: %[[M0:.*]], %{{.*}} = gpu.shuffle idx %[[PAIR:.*]]#0, %c0_i32, %c32_i32
// CHECK-NEXT: gpu.shuffle idx %[[PAIR]]#1, %c0_i32, %c32_i32
// CHECK-COUNT-7: gpu.shuffle idx %[[PAIR]]#0
// CHECK-NEXT: gpu.shuffle idx %[[PAIR]]#1, %c7_i32
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: nvvm.cluster
// CHECK: %[[MEAN:.*]] = arith.divf %{{.*}}, %[[C]] : f32
// CHECK-NEXT: arith.subf %[[M0]], %[[MEAN]] : f32
// CHECK-COUNT-7: arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK: %[[SPREAD:.*]] = arith.mulf %{{.*}}, %[[PL]] : f32
// CHECK-NEXT: %[[M2:.*]] = arith.addf %{{.*}}, %[[SPREAD]] : f32
// CHECK-NEXT: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: arith.divf %[[M2]], %[[N]] : f32
// CHECK-NEXT: %[[SHIFT:.*]] = arith.subf %[[MB]], %[[MEAN]] : f32
// CHECK: math.rsqrt
// CHECK-NEXT: arith.addf %[[D0]], %[[SHIFT]] : f32
// CHECK-NOT: nvvm.cluster
// CHECK-NOT: vector.load {{.*}} : memref<640000xf32>
// CHECK: vector.store
// CHECK: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.return
func.func @fused(%x: tensor<16x40000xf32>, %r: tensor<16x40000xf32>, %w: tensor<40000xf32>, %b: tensor<40000xf32>) -> tensor<16x40000xf32> {
  %0 = kb.fusion ins(%x, %r, %w, %b : tensor<16x40000xf32>, tensor<16x40000xf32>, tensor<40000xf32>, tensor<40000xf32>) attributes {config = #kb.config<threads = 512, vector = 4, strategy = "cluster", cluster = 8>} {
  ^bb0(%a: tensor<16x40000xf32>, %c: tensor<16x40000xf32>, %ww: tensor<40000xf32>, %bb: tensor<40000xf32>):
    %1 = kb.add %a, %c : tensor<16x40000xf32>
    %2 = kb.layer_norm %1, %ww, %bb eps(1.0e-05) : tensor<16x40000xf32>, tensor<40000xf32>, tensor<40000xf32> -> tensor<16x40000xf32>
    kb.yield %2 : tensor<16x40000xf32>
  } -> tensor<16x40000xf32>
  return %0 : tensor<16x40000xf32>
}

// -----

// reduce min over clusters of 2: the maxima of the negated values exchanged
// (lanes without a block hold -inf), then thread 0 of block 0 of the cluster
// stores the row's value, after the wait.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_reduce
// CHECK: %[[RANK:.*]] = arith.remui %{{.*}}, %c2
// CHECK: arith.negf
// CHECK: nvvm.cluster.wait {aligned}
// CHECK: nvvm.mapa
// CHECK: scf.yield %cst
// CHECK: gpu.shuffle idx %[[W:.*]], %c0_i32
// CHECK: gpu.shuffle idx %[[W]], %c1_i32
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: gpu.shuffle
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: arith.negf
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: %[[R0:.*]] = arith.cmpi eq, %[[RANK]], %c0
// CHECK: arith.andi %{{.*}}, %[[R0]]
// CHECK: scf.if
// CHECK: memref.store
func.func @reduce_min_cluster(%x: tensor<8x65536xf32>) -> tensor<8xf32> {
  %0 = kb.reduce %x min {config = #kb.config<threads = 1024, vector = 4, strategy = "cluster", cluster = 2>} : tensor<8x65536xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

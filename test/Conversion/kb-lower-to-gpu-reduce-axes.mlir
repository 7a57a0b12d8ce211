// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on kb.reduce over a non-last axis and over the whole
// tensor, configs written out.

// Column reduction of 8192x8192 over axis 0: 8 column threads of 4 by 64
// slices; a loop of four rows a step (four 16-byte loads, then the adds),
// the slices' partials in shared memory, slice 0 adding them in order and
// storing one 16-byte vector; 256 blocks (8192 / 32 columns).
// CHECK-LABEL: func.func @column_sum
// CHECK: gpu.launch_func @{{[^ ]*}} blocks in (%c256, %c1, %c1{{.*}}) threads in (%c512
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_reduce
// CHECK-SAME: workgroup(%[[S:.*]] : memref<2048xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK-COUNT-4: vector.load {{.*}} : memref<67108864xf32>, vector<4xf32>
// CHECK: arith.addf
// CHECK: scf.yield
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-4: memref.load %[[S]]
// CHECK: vector.store {{.*}} : memref<8192xf32>, vector<4xf32>
func.func @column_sum(%x: tensor<8192x8192xf32>) -> tensor<8192xf32> {
  %0 = kb.reduce %x sum axis(0) {config = #kb.config<block = [64], threads = 512, vector = 4>} : tensor<8192x8192xf32> -> tensor<8192xf32>
  return %0 : tensor<8192xf32>
}

// -----

// A middle axis of 4x10x6 in bf16 (10 rows: two full steps of 2 slices x 4
// rows, then a tail loop), max; vector 2 of bf16 widened to f32.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_reduce
// CHECK: scf.for
// CHECK: vector.load {{.*}} vector<2xbf16>
// CHECK: arith.maximumf
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
func.func @column_max_bf16(%x: tensor<4x10x6xbf16>) -> tensor<4x6xbf16> {
  %0 = kb.reduce %x max axis(1) {config = #kb.config<block = [2], threads = 8, vector = 2>} : tensor<4x10x6xbf16> -> tensor<4x6xbf16>
  return %0 : tensor<4x6xbf16>
}

// -----

// Whole-tensor sum: a workspace of 2 + grid words before the output; stage
// 1's loop of four 16-byte loads a thread, the block's tree, thread 0's
// relaxed store of the partial and acq_rel count; the last block reads the
// partials (relaxed, gpu scope) in order, reduces them and resets the count.
// CHECK-LABEL: func.func @whole_sum
// CHECK: memref.alloc() {kb.name = "ws{{[0-9]+}}", kb.role = "workspace"} : memref<130xi32>
// CHECK: gpu.launch_func @{{[^ ]*}} blocks in (%c128, %c1, %c1{{.*}}) threads in (%c256
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_reduce
// CHECK: scf.for
// CHECK-COUNT-4: vector.load {{.*}} vector<4xf32>
// CHECK: gpu.shuffle xor
// CHECK: llvm.store {{.*}} atomic syncscope("device") monotonic
// CHECK: atom.acq_rel.gpu.add.u32
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: scf.for
// CHECK: llvm.load {{.*}} atomic syncscope("device") monotonic
// CHECK: memref.store
// CHECK: memref.atomic_rmw assign
func.func @whole_sum(%x: tensor<1024x1024xf32>) -> tensor<1xf32> {
  %0 = kb.reduce %x sum all {config = #kb.config<threads = 256, vector = 4, grid = 128>} : tensor<1024x1024xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

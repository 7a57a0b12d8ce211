// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on kb.pad kernels (the config written out as
// kb-select-config chooses it), so this file breaks only when the lowering
// changes.

// Rows of 30 padded to 32: 64 x 8 = 512 chunks of 16 bytes, 4 a thread, 128
// threads: one block, no guard. Columns 0 and 1 of a chunk are inside every
// row (loaded as they are); columns 2 and 3 may be past 30: the index is
// clamped to column 29 and the value replaced by zero. One 16-byte store.
// CHECK-LABEL: func.func @pad
// CHECK: gpu.launch_func @k0_pad_module::@k0_pad blocks in (%c1, %c1{{.*}}, %c1{{.*}}) threads in (%c128, %c1{{.*}}, %c1{{.*}}) args(%{{.*}} : memref<64x30xf32>, %{{.*}} : memref<64x32xf32>)
// CHECK-LABEL: gpu.func @k0_pad
// CHECK-NOT: scf.if
// CHECK: arith.divui %{{.*}}, %c32
// CHECK: arith.remui %{{.*}}, %c32
// CHECK: memref.load
// CHECK: memref.load
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c30
// CHECK: arith.minui %{{.*}}, %c29
// CHECK: %[[V:.*]] = memref.load
// CHECK: arith.select %[[IN]], %[[V]], %{{.*}} : f32
// CHECK: vector.from_elements
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<2048xf32>, vector<4xf32>
func.func @pad(%arg0: tensor<64x30xf32>) -> tensor<64x32xf32> {
  %0 = kb.pad %arg0 multiple(32) {config = #kb.config<threads = 128>} : tensor<64x30xf32> -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

// A batched operand whose chunks do not fill the last block: 3 x 5 x 7 ->
// 3 x 5 x 32 is 120 chunks, guarded against the count.
// CHECK-LABEL: func.func @ragged
// CHECK: gpu.func
// CHECK: arith.cmpi ult, %{{.*}}, %c120
// CHECK: scf.if
// CHECK: vector.store
func.func @ragged(%arg0: tensor<3x5x7xf32>) -> tensor<3x5x32xf32> {
  %0 = kb.pad %arg0 multiple(32) {config = #kb.config<threads = 32>} : tensor<3x5x7xf32> -> tensor<3x5x32xf32>
  return %0 : tensor<3x5x32xf32>
}

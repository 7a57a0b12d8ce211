// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on kb.transpose kernels: every #kb.config is written out
// complete (as kb-select-mma, kb-select-config, kb-tile and
// kb-promote-shared-memory chose it), so this file breaks only when
// the lowering changes.

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
func.func @transpose(%arg0: tensor<3x100x70xf32>) -> tensor<3x70x100xf32> {
  %0 = kb.transpose %arg0 {config = #kb.config<block = [64, 64], threads = 256>} : tensor<3x100x70xf32> -> tensor<3x70x100xf32>
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
func.func @padded_transpose(%arg0: tensor<100x64xf32>) -> tensor<64x128xf32> {
  %0 = kb.transpose %arg0 pad(32) {config = #kb.config<block = [64, 64], threads = 256>} : tensor<100x64xf32> -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

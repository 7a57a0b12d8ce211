// RUN: kb-opt %s --kb-select-mma=chip=sm_90a --kb-select-config=chip=sm_90a --kb-tile --kb-promote-shared-memory=chip=sm_90a --kb-lower-to-gpu | FileCheck %s

// wgmma with K = 100, not a multiple of 32 (BK): B^T's rows are padded to
// 128 floats by the transpose in front, and only the last of the 4 k tiles
// needs the K guard, so the loop issues it behind a uniform branch
// (`next == 3`) and the other tiles' copies without clamping anything to K.
// CHECK-LABEL: func.func @awkward_k
// CHECK: gpu.launch_func @k0_transpose_module::@k0_transpose {{.*}} args(%arg1 : memref<100x72xf32>, %[[BT:.*]] : memref<72x128xf32>)
// CHECK: gpu.launch_func @k1_matmul_module::@k1_matmul {{.*}} args(%arg0 : memref<100x100xf32>, %[[BT]] : memref<72x128xf32>, %{{.*}} : memref<100x72xf32>)
// CHECK-SAME: padded_b = true
// CHECK: gpu.func @k1_matmul
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %{{.*}}, %c3 : index
// CHECK-NEXT: scf.if %[[LAST]] {
// The last tile: each chunk copies min(K - k, 4) elements.
// CHECK: arith.minui %{{.*}}, %c100 : index
// CHECK: nvgpu.device_async_copy %arg0
// CHECK: nvgpu.device_async_copy %arg1
// CHECK: } else {
// The others: no K clamp.
// CHECK-NOT: arith.minui
// CHECK: nvgpu.device_async_copy %arg0
// CHECK-NOT: arith.minui
// CHECK: nvgpu.device_async_copy %arg1
// CHECK-NOT: arith.minui
// CHECK: nvvm.wgmma.mma_async
func.func @awkward_k(%a: tensor<100x100xf32>, %b: tensor<100x72xf32>) -> tensor<100x72xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<100x100xf32>, tensor<100x72xf32> -> tensor<100x72xf32>
  return %0 : tensor<100x72xf32>
}

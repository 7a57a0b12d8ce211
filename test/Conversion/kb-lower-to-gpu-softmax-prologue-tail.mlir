// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// A split_global softmax with a fused prologue whose part (3000 floats)
// is not a whole number of the block's chunks (512 threads x 2 = 1024): the
// prologue reads each chunk back from shared memory under the chunk's guard
// (flat index < the part's end). Read ahead of the guard, the last chunk's
// lanes past the part read past the dynamic shared memory:
// CUDA_ERROR_ILLEGAL_ADDRESS on the H200 (issue #17's repros
// split_global_prologue_odd_width_{a,b}; bench/repros/ runs them there, with
// memcheck and racecheck). The lowering alone, on a config written out.

// CHECK-LABEL: gpu.func @k0_fused_scale_softmax
// CHECK-COUNT-3: nvgpu.device_async_create_group
// Each of the three chunks: wait for its copy, then the guard, then the read.
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 2 : i32}
// CHECK-NOT: vector.load
// CHECK: scf.if %{{.+}} -> (f32, f32)
// CHECK-NEXT: vector.load %{{.+}} : memref<3000xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 1 : i32}
// CHECK-NOT: vector.load
// CHECK: scf.if %{{.+}} -> (f32, f32)
// CHECK-NEXT: vector.load %{{.+}} : memref<3000xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// CHECK-NOT: vector.load
// CHECK: scf.if %{{.+}} -> (f32, f32)
// CHECK-NEXT: vector.load %{{.+}} : memref<3000xf32, #gpu.address_space<workgroup>>, vector<2xf32>
func.func @tail(%x: tensor<2x6000xf32>) -> tensor<2x6000xf32> {
  %0 = kb.fusion ins(%x : tensor<2x6000xf32>) attributes {config = #kb.config<block = [1], threads = 512, vector = 2, stages = 2, strategy = "split_global", cluster = 2, grid = 4>} {
  ^bb0(%a: tensor<2x6000xf32>):
    %1 = kb.scale %a by 2.0 : tensor<2x6000xf32>
    %2 = kb.softmax %1 : tensor<2x6000xf32>
    kb.yield %2 : tensor<2x6000xf32>
  } -> tensor<2x6000xf32>
  return %0 : tensor<2x6000xf32>
}

// -----

// A part that is a whole number of chunks (4096 = 2 x 2048): the same
// structure, the read under the guard.

// CHECK-LABEL: gpu.func @k0_fused_scale_softmax
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// CHECK-NOT: vector.load
// CHECK: scf.if %{{.+}} -> (f32, f32)
// CHECK-NEXT: vector.load %{{.+}} : memref<4096xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: gpu.return
func.func @whole(%x: tensor<2x8192xf32>) -> tensor<2x8192xf32> {
  %0 = kb.fusion ins(%x : tensor<2x8192xf32>) attributes {config = #kb.config<block = [1], threads = 512, vector = 4, stages = 2, strategy = "split_global", cluster = 2, grid = 4>} {
  ^bb0(%a: tensor<2x8192xf32>):
    %1 = kb.scale %a by 2.0 : tensor<2x8192xf32>
    %2 = kb.softmax %1 : tensor<2x8192xf32>
    kb.yield %2 : tensor<2x8192xf32>
  } -> tensor<2x8192xf32>
  return %0 : tensor<2x8192xf32>
}

// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// A split_global softmax with a fused prologue whose part (3000 floats)
// is not a whole number of the block's chunks (512 threads x 2 = 1024): the
// prologue reads each chunk back from shared memory ahead of its guard, so
// the last chunk's slot index is clamped to the last vector of the part
// (2998). Unclamped, lanes past the part read past the dynamic shared
// memory: CUDA_ERROR_ILLEGAL_ADDRESS on the H200 (issue #17's repros
// split_global_prologue_odd_width_{a,b}; bench/repros/ runs them there).
// The lowering alone, on a config written out.

// CHECK-LABEL: gpu.func @k0_fused_scale_softmax
// CHECK: %[[LAST:.+]] = arith.constant 2998 : index
// CHECK: vector.load %[[PART:.+]][%{{.+}}] {{.*}} : memref<3000xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: vector.load %[[PART]][%{{.+}}] {{.*}} : memref<3000xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// CHECK: %[[SLOT:.+]] = arith.minui %{{.+}}, %[[LAST]] : index
// CHECK-NEXT: vector.load %[[PART]][%[[SLOT]]]
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

// A part that is a whole number of chunks (4096 = 2 x 2048) needs no clamp.

// CHECK-LABEL: gpu.func @k0_fused_scale_softmax
// CHECK-NOT: arith.minui %{{.+}}, %c4094
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

// K % 4 != 0 on wgmma (issue #19): kb-select-mma pads A's rows (and a given
// B^T's) with a kb.pad kernel, and the matmul runs over the padded K. Three
// matmuls that kb-run must check OK on the GPU (scripts/differential.sh puts
// every test/Target/gpu-*.mlir in its tarball; scripts/build-bench.sh builds
// this one as gpu-pad-wgmma-sm90a, which gpu-check.sh also memchecks): split-K behind the pad (256 x
// 256 outputs, K' = 16384: two 128 x 256 tiles in 32 chunks), a fused epilogue behind it, and a B given as
// B^T. Here: the kernels and the program the manifest records, through ptxas.
// GPU-CHIPS: sm_90a
// REQUIRES: ptxas, kb-run
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// kb-run accepts the chain offline (the pads, their shapes, the matmuls over
// the padded K).
// RUN: kb-run --check %t/b | FileCheck %s --check-prefix=OFFLINE
// OFFLINE: OK (10 kernels,
// CHECK-DAG: "name": "k0_transpose"
// CHECK-DAG: "name": "k1_pad"
// CHECK-DAG: "name": "k2_matmul"
// CHECK-DAG: "name": "k3_split_sum"
// CHECK-DAG: "name": "k6_fused_matmul_bias_add_relu"
// CHECK-DAG: "name": "k7_pad"
// CHECK-DAG: "name": "k8_pad"
// CHECK-DAG: "name": "k9_matmul"
// CHECK-DAG: "multiple": 32
// CHECK-DAG: "split_chunk": 512

func.func @pads(%a: tensor<256x16383xf32>, %b: tensor<16383x256xf32>,
                %x: tensor<512x509xf32>, %y: tensor<509x384xf32>, %bias: tensor<384xf32>,
                %p: tensor<1000x999xf32>, %qt: tensor<520x999xf32>)
    -> (tensor<256x256xf32>, tensor<512x384xf32>, tensor<1000x520xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<256x16383xf32>, tensor<16383x256xf32> -> tensor<256x256xf32>
  %1 = kb.matmul %x, %y precision(tf32) : tensor<512x509xf32>, tensor<509x384xf32> -> tensor<512x384xf32>
  %2 = kb.bias_add %1, %bias : tensor<512x384xf32>, tensor<384xf32> -> tensor<512x384xf32>
  %3 = kb.relu %2 : tensor<512x384xf32>
  %4 = kb.matmul %p, %qt precision(tf32) transpose_b : tensor<1000x999xf32>, tensor<520x999xf32> -> tensor<1000x520xf32>
  return %0, %3, %4 : tensor<256x256xf32>, tensor<512x384xf32>, tensor<1000x520xf32>
}

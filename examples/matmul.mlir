// A 2048^3 matmul on the tensor cores (precision tf32): wgmma on sm_90a (the
// default), mma.sync.m16n8k8 with chip=sm_90 or sm_80.
//   kb-opt --kb-compile="output=/tmp/matmul" examples/matmul.mlir
func.func @matmul(%a: tensor<2048x2048xf32> {kb.name = "a"},
                  %b: tensor<2048x2048xf32> {kb.name = "b"})
    -> (tensor<2048x2048xf32> {kb.name = "c"}) {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  return %0 : tensor<2048x2048xf32>
}

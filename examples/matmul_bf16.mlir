// A 4096^3 bf16 matmul, A x B^T (nn.Linear's form): wgmma m64nNk16 with
// bf16 operands and f32 accumulators on Hopper (sm_90a), the result rounded
// once to bf16 at the store.
//   kb-opt --kb-compile="output=/tmp/matmul_bf16" examples/matmul_bf16.mlir
func.func @matmul_bf16(%a: tensor<4096x4096xbf16> {kb.name = "a"},
                       %w: tensor<4096x4096xbf16> {kb.name = "w"})
    -> (tensor<4096x4096xbf16> {kb.name = "c"}) {
  %0 = kb.matmul %a, %w transpose_b : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xbf16>
  return %0 : tensor<4096x4096xbf16>
}

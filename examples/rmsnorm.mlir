// RMSNorm over bf16 rows of 8192 (an LLM's hidden size): 16-bit loads and
// stores of 8 values, the mean of squares and the scaling in f32. One
// kernel, one block a row.
//   kb-opt --kb-compile="output=/tmp/rmsnorm" examples/rmsnorm.mlir
func.func @rmsnorm(%x: tensor<4096x8192xbf16> {kb.name = "x"},
                   %w: tensor<8192xbf16> {kb.name = "weight"})
    -> (tensor<4096x8192xbf16> {kb.name = "y"}) {
  %0 = kb.rms_norm %x, %w eps(1.0e-06) : tensor<4096x8192xbf16>, tensor<8192xbf16> -> tensor<4096x8192xbf16>
  return %0 : tensor<4096x8192xbf16>
}

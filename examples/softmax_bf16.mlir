// Softmax over bf16 rows of 32768: 16-bit loads and stores, max, sum and
// exp in f32 registers. Half the bytes of the f32 softmax, so half its time
// on the same memory-bound kernel.
//   kb-opt --kb-compile="output=/tmp/softmax_bf16" examples/softmax_bf16.mlir
func.func @softmax_bf16(%x: tensor<8192x32768xbf16> {kb.name = "x"})
    -> (tensor<8192x32768xbf16> {kb.name = "y"}) {
  %0 = kb.softmax %x : tensor<8192x32768xbf16>
  return %0 : tensor<8192x32768xbf16>
}

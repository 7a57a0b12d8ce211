// Softmax over rows of 400000 floats (1.6 MB each): too wide for one block,
// so kb-select-config splits each row over 16 blocks (two per SM) that keep
// 100 KB of it each in shared memory and exchange their partial max and sum
// through a small workspace in global memory (strategy split_global): every
// row is still read once and written once.
//   kb-opt --kb-compile="output=/tmp/softmax_wide" examples/softmax_wide.mlir
func.func @softmax_wide(%x: tensor<1024x400000xf32> {kb.name = "x"})
    -> (tensor<1024x400000xf32> {kb.name = "y"}) {
  %0 = kb.softmax %x : tensor<1024x400000xf32>
  return %0 : tensor<1024x400000xf32>
}

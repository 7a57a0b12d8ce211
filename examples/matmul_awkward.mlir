// Sizes that are no tile multiple (1000x1500x700, fp32 FFMA) followed by a
// softmax over rows of 700: every edge tile is guarded.
//   kb-opt --kb-compile="output=/tmp/awkward" examples/matmul_awkward.mlir
func.func @awkward(%a: tensor<1000x1500xf32> {kb.name = "a"},
                   %b: tensor<1500x700xf32> {kb.name = "b"})
    -> (tensor<1000x700xf32> {kb.name = "y"}) {
  %0 = kb.matmul %a, %b precision(ieee) : tensor<1000x1500xf32>, tensor<1500x700xf32> -> tensor<1000x700xf32>
  %1 = kb.softmax %0 : tensor<1000x700xf32>
  return %1 : tensor<1000x700xf32>
}

func.func @t(%x: tensor<64x32xf32> {kb.name = "x"}) -> (tensor<32x64xf32> {kb.name = "y"}) {
  %0 = kb.transpose %x : tensor<64x32xf32> -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}

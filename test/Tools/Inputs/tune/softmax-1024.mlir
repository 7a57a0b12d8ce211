func.func @sm(%x: tensor<512x1024xf32> {kb.name = "x"}) -> (tensor<512x1024xf32> {kb.name = "y"}) {
  %0 = kb.softmax %x : tensor<512x1024xf32>
  return %0 : tensor<512x1024xf32>
}

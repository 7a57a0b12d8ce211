func.func @bgd(%x: tensor<1024x1024xf32> {kb.name = "x"}, %b: tensor<1024xf32> {kb.name = "bias"})
    -> (tensor<1024x1024xf32> {kb.name = "y"}) {
  %0 = kb.bias_add %x, %b : tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<1024x1024xf32>
  %1 = kb.gelu %0 approx(tanh) : tensor<1024x1024xf32>
  %2 = kb.dropout %1 p(0.1) seed(7) : tensor<1024x1024xf32>
  return %2 : tensor<1024x1024xf32>
}

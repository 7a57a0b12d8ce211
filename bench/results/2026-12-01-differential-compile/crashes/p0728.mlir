func.func @p0728(%a0: tensor<32x287xf32>, %a1: tensor<32x287xf32>) -> tensor<32x287xf32> {
  %v0 = kb.gelu %a0 approx(tanh) : tensor<32x287xf32>
  %v1 = kb.softmax %v0 : tensor<32x287xf32>
  %v2 = kb.sub %v1, %v0 : tensor<32x287xf32>
  %v3 = kb.sub %v2, %a1 : tensor<32x287xf32>
  return %v3 : tensor<32x287xf32>
}

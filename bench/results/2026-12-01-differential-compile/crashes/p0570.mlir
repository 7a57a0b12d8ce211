func.func @p0570(%a0: tensor<1272x2xf32>, %a1: tensor<1272x2xf32>) -> tensor<1272x2xf32> {
  %v0 = kb.mul %a0, %a1 : tensor<1272x2xf32>
  %v1 = kb.softmax %v0 : tensor<1272x2xf32>
  %v2 = kb.gelu %v1 approx(tanh) : tensor<1272x2xf32>
  %v3 = kb.gelu %v2 approx(erf) : tensor<1272x2xf32>
  %v4 = kb.sub %v3, %v0 : tensor<1272x2xf32>
  return %v4 : tensor<1272x2xf32>
}

func.func @p0212(%a0: tensor<89x833xf32>, %a1: tensor<89x833xf32>) -> tensor<89x833xf32> {
  %v0 = kb.sigmoid %a0 : tensor<89x833xf32>
  %v1 = kb.softmax %v0 : tensor<89x833xf32>
  %v2 = kb.sub %v1, %v0 : tensor<89x833xf32>
  %v3 = kb.tanh %a1 : tensor<89x833xf32>
  %v4 = kb.exp %v3 : tensor<89x833xf32>
  %v5 = kb.div %v2, %v4 : tensor<89x833xf32>
  return %v5 : tensor<89x833xf32>
}

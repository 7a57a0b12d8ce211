func.func @p0899(%a0: tensor<145x50575xf32>, %a1: tensor<50575xf32>) -> tensor<145x50575xf32> {
  %v0 = kb.dropout %a0 p(0.25) seed(688091851477) : tensor<145x50575xf32>
  %v1 = kb.bias_add %v0, %a1 : tensor<145x50575xf32>, tensor<50575xf32> -> tensor<145x50575xf32>
  %v2 = kb.gelu %v1 approx(tanh) : tensor<145x50575xf32>
  %v3 = kb.softmax %v2 : tensor<145x50575xf32>
  %v4 = kb.gelu %v3 approx(erf) : tensor<145x50575xf32>
  %v5 = kb.tanh %v2 : tensor<145x50575xf32>
  %v6 = kb.exp %v5 : tensor<145x50575xf32>
  %v7 = kb.div %v4, %v6 : tensor<145x50575xf32>
  %v8 = kb.dropout %v7 p(0.1) seed(674202412523) : tensor<145x50575xf32>
  return %v8 : tensor<145x50575xf32>
}

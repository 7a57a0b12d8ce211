func.func @p0409(%a0: tensor<62x2019xf32>, %a1: tensor<62x2019xf32>, %a2: tensor<62x2019xf32>) -> tensor<62x2019xf32> {
  %v0 = kb.tanh %a1 : tensor<62x2019xf32>
  %v1 = kb.exp %v0 : tensor<62x2019xf32>
  %v2 = kb.div %a0, %v1 : tensor<62x2019xf32>
  %v3 = kb.scale %v2 by 2.0 : tensor<62x2019xf32>
  %v4 = kb.relu %v3 : tensor<62x2019xf32>
  %v5 = kb.softmax %v4 : tensor<62x2019xf32>
  %v6 = kb.add %v5, %v2 : tensor<62x2019xf32>
  %v7 = kb.tanh %a2 : tensor<62x2019xf32>
  %v8 = kb.exp %v7 : tensor<62x2019xf32>
  %v9 = kb.div %v6, %v8 : tensor<62x2019xf32>
  %v10 = kb.dropout %v9 p(0.25) seed(345419084805) : tensor<62x2019xf32>
  return %v10 : tensor<62x2019xf32>
}

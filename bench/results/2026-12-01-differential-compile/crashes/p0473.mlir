func.func @p0473(%a0: tensor<2854x1xf32>, %a1: tensor<1xf32>) -> tensor<2854x1xf32> {
  %v0 = kb.scale %a0 by 2.0 : tensor<2854x1xf32>
  %v1 = kb.dropout %v0 p(0.0) seed(964572335355) : tensor<2854x1xf32>
  %v2 = kb.softmax %v1 : tensor<2854x1xf32>
  %v3 = kb.sub %v2, %v0 : tensor<2854x1xf32>
  %v4 = kb.scale %v3 by 1.5 : tensor<2854x1xf32>
  %v5 = kb.bias_add %v4, %a1 : tensor<2854x1xf32>, tensor<1xf32> -> tensor<2854x1xf32>
  return %v5 : tensor<2854x1xf32>
}

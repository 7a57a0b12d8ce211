func.func @p0749(%a0: tensor<1x1124xf32>, %a1: tensor<1124x721xf32>, %a2: tensor<721xf32>) -> tensor<1x721xf32> {
  %v0 = kb.matmul %a0, %a1 precision(ieee) : tensor<1x1124xf32>, tensor<1124x721xf32> -> tensor<1x721xf32>
  %v1 = kb.tanh %v0 : tensor<1x721xf32>
  %v2 = kb.exp %v1 : tensor<1x721xf32>
  %v3 = kb.sub %v2, %v2 : tensor<1x721xf32>
  %v4 = kb.bias_add %v3, %a2 : tensor<1x721xf32>, tensor<721xf32> -> tensor<1x721xf32>
  %v5 = kb.mul %v4, %v2 : tensor<1x721xf32>
  %v6 = kb.softmax %v5 : tensor<1x721xf32>
  %v7 = kb.add %v6, %v5 : tensor<1x721xf32>
  %v8 = kb.tanh %v3 : tensor<1x721xf32>
  %v9 = kb.exp %v8 : tensor<1x721xf32>
  %v10 = kb.div %v7, %v9 : tensor<1x721xf32>
  return %v10 : tensor<1x721xf32>
}

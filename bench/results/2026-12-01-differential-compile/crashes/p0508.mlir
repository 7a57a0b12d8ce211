func.func @p0508(%a0: tensor<2047x13445xf32>, %a1: tensor<13445xf32>, %a2: tensor<13445xf32>) -> tensor<2047x13445xf32> {
  %v0 = kb.relu %a0 : tensor<2047x13445xf32>
  %v1 = kb.bias_add %v0, %a1 : tensor<2047x13445xf32>, tensor<13445xf32> -> tensor<2047x13445xf32>
  %v2 = kb.bias_add %v1, %a2 : tensor<2047x13445xf32>, tensor<13445xf32> -> tensor<2047x13445xf32>
  %v3 = kb.softmax %v2 : tensor<2047x13445xf32>
  %v4 = kb.tanh %v1 : tensor<2047x13445xf32>
  %v5 = kb.exp %v4 : tensor<2047x13445xf32>
  %v6 = kb.div %v3, %v5 : tensor<2047x13445xf32>
  return %v6 : tensor<2047x13445xf32>
}

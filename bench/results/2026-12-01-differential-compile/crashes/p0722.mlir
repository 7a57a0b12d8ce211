func.func @p0722(%a0: tensor<20x285x1027xf32>, %a1: tensor<20x1027x5xf32>, %a2: tensor<20x285x1027xf32>, %a3: tensor<20x5x24xf32>, %a4: tensor<20x285x24xf32>) -> tensor<20x285x24xf32> {
  %v0 = kb.tanh %a2 : tensor<20x285x1027xf32>
  %v1 = kb.exp %v0 : tensor<20x285x1027xf32>
  %v2 = kb.div %a0, %v1 : tensor<20x285x1027xf32>
  %v3 = kb.matmul %v2, %a1 precision(ieee) : tensor<20x285x1027xf32>, tensor<20x1027x5xf32> -> tensor<20x285x5xf32>
  %v4 = kb.matmul %v3, %a3 precision(tf32x3) : tensor<20x285x5xf32>, tensor<20x5x24xf32> -> tensor<20x285x24xf32>
  %v5 = kb.scale %v4 by 1.5 : tensor<20x285x24xf32>
  %v6 = kb.softmax %v5 : tensor<20x285x24xf32>
  %v7 = kb.mul %v6, %v5 : tensor<20x285x24xf32>
  %v8 = kb.sub %v7, %a4 : tensor<20x285x24xf32>
  return %v8 : tensor<20x285x24xf32>
}

func.func @p0981(%a0: tensor<35x1xf32>, %a1: tensor<1x1831xf32>, %a2: tensor<35x1831xf32>, %a3: tensor<35x1831xf32>) -> tensor<35x1831xf32> {
  %v0 = kb.matmul %a0, %a1 precision(tf32) : tensor<35x1xf32>, tensor<1x1831xf32> -> tensor<35x1831xf32>
  %v1 = kb.tanh %a2 : tensor<35x1831xf32>
  %v2 = kb.exp %v1 : tensor<35x1831xf32>
  %v3 = kb.div %v0, %v2 : tensor<35x1831xf32>
  %v4 = kb.mul %v3, %v0 : tensor<35x1831xf32>
  %v5 = kb.tanh %a3 : tensor<35x1831xf32>
  %v6 = kb.exp %v5 : tensor<35x1831xf32>
  %v7 = kb.div %v4, %v6 : tensor<35x1831xf32>
  %v8 = kb.softmax %v7 : tensor<35x1831xf32>
  %v9 = kb.add %v8, %v2 : tensor<35x1831xf32>
  %v10 = kb.mul %v9, %v7 : tensor<35x1831xf32>
  return %v10 : tensor<35x1831xf32>
}

func.func @p0651(%a0: tensor<512x3388xf32>, %a1: tensor<2048x3388xf32>, %a2: tensor<3388x2048xf32>) -> tensor<512x2048xf32> {
  %v0 = kb.transpose %a2 pad(32) : tensor<3388x2048xf32> -> tensor<2048x3392xf32>
  %v1 = kb.dropout %a0 p(0.9) seed(424614991875) : tensor<512x3388xf32>
  %v2 = kb.relu %v1 : tensor<512x3388xf32>
  %v3 = kb.matmul %v2, %v0 precision(tf32x3) transpose_b padded_b : tensor<512x3388xf32>, tensor<2048x3392xf32> -> tensor<512x2048xf32>
  %v4 = kb.scale %v3 by 2.0 : tensor<512x2048xf32>
  %v5 = kb.softmax %v4 : tensor<512x2048xf32>
  %v6 = kb.add %v5, %v4 : tensor<512x2048xf32>
  return %v6 : tensor<512x2048xf32>
}

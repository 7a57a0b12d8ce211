func.func @p0432(%a0: tensor<6642x47xf32>, %a1: tensor<6642x47xf32>, %a2: tensor<6642x47xf32>, %a3: tensor<6642x47xf32>) -> tensor<6642x47xf32> {
  %v0 = kb.mul %a0, %a1 : tensor<6642x47xf32>
  %v1 = kb.relu %v0 : tensor<6642x47xf32>
  %v2 = kb.tanh %v1 : tensor<6642x47xf32>
  %v3 = kb.sub %v2, %a2 : tensor<6642x47xf32>
  %v4 = kb.softmax %v3 : tensor<6642x47xf32>
  %v5 = kb.tanh %v1 : tensor<6642x47xf32>
  %v6 = kb.exp %v5 : tensor<6642x47xf32>
  %v7 = kb.div %v4, %v6 : tensor<6642x47xf32>
  %v8 = kb.tanh %a3 : tensor<6642x47xf32>
  %v9 = kb.exp %v8 : tensor<6642x47xf32>
  %v10 = kb.div %v7, %v9 : tensor<6642x47xf32>
  %v11 = kb.sigmoid %v10 : tensor<6642x47xf32>
  return %v11 : tensor<6642x47xf32>
}

func.func @p0193(%a0: tensor<1295x12739xf32>) -> tensor<1295x12739xf32> {
  %v0 = kb.dropout %a0 p(0.5) seed(868323806930) : tensor<1295x12739xf32>
  %v1 = kb.softmax %v0 : tensor<1295x12739xf32>
  %v2 = kb.add %v1, %v0 : tensor<1295x12739xf32>
  return %v2 : tensor<1295x12739xf32>
}

func.func @mm(%a: tensor<512x512xf32> {kb.name = "a"}, %b: tensor<512x512xf32> {kb.name = "b"})
    -> (tensor<512x512xf32> {kb.name = "c"}) {
  %0 = kb.matmul %a, %b precision(ieee) : tensor<512x512xf32>, tensor<512x512xf32> -> tensor<512x512xf32>
  return %0 : tensor<512x512xf32>
}

func.func @mm(%a: tensor<2048x2048xf32> {kb.name = "a"}, %b: tensor<2048x2048xf32> {kb.name = "b"})
    -> (tensor<2048x2048xf32> {kb.name = "c"}) {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  return %0 : tensor<2048x2048xf32>
}

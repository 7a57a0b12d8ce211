func.func @matmul(%a: tensor<1536x1536xf32> {kb.name = "a"}, %b: tensor<1536x1536xf32> {kb.name = "b"}) -> (tensor<1536x1536xf32> {kb.name = "c"}) {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<1536x1536xf32>, tensor<1536x1536xf32> -> tensor<1536x1536xf32>
  return %0 : tensor<1536x1536xf32>
}

func.func @mm(%a: tensor<1024x4096xf32> {kb.name = "a"}, %b: tensor<5120x4096xf32> {kb.name = "b"}) -> (tensor<1024x5120xf32> {kb.name = "c"}) {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<1024x4096xf32>, tensor<5120x4096xf32> -> tensor<1024x5120xf32>
  return %0 : tensor<1024x5120xf32>
}

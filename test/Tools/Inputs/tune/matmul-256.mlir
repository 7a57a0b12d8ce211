func.func @mm(%a: tensor<256x256xf32> {kb.name = "a"}, %b: tensor<256x256xf32> {kb.name = "b"})
    -> (tensor<256x256xf32> {kb.name = "c"}) {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

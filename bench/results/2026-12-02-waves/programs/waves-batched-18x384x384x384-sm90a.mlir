func.func @matmul(%a: tensor<18x384x384xf32> {kb.name = "a"}, %b: tensor<18x384x384xf32> {kb.name = "b"}) -> (tensor<18x384x384xf32> {kb.name = "c"}) {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<18x384x384xf32>, tensor<18x384x384xf32> -> tensor<18x384x384xf32>
  return %0 : tensor<18x384x384xf32>
}

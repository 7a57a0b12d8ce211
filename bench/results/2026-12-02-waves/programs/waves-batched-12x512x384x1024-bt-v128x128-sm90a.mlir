func.func @matmul(%a: tensor<12x512x1024xf32> {kb.name = "a"}, %b: tensor<12x384x1024xf32> {kb.name = "b"}) -> (tensor<12x512x384xf32> {kb.name = "c"}) {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], copy = "tma">} : tensor<12x512x1024xf32>, tensor<12x384x1024xf32> -> tensor<12x512x384xf32>
  return %0 : tensor<12x512x384xf32>
}

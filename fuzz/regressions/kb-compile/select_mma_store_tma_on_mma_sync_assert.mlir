// chip=sm_90
func.func @row_b(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<store = "tma">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

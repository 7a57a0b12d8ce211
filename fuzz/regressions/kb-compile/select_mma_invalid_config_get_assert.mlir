// chip=sm_90a
func.func @tma_on_ffma(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<copy = "tma">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

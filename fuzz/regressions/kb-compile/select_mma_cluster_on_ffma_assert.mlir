// chip=sm_90
func.func @cluster_on_ffma(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<cluster = 2>} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// chip=sm_90
func.func @f(%a: tensor<1024x1504xf32>, %b: tensor<1504x704xf32>) -> tensor<1024x704xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<split = 2, reduce = "cluster">} : tensor<1024x1504xf32>, tensor<1504x704xf32> -> tensor<1024x704xf32>
  return %0 : tensor<1024x704xf32>
}

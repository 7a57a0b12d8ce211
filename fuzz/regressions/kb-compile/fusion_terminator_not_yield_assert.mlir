func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "kb.fusion"(%x) ({
  ^bb0(%a: tensor<4x4xf32>):
    %1 = "kb.relu"(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    "kb.not_an_op"(%1) : (tensor<4x4xf32>) -> ()
  }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

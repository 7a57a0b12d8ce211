func.func @f(%bias: tensor<512xf32> {kb.name = "bias"}, %a: tensor<1024x4096xf32> {kb.name = "a"}, %b: tensor<512x4096xf32> {kb.name = "b"}) -> (tensor<1024x512xf32> {kb.name = "c"}) {
  %0 = kb.fusion ins(%bias, %a, %b : tensor<512xf32>, tensor<1024x4096xf32>, tensor<512x4096xf32>) attributes {config = #kb.config<mma = "wgmma_tf32", block = [128, 128, 32], grid = 24, reduce = "stream">} {
  ^bb0(%c: tensor<512xf32>, %x: tensor<1024x4096xf32>, %w: tensor<512x4096xf32>):
    %m = kb.matmul %x, %w precision(tf32) transpose_b : tensor<1024x4096xf32>, tensor<512x4096xf32> -> tensor<1024x512xf32>
    %s = kb.bias_add %m, %c : tensor<1024x512xf32>, tensor<512xf32> -> tensor<1024x512xf32>
    %r = kb.relu %s : tensor<1024x512xf32>
    kb.yield %r : tensor<1024x512xf32>
  } -> tensor<1024x512xf32>
  return %0 : tensor<1024x512xf32>
}

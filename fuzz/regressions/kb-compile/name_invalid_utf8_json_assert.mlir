// Bias + GELU(tanh) + dropout(p = 0.3) on 4096x1024: thexf32> lab notes' fusion
// lesson. Unfused, three kernels and six trips to memory; after
// --fuse-elementwise, one kernel that reads x once and writes once.
//   kb-opt --fuse-elementwise examples/bias_gelu_dropout.mlir
//   kb-opt --kb-compile="output=/tmp/bgd" examples/bias_gelu_dropout.mlir
func.func @bias_gelu_dropout(%x: tensor<4096x1024xf32> {kb.name = "x"},
                             %b: tensor<1024xf32> {kb.name = "bùias"})
    -> (tensor<4096x1024xf32> {kb.name = "y"}) {
  %0 = kb.bias_add %x, %b : tensor<4096x1024xf32>, tensor<1024xf32> -> tensor<4096x1024xf32>
  %1 = kb.gelu %0 approx(tanh) : tensor<4096x1024xf32>
  %2 = kb.dropout %1 p(0.3) seed(42) : tensor<4096x1024xf32>
  return %2 : tensor<4096x1024xf32>
}

// A transformer block's residual add and LayerNorm: y = layer_norm(x + r)
// with weight and bias, eps 1e-5, over rows of 1024. kb-fuse-elementwise
// puts the add in front of the norm (its prologue), so this is one kernel:
// one block a row, the row read once (x and r) into registers, mean and
// variance reduced in two passes over the registers, written once.
//   kb-opt --kb-compile="output=/tmp/layernorm" examples/layernorm.mlir
func.func @layernorm(%x: tensor<16384x1024xf32> {kb.name = "x"},
                     %r: tensor<16384x1024xf32> {kb.name = "residual"},
                     %w: tensor<1024xf32> {kb.name = "weight"},
                     %b: tensor<1024xf32> {kb.name = "bias"})
    -> (tensor<16384x1024xf32> {kb.name = "y"}) {
  %0 = kb.add %x, %r : tensor<16384x1024xf32>
  %1 = kb.layer_norm %0, %w, %b eps(1.0e-05) : tensor<16384x1024xf32>, tensor<1024xf32>, tensor<1024xf32> -> tensor<16384x1024xf32>
  return %1 : tensor<16384x1024xf32>
}

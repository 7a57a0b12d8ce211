// Causal self-attention of 8 x 16 heads, 1000 queries and keys, head dim
// 64, written out: q k^T, a scale of 1/sqrt(64), the causal mask, softmax
// over the keys, @ v. kb-fuse-attention makes the chain one kb.attention
// (online softmax: the 1000 x 1000 scores of each head never go to
// memory); kb-compile lowers it to one kernel. Tiles and pipeline depth
// are kb-select-config's (#kb.config block = [queries, keys], stages).
func.func @attention(%q: tensor<128x1000x64xf32>, %k: tensor<128x1000x64xf32>,
                     %v: tensor<128x1000x64xf32>) -> tensor<128x1000x64xf32> {
  %s = kb.matmul %q, %k precision(tf32) transpose_b : tensor<128x1000x64xf32>, tensor<128x1000x64xf32> -> tensor<128x1000x1000xf32>
  %t = kb.scale %s by 0.125 : tensor<128x1000x1000xf32>
  %c = kb.causal_mask %t : tensor<128x1000x1000xf32>
  %p = kb.softmax %c : tensor<128x1000x1000xf32>
  %o = kb.matmul %p, %v precision(tf32) : tensor<128x1000x1000xf32>, tensor<128x1000x64xf32> -> tensor<128x1000x64xf32>
  return %o : tensor<128x1000x64xf32>
}

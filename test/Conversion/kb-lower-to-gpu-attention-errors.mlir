// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics

// Until the attention kernel lands (issue #46), a kb.attention reaching
// kb-lower-to-gpu is refused at the op, and so is a kb.causal_mask left
// outside one (it has no kernel of its own).

func.func @attention(%q: tensor<4x128x64xf32>) -> tensor<4x128x64xf32> {
  // expected-error @+1 {{has no GPU lowering yet (issue #46)}}
  %o = kb.attention %q, %q, %q scale(0.125) : tensor<4x128x64xf32>, tensor<4x128x64xf32>, tensor<4x128x64xf32> -> tensor<4x128x64xf32>
  return %o : tensor<4x128x64xf32>
}

// -----

func.func @causal_mask(%s: tensor<4x128x128xf32>) -> tensor<4x128x128xf32> {
  // expected-error @+1 {{has no kernel of its own: kb lowers it only inside a kb.attention}}
  %0 = kb.causal_mask %s : tensor<4x128x128xf32>
  return %0 : tensor<4x128x128xf32>
}

// RUN: kb-opt %s -split-input-file -verify-diagnostics

// kb.attention: each wrong program refused at the op, saying what was
// expected.

func.func @rank2(%q: tensor<128x64xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{expects q of rank 3 ([BH, Sq, D]) or 4 ([B, H, Sq, D]), got rank 2 (128x64)}}
  %o = kb.attention %q, %q, %q scale(0.125) : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32> -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}

// -----

func.func @rank5(%q: tensor<1x2x2x16x8xf32>) -> tensor<1x2x2x16x8xf32> {
  // expected-error @+1 {{expects q of rank 3 ([BH, Sq, D]) or 4 ([B, H, Sq, D]), got rank 5}}
  %o = kb.attention %q, %q, %q scale(0.125) : tensor<1x2x2x16x8xf32>, tensor<1x2x2x16x8xf32>, tensor<1x2x2x16x8xf32> -> tensor<1x2x2x16x8xf32>
  return %o : tensor<1x2x2x16x8xf32>
}

// -----

func.func @k_rank(%q: tensor<2x4x16x8xf32>, %k: tensor<8x16x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+1 {{expects k of q's rank 4, got rank 3 (8x16x8)}}
  %o = kb.attention %q, %k, %q scale(0.125) : tensor<2x4x16x8xf32>, tensor<8x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

func.func @leading_dims(%q: tensor<2x4x16x8xf32>, %k: tensor<2x2x16x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+1 {{expects k to have q's leading dimensions 2x4, got 2x2 (k is 2x2x16x8)}}
  %o = kb.attention %q, %k, %k scale(0.125) : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32> -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

func.func @v_leading_dims(%q: tensor<4x16x8xf32>, %v: tensor<2x16x8xf32>) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{expects v to have q's leading dimensions 4, got 2 (v is 2x16x8)}}
  %o = kb.attention %q, %q, %v scale(0.125) : tensor<4x16x8xf32>, tensor<4x16x8xf32>, tensor<2x16x8xf32> -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}

// -----

func.func @head_dim(%q: tensor<4x16x64xf32>, %k: tensor<4x16x128xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{expects q and k of one head dimension D: q is 4x16x64 (D = 64), k is 4x16x128 (D = 128)}}
  %o = kb.attention %q, %k, %q scale(0.125) : tensor<4x16x64xf32>, tensor<4x16x128xf32>, tensor<4x16x64xf32> -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @key_count(%q: tensor<4x16x64xf32>, %k: tensor<4x32x64xf32>, %v: tensor<4x30x64xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{expects k and v of one key count Sk: k is 4x32x64 (Sk = 32), v is 4x30x64 (Sk = 30)}}
  %o = kb.attention %q, %k, %v scale(0.125) : tensor<4x16x64xf32>, tensor<4x32x64xf32>, tensor<4x30x64xf32> -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @result_shape(%q: tensor<4x16x64xf32>, %k: tensor<4x32x64xf32>, %v: tensor<4x32x16xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{expects a result of shape 4x16x16 ([..., Sq, Dv]), got 4x16x64}}
  %o = kb.attention %q, %k, %v scale(0.125) : tensor<4x16x64xf32>, tensor<4x32x64xf32>, tensor<4x32x16xf32> -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @mixed_types(%q: tensor<4x16x64xbf16>, %k: tensor<4x16x64xf16>) -> tensor<4x16x64xbf16> {
  // expected-error @+1 {{expects q, k, v and the result of one element type, got 'bf16' (q) and 'f16' (k); kb.convert one of them}}
  %o = kb.attention %q, %k, %q scale(0.125) : tensor<4x16x64xbf16>, tensor<4x16x64xf16>, tensor<4x16x64xbf16> -> tensor<4x16x64xbf16>
  return %o : tensor<4x16x64xbf16>
}

// -----

func.func @result_type(%q: tensor<4x16x64xbf16>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{expects q, k, v and the result of one element type, got 'bf16' (q) and 'f32' (the result)}}
  %o = kb.attention %q, %q, %q scale(0.125) : tensor<4x16x64xbf16>, tensor<4x16x64xbf16>, tensor<4x16x64xbf16> -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @mask_shape(%q: tensor<4x16x64xf32>, %k: tensor<4x32x64xf32>, %m: tensor<32x16xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{expects a mask of shape 16x32 (Sq x Sk, broadcast over the leading dimensions) or 4x16x32, got 32x16}}
  %o = kb.attention %q, %k, %k mask(%m) scale(0.125) : tensor<4x16x64xf32>, tensor<4x32x64xf32>, tensor<4x32x64xf32>, tensor<32x16xf32> -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @mask_partial_batch(%q: tensor<2x4x16x64xf32>, %m: tensor<4x16x16xf32>) -> tensor<2x4x16x64xf32> {
  // expected-error @+1 {{expects a mask of shape 16x16 (Sq x Sk, broadcast over the leading dimensions) or 2x4x16x16, got 4x16x16}}
  %o = kb.attention %q, %q, %q mask(%m) scale(0.125) : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<4x16x16xf32> -> tensor<2x4x16x64xf32>
  return %o : tensor<2x4x16x64xf32>
}

// -----

func.func @mask_type(%q: tensor<4x16x64xbf16>, %m: tensor<16x16xf32>) -> tensor<4x16x64xbf16> {
  // expected-error @+1 {{expects a mask of the operands' element type 'bf16', got 'f32'}}
  %o = kb.attention %q, %q, %q mask(%m) scale(0.125) : tensor<4x16x64xbf16>, tensor<4x16x64xbf16>, tensor<4x16x64xbf16>, tensor<16x16xf32> -> tensor<4x16x64xbf16>
  return %o : tensor<4x16x64xbf16>
}

// -----

func.func @precision_f32(%q: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{an f32 attention takes precision(tf32) (the default) or precision(ieee), got precision(tf32x3)}}
  %o = kb.attention %q, %q, %q scale(0.125) precision(tf32x3) : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32> -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @precision_half(%q: tensor<4x16x64xf16>) -> tensor<4x16x64xf16> {
  // expected-error @+1 {{a 'f16' attention has no precision choice (tensor cores in 'f16' with f32 accumulation): leave out precision(tf32)}}
  %o = kb.attention %q, %q, %q scale(0.125) precision(tf32) : tensor<4x16x64xf16>, tensor<4x16x64xf16>, tensor<4x16x64xf16> -> tensor<4x16x64xf16>
  return %o : tensor<4x16x64xf16>
}

// -----

func.func @precision_unknown(%q: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{unknown precision 'fp8' (known: ieee, tf32, tf32x3, native)}}
  %o = kb.attention %q, %q, %q scale(0.125) precision(fp8) : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32> -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @lse_shape(%q: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{expects lse of shape 4x16 in f32 (one log-sum-exp per query row), got 'tensor<4x16x1xf32>'}}
  %o, %l = kb.attention %q, %q, %q scale(0.125) lse : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32> -> tensor<4x16x64xf32>, tensor<4x16x1xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @lse_type(%q: tensor<4x16x64xbf16>) -> tensor<4x16x64xbf16> {
  // expected-error @+1 {{expects lse of shape 4x16 in f32 (one log-sum-exp per query row), got 'tensor<4x16xbf16>'}}
  %o, %l = kb.attention %q, %q, %q scale(0.125) lse : tensor<4x16x64xbf16>, tensor<4x16x64xbf16>, tensor<4x16x64xbf16> -> tensor<4x16x64xbf16>, tensor<4x16xbf16>
  return %o : tensor<4x16x64xbf16>
}

// -----

func.func @lse_without_keyword(%q: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{expects 1 result type(s) (the output; a second one, the log-sum-exp, needs `lse`), got 2}}
  %o, %l = kb.attention %q, %q, %q scale(0.125) : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32> -> tensor<4x16x64xf32>, tensor<4x16xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @mask_type_count(%q: tensor<4x16x64xf32>, %m: tensor<16x16xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{expects 4 operand types (q, k, v, mask), got 3}}
  %o = kb.attention %q, %q, %q mask(%m) scale(0.125) : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32> -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @scale_inf(%q: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{expects a finite scale, got INF}}
  %o = kb.attention %q, %q, %q scale(0x7F800000) : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32> -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @config_vector(%q: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{#kb.config field 'vector' does not apply to an attention kernel (kb would ignore it)}}
  %o = kb.attention %q, %q, %q scale(0.125) {config = #kb.config<vector = 4>} : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32> -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @config_block(%q: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  // expected-error @+1 {{#kb.config block of an attention is [BQ, BKV] (query rows a block, keys a step), got 3 sizes}}
  %o = kb.attention %q, %q, %q scale(0.125) {config = #kb.config<block = [64, 64, 32]>} : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32> -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}

// -----

func.func @in_fusion(%q: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  %y = kb.fusion ins(%q : tensor<4x16x64xf32>) {
  ^bb0(%a: tensor<4x16x64xf32>):
    // expected-error @+1 {{is not allowed in kb.fusion}}
    %o = kb.attention %a, %a, %a scale(0.125) : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32> -> tensor<4x16x64xf32>
    kb.yield %o : tensor<4x16x64xf32>
  } -> tensor<4x16x64xf32>
  return %y : tensor<4x16x64xf32>
}

// -----

func.func @causal_mask_rank1(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{expects an input of rank 2 or more (the last two axes are query rows and keys), got rank 1}}
  %0 = kb.causal_mask %x : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @bthd_rank3(%q: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  // expected-error @+1 {{bthd takes q, k, v of rank 4 ([B, S, H, D]), got q of rank 3 (8x128x64)}}
  %o = kb.attention %q, %q, %q scale(0.125) bthd : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}

// -----

func.func @bthd_heads(%q: tensor<2x16x4x8xf32>, %k: tensor<2x16x2x8xf32>) -> tensor<2x16x4x8xf32> {
  // expected-error @+1 {{expects k to have q's batch and head dimensions [B, H] 2x4, got 2x2 (k is 2x16x2x8)}}
  %o = kb.attention %q, %k, %k scale(0.125) bthd : tensor<2x16x4x8xf32>, tensor<2x16x2x8xf32>, tensor<2x16x2x8xf32> -> tensor<2x16x4x8xf32>
  return %o : tensor<2x16x4x8xf32>
}

// -----

// The result of a bthd attention is [B, Sq, H, Dv], not [B, H, Sq, Dv].
func.func @bthd_result(%q: tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+1 {{expects a result of shape 2x16x4x8 ([B, Sq, H, Dv]), got 2x4x16x8}}
  %o = kb.attention %q, %q, %q scale(0.125) bthd : tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32> -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// Its lse keeps [B, H, Sq].
func.func @bthd_lse(%q: tensor<2x16x4x8xf32>) -> (tensor<2x16x4x8xf32>, tensor<2x16x4xf32>) {
  // expected-error @+1 {{expects lse of shape 2x4x16 in f32 (one log-sum-exp per query row), got 'tensor<2x16x4xf32>'}}
  %o, %l = kb.attention %q, %q, %q scale(0.125) bthd lse : tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32> -> tensor<2x16x4x8xf32>, tensor<2x16x4xf32>
  return %o, %l : tensor<2x16x4x8xf32>, tensor<2x16x4xf32>
}

// RUN: kb-opt %s -split-input-file -verify-diagnostics

func.func @matmul_inner_mismatch(%a: tensor<64x32xf32>, %b: tensor<16x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{inner dimensions must match: lhs is 64x32 (K = 32), rhs is 16x8 (K = 16)}}
  %0 = kb.matmul %a, %b precision(ieee) : tensor<64x32xf32>, tensor<16x8xf32> -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

func.func @matmul_transposed_mismatch(%a: tensor<64x32xf32>, %b: tensor<8x16xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{inner dimensions must match: lhs is 64x32 (K = 32), rhs is 8x16 (K = 16)}}
  %0 = kb.matmul %a, %b precision(ieee) transpose_b : tensor<64x32xf32>, tensor<8x16xf32> -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

func.func @matmul_rank(%a: tensor<4x64x32x2xf32>, %b: tensor<4x32x8x2xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{expects lhs of rank 2 (MxK) or 3 (BxMxK), got rank 4}}
  %0 = kb.matmul %a, %b precision(ieee) : tensor<4x64x32x2xf32>, tensor<4x32x8x2xf32> -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

func.func @matmul_rank_mix(%a: tensor<2x64x32xf32>, %b: tensor<32x8xf32>) -> tensor<2x64x8xf32> {
  // expected-error @+1 {{expects rhs of the same rank as lhs (3), got rank 2}}
  %0 = kb.matmul %a, %b precision(ieee) : tensor<2x64x32xf32>, tensor<32x8xf32> -> tensor<2x64x8xf32>
  return %0 : tensor<2x64x8xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x64x32xf32>, %b: tensor<3x32x8xf32>) -> tensor<2x64x8xf32> {
  // expected-error @+1 {{batch dimensions must match: lhs has 2, rhs has 3}}
  %0 = kb.matmul %a, %b precision(ieee) : tensor<2x64x32xf32>, tensor<3x32x8xf32> -> tensor<2x64x8xf32>
  return %0 : tensor<2x64x8xf32>
}

// -----

func.func @matmul_result(%a: tensor<64x32xf32>, %b: tensor<32x8xf32>) -> tensor<64x16xf32> {
  // expected-error @+1 {{expects result shape 64x8, got 64x16}}
  %0 = kb.matmul %a, %b precision(ieee) : tensor<64x32xf32>, tensor<32x8xf32> -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// -----

func.func @matmul_f16(%a: tensor<64x32xf16>, %b: tensor<32x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{expects lhs and rhs of one element type, got 'f16' and 'f32' (kb.convert one of them)}}
  %0 = kb.matmul %a, %b precision(ieee) : tensor<64x32xf16>, tensor<32x8xf32> -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

func.func @matmul_precision(%a: tensor<64x32xf32>, %b: tensor<32x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{unknown precision 'fp16' (known: ieee, tf32, tf32x3, native)}}
  %0 = kb.matmul %a, %b precision(fp16) : tensor<64x32xf32>, tensor<32x8xf32> -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

func.func @gelu_approx(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{unknown GELU approximation 'sigmoid' (known: tanh, erf)}}
  %0 = kb.gelu %x approx(sigmoid) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{operand #0 must have a static shape, got 'tensor<?x8xf32>'}}
  %0 = kb.softmax %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @rank0(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{operand #0 must have rank >= 1, got 'tensor<f32>'}}
  %0 = kb.relu %x : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @dropout_p(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects p in [0, 1), got 1.5}}
  %0 = kb.dropout %x p(1.5) seed(1) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @dropout_p_one(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects p in [0, 1), got 1}}
  %0 = kb.dropout %x p(1.0) seed(1) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @bias_length(%x: tensor<4x8xf32>, %b: tensor<7xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects bias length 8 (the input's last dimension), got 7}}
  %0 = kb.bias_add %x, %b : tensor<4x8xf32>, tensor<7xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @bias_rank(%x: tensor<4x8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects a 1-D bias, got rank 2}}
  %0 = kb.bias_add %x, %b : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @binary_shapes(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "kb.add"(%x, %y) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scale_nan(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects a finite factor}}
  %0 = kb.scale %x by 0x7FC00000 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @add_scalar_inf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects a finite value, got INF}}
  %0 = kb.add_scalar %x value(0x7F800000) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @pow_nan(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects a finite exponent, got nan}}
  %0 = kb.pow %x exponent(0x7FC00000) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @leaky_relu_inf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects a finite slope, got -INF}}
  %0 = kb.leaky_relu %x slope(0xFF800000) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @pow_shape(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "kb.pow"(%x) {exponent = 2.0 : f32} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @silu_dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{must have a static shape}}
  %0 = kb.silu %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @config_vector(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config 'vector' must be 1, 2, 4 or 8, got 3}}
  %0 = kb.relu %x {config = #kb.config<vector = 3>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @config_strategy(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{#kb.config 'strategy' must be "registers", "split", "split_shared", "split_global", "online" or "cluster", got "twice"}}
  // expected-error @+1 {{failed to parse KB_ConfigAttr parameter 'strategy'}}
  %0 = kb.softmax %x {config = #kb.config<strategy = "twice">} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @config_cluster(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config 'cluster' must be in [1, 16] (the largest thread-block cluster sm_90 launches), got 32}}
  %0 = kb.softmax %x {config = #kb.config<strategy = "split", cluster = 32>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// split_global's blocks per row are not a hardware cluster: up to 64.
func.func @config_global_blocks(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config 'cluster' (blocks per row) of a split_global softmax must be in [1, 64], got 65}}
  %0 = kb.softmax %x {config = #kb.config<strategy = "split_global", cluster = 65>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A persistent grid belongs to split_global (and wgmma matmuls) only.
func.func @config_grid_registers(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config 'grid' (a persistent grid) is only for a split_global softmax or a wgmma_tf32 matmul, not strategy "registers"}}
  %0 = kb.softmax %x {config = #kb.config<strategy = "registers", grid = 264>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @config_grid_negative(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config 'grid' must be a positive block count, got -1}}
  %0 = kb.softmax %x {config = #kb.config<strategy = "split_global", grid = -1>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @config_threads(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config 'threads' must be in [1, 1024], got 2048}}
  %0 = kb.relu %x {config = #kb.config<threads = 2048>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @config_mma(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{#kb.config 'mma' must be "ffma", "mma_sync_tf32", "mma_sync_tf32x3", "wgmma_tf32", "gemv", "wgmma_f16", "wgmma_bf16", "mma_sync_f16" or "mma_sync_bf16", got "wmma"}}
  // expected-error @+1 {{failed to parse KB_ConfigAttr parameter 'mma'}}
  %0 = kb.relu %x {config = #kb.config<mma = "wmma">} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @config_tile(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config field 'block' expects positive sizes, got 0}}
  %0 = kb.relu %x {config = #kb.config<block = [0, 8]>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @fusion_foreign_op(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.fusion ins(%x : tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{is not allowed in kb.fusion}}
    %1 = tensor.empty() : tensor<4x8xf32>
    kb.yield %1 : tensor<4x8xf32>
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @fusion_two_anchors(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{holds 1 matmul(s), 1 softmax(es) and 0 norm(s); at most one of them is allowed}}
  %0 = kb.fusion ins(%x : tensor<8x8xf32>) {
  ^bb0(%a: tensor<8x8xf32>):
    %1 = kb.matmul %a, %a precision(ieee) : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
    %2 = kb.softmax %1 : tensor<8x8xf32>
    kb.yield %2 : tensor<8x8xf32>
  } -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @fusion_arg_types(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{block argument #0 has type 'tensor<8x4xf32>' but input #0 has type 'tensor<4x8xf32>'}}
  %0 = kb.fusion ins(%x : tensor<4x8xf32>) {
  ^bb0(%a: tensor<8x4xf32>):
    %1 = kb.relu %a : tensor<8x4xf32>
    kb.yield %1 : tensor<8x4xf32>
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @empty_tensor(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  // expected-error @+1 {{operand #0 must not be empty (a zero dimension), got 'tensor<0x4xf32>'}}
  %0 = kb.relu %x : tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

func.func @transpose_shape(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects result shape 8x4 (the input's last two axes swapped), got 4x8}}
  %0 = kb.transpose %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @transpose_rank(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{expects an input of rank 2 or 3, got rank 1}}
  %0 = kb.transpose %x : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @transpose_pad_shape(%x: tensor<30x8xf32>) -> tensor<8x30xf32> {
  // expected-error @+1 {{expects result shape 8x32 (the input's last two axes swapped, rows padded to a multiple of 32), got 8x30}}
  %0 = kb.transpose %x pad(32) : tensor<30x8xf32> -> tensor<8x30xf32>
  return %0 : tensor<8x30xf32>
}

// -----

func.func @transpose_pad_zero(%x: tensor<30x8xf32>) -> tensor<8x30xf32> {
  // expected-error @+1 {{pad must be between 1 and 1024, got 0}}
  %0 = kb.transpose %x pad(0) : tensor<30x8xf32> -> tensor<8x30xf32>
  return %0 : tensor<8x30xf32>
}

// -----

func.func @padded_b_needs_transpose_b(%a: tensor<64x30xf32>, %b: tensor<32x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{padded_b needs transpose_b (it pads the rows of B^T)}}
  %0 = kb.matmul %a, %b precision(tf32) padded_b : tensor<64x30xf32>, tensor<32x8xf32> -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

func.func @padded_b_too_short(%a: tensor<64x30xf32>, %b: tensor<8x28xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{padded_b: the rows of rhs 8x28 must be at least K = 30 long}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b padded_b : tensor<64x30xf32>, tensor<8x28xf32> -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

func.func @pad_shape(%x: tensor<8x30xf32>) -> tensor<8x36xf32> {
  // expected-error @+1 {{expects result shape 8x32 (the last axis rounded up to a multiple of 32), got 8x36}}
  %0 = kb.pad %x multiple(32) : tensor<8x30xf32> -> tensor<8x36xf32>
  return %0 : tensor<8x36xf32>
}

// -----

func.func @pad_nothing(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{pads nothing: the last axis (64) is already a multiple of 32}}
  %0 = kb.pad %x multiple(32) : tensor<8x64xf32> -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @pad_multiple(%x: tensor<8x30xf32>) -> tensor<8x30xf32> {
  // expected-error @+1 {{multiple must be between 2 and 1024, got 1}}
  %0 = kb.pad %x multiple(1) : tensor<8x30xf32> -> tensor<8x30xf32>
  return %0 : tensor<8x30xf32>
}

// -----

func.func @pad_rank(%x: tensor<30xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{expects an input of rank 2 or 3, got rank 1}}
  %0 = kb.pad %x multiple(32) : tensor<30xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

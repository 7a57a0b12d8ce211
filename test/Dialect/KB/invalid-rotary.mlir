// RUN: kb-opt %s -split-input-file -verify-diagnostics

// kb.rotary: each wrong program refused at the op, in one line.

func.func @head_dim_does_not_divide(%x: tensor<16x96xf32>, %c: tensor<16x32xf32>, %s: tensor<16x32xf32>) -> tensor<16x96xf32> {
  // expected-error @+1 {{expects the last dimension (96) to be a multiple of head_dim = 2 x the tables' columns (64)}}
  %0 = kb.rotary %x, %c, %s : tensor<16x96xf32>, tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x96xf32>
  return %0 : tensor<16x96xf32>
}

// -----

func.func @table_rank(%x: tensor<16x64xf32>, %c: tensor<32xf32>, %s: tensor<32xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{expects cos and sin tables of rank 2 (positions x head_dim / 2), got rank 1}}
  %0 = kb.rotary %x, %c, %s : tensor<16x64xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

func.func @tables_disagree(%x: tensor<16x64xf32>, %c: tensor<16x32xf32>, %s: tensor<8x32xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{expects sin of cos's type 'tensor<16x32xf32>', got 'tensor<8x32xf32>'}}
  %0 = kb.rotary %x, %c, %s : tensor<16x64xf32>, tensor<16x32xf32>, tensor<8x32xf32> -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

func.func @table_type(%x: tensor<16x64xbf16>, %c: tensor<16x32xf16>, %s: tensor<16x32xf16>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{expects tables of f32 or the input's element type 'bf16', got 'f16'}}
  %0 = kb.rotary %x, %c, %s : tensor<16x64xbf16>, tensor<16x32xf16>, tensor<16x32xf16> -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

func.func @rank_one(%x: tensor<64xf32>, %c: tensor<1x32xf32>, %s: tensor<1x32xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{expects an input of rank 2 or more (rows of heads x head_dim), got rank 1}}
  %0 = kb.rotary %x, %c, %s : tensor<64xf32>, tensor<1x32xf32>, tensor<1x32xf32> -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @result_type(%x: tensor<16x64xbf16>, %c: tensor<16x32xf32>, %s: tensor<16x32xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{expects result type 'tensor<16x64xbf16>', got 'tensor<16x64xf32>'}}
  %0 = kb.rotary %x, %c, %s : tensor<16x64xbf16>, tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

// A rotary around a softmax: a row kernel holds no pairs.
func.func @rotary_around_softmax(%x: tensor<16x64xf32>, %c: tensor<16x32xf32>, %s: tensor<16x32xf32>) -> tensor<16x64xf32> {
  %0 = kb.fusion ins(%x, %c, %s : tensor<16x64xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  ^bb0(%a: tensor<16x64xf32>, %ca: tensor<16x32xf32>, %sa: tensor<16x32xf32>):
    %1 = kb.softmax %a : tensor<16x64xf32>
    // expected-error @+1 {{is not allowed in a kb.fusion around a softmax or norm: only a matmul epilogue or an elementwise kernel holds whole pairs}}
    %2 = kb.rotary %1, %ca, %sa : tensor<16x64xf32>, tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x64xf32>
    kb.yield %2 : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics

// The row kernels refuse configs they cannot build, at the op.

func.func @vector_not_dividing(%x: tensor<4x1022xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{vector width 4 does not divide the row length 1022}}
  %0 = kb.reduce %x sum {config = #kb.config<threads = 64, vector = 4>} : tensor<4x1022xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @wider_than_registers(%x: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  // expected-error @+1 {{would hold 512 values of each row per thread (row length 65536, 128 threads); at most 64 fit in registers: use strategy "online" (the row read in loops)}}
  %0 = kb.rms_norm %x eps(1.0e-05) {config = #kb.config<threads = 128, vector = 4>} : tensor<4x65536xf32> -> tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}

// -----

func.func @cluster_of_three(%x: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  // expected-error @+1 {{strategy "cluster" splits a row over 2, 4 or 8 blocks whose parts are whole vectors; cluster = 3 with vector 4 does not divide the row length 65536}}
  %0 = kb.rms_norm %x eps(1.0e-05) {config = #kb.config<threads = 512, vector = 4, strategy = "cluster", cluster = 3>} : tensor<4x65536xf32> -> tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}

// -----

func.func @cluster_parts_not_whole_vectors(%x: tensor<4x40004xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{strategy "cluster" splits a row over 2, 4 or 8 blocks whose parts are whole vectors; cluster = 8 with vector 4 does not divide the row length 40004}}
  %0 = kb.reduce %x sum {config = #kb.config<threads = 512, vector = 4, strategy = "cluster", cluster = 8>} : tensor<4x40004xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cluster_part_too_wide(%x: tensor<4x1048576xf32>) -> tensor<4x1048576xf32> {
  // expected-error @+1 {{would hold 128 values of each row per thread (row length 1048576, 8 blocks of 1024 threads); at most 64 fit in registers: use strategy "online" (the row read in loops)}}
  %0 = kb.layer_norm %x eps(1.0e-05) {config = #kb.config<threads = 1024, vector = 4, strategy = "cluster", cluster = 8>} : tensor<4x1048576xf32> -> tensor<4x1048576xf32>
  return %0 : tensor<4x1048576xf32>
}

// -----

func.func @cluster_part_too_wide_small(%x: tensor<4x262144xf32>) -> tensor<4x262144xf32> {
  // expected-error @+1 {{would hold 128 values of each row per thread (row length 262144, 2 blocks of 1024 threads); at most 64 fit in registers: use strategy "online" (the row read in loops) or a larger cluster}}
  %0 = kb.rms_norm %x eps(1.0e-05) {config = #kb.config<threads = 1024, vector = 4, strategy = "cluster", cluster = 2>} : tensor<4x262144xf32> -> tensor<4x262144xf32>
  return %0 : tensor<4x262144xf32>
}

// -----

func.func @softmax_strategy(%x: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  // expected-error @+1 {{row kernels take strategy "online" (rows read in loops), "cluster" (a row over a cluster's registers) or none (the row in registers), not "split"}}
  %0 = kb.rms_norm %x eps(1.0e-05) {config = #kb.config<threads = 512, vector = 4, strategy = "split", cluster = 8>} : tensor<4x65536xf32> -> tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}

// -----

func.func @rows_a_block_threads(%x: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  // expected-error @+1 {{block = [2] (rows a block, one warp a row) needs the row in registers (no strategy), threads = 32 x rows a block and the rows (16) a multiple of it; got threads = 128}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<block = [2], threads = 128, vector = 8>} : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

// -----

func.func @persistent_without_rows_a_block(%x: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  // expected-error @+1 {{grid = 4 (a persistent grid of warp rows) needs block = [rows a block] with threads = 32 x that, no strategy, and at most 16 rows' warps (grid x rows a block)}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<grid = 4, threads = 64, vector = 8>} : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

// -----

func.func @one_row_a_block_of_two_warps(%x: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  // expected-error @+1 {{block = [1] (rows a block, one warp a row) needs the row in registers (no strategy), threads = 32 x rows a block and the rows (16) a multiple of it; got threads = 64}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<block = [1], threads = 64, vector = 8>} : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

// -----

// layer_norm's one exchange merges equal parts: the cluster must still split
// the row into whole vectors.
func.func @layer_norm_cluster_parts_not_whole_vectors(%x: tensor<4x40004xf32>) -> tensor<4x40004xf32> {
  // expected-error @+1 {{strategy "cluster" splits a row over 2, 4 or 8 blocks whose parts are whole vectors; cluster = 8 with vector 4 does not divide the row length 40004}}
  %0 = kb.layer_norm %x eps(1.0e-05) {config = #kb.config<threads = 512, vector = 4, strategy = "cluster", cluster = 8>} : tensor<4x40004xf32> -> tensor<4x40004xf32>
  return %0 : tensor<4x40004xf32>
}

// RUN: kb-opt %s --kb-select-config=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// Row reductions and norms: one block a row, the row in registers. The
// vector is 8 for 16-bit rows a multiple of 8 long, else the widest that
// divides the row; about four vectors a thread, a power of two of threads
// from 64 (32 for rows of fewer than 64 vectors) to 1024; rows of 64 to 128
// vectors (a bf16 row of 1024) one warp a row, two rows a block
// (@rows_a_block). Rows wider than 1024 threads of 32 values take
// strategy "online" (the row read in loops; "cluster" where asked for:
// kb-select-config-norms-cluster.mlir).
// CHECK-LABEL: func.func @norm_configs
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 64, vector = 4>} : tensor<16384x1024xf32>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 512, vector = 4>} : tensor<4096x8192xf32>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 256, vector = 8>} : tensor<4096x8192xbf16>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 32, vector = 1>} : tensor<7x33xf32>
// CHECK: kb.reduce {{.*}} {config = #kb.config<threads = 1024, vector = 4>} : tensor<64x32768xf32>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<block = [2], threads = 64, vector = 8>} : tensor<16384x1024xbf16>
func.func @norm_configs(%a: tensor<16384x1024xf32>, %wa: tensor<1024xf32>, %b: tensor<4096x8192xf32>, %c: tensor<4096x8192xbf16>, %wc: tensor<8192xbf16>, %d: tensor<7x33xf32>, %e: tensor<64x32768xf32>, %h: tensor<16384x1024xbf16>)
    -> (tensor<16384x1024xf32>, tensor<4096x8192xf32>, tensor<4096x8192xbf16>, tensor<7x33xf32>, tensor<64x1xf32>, tensor<16384x1024xbf16>) {
  %0 = kb.layer_norm %a, %wa, %wa eps(1.0e-05) : tensor<16384x1024xf32>, tensor<1024xf32>, tensor<1024xf32> -> tensor<16384x1024xf32>
  %1 = kb.layer_norm %b eps(1.0e-05) : tensor<4096x8192xf32> -> tensor<4096x8192xf32>
  %2 = kb.rms_norm %c, %wc eps(1.0e-06) : tensor<4096x8192xbf16>, tensor<8192xbf16> -> tensor<4096x8192xbf16>
  %3 = kb.rms_norm %d eps(1.0e-06) : tensor<7x33xf32> -> tensor<7x33xf32>
  %4 = kb.reduce %e max keepdim : tensor<64x32768xf32> -> tensor<64x1xf32>
  %5 = kb.layer_norm %h eps(1.0e-05) : tensor<16384x1024xbf16> -> tensor<16384x1024xbf16>
  return %0, %1, %2, %3, %4, %5 : tensor<16384x1024xf32>, tensor<4096x8192xf32>, tensor<4096x8192xbf16>, tensor<7x33xf32>, tensor<64x1xf32>, tensor<16384x1024xbf16>
}

// -----

// Rows wider than one block's registers (1024 threads of 32 values): on
// sm_90 a norm's row split over a cluster (kb-select-config-norms-cluster.mlir),
// a reduction's read in loops (strategy "online", RowNormOnline.cpp) by 1024
// threads.
// CHECK-LABEL: func.func @too_wide
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 256, vector = 4, strategy = "cluster", cluster = 8>} : tensor<4x65536xf32>
// CHECK: kb.reduce {{.*}} {config = #kb.config<threads = 1024, vector = 1, strategy = "online">} : tensor<1024x65537xf32>
func.func @too_wide(%x: tensor<4x65536xf32>, %y: tensor<1024x65537xf32>) -> (tensor<4x65536xf32>, tensor<1024xf32>) {
  %0 = kb.layer_norm %x eps(1.0e-05) : tensor<4x65536xf32> -> tensor<4x65536xf32>
  %1 = kb.reduce %y sum : tensor<1024x65537xf32> -> tensor<1024xf32>
  return %0, %1 : tensor<4x65536xf32>, tensor<1024xf32>
}

// -----

func.func @forced_too_few_threads(%x: tensor<4x8192xf32>) -> tensor<4x8192xf32> {
  // expected-error @+1 {{would hold 128 values of each row per thread (row length 8192, 64 threads); at most 64 fit: use more threads}}
  %0 = kb.rms_norm %x eps(1.0e-05) {config = #kb.config<threads = 64>} : tensor<4x8192xf32> -> tensor<4x8192xf32>
  return %0 : tensor<4x8192xf32>
}

// -----

func.func @vector8_f32(%x: tensor<4x1024xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{config asks for vector width 8, which is for kernels whose tensors are all 16-bit (16 bytes an access)}}
  %0 = kb.reduce %x sum {config = #kb.config<vector = 8>} : tensor<4x1024xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @split_refused(%x: tensor<4x8192xf32>) -> tensor<4x8192xf32> {
  // expected-error @+1 {{row reduction config takes threads, vector, block = [rows a block], grid, strategy = "online" and strategy = "cluster" with cluster = 2, 4 or 8 only}}
  %0 = kb.rms_norm %x eps(1.0e-05) {config = #kb.config<strategy = "registers">} : tensor<4x8192xf32> -> tensor<4x8192xf32>
  return %0 : tensor<4x8192xf32>
}

// -----

// Rows of 64 to 128 vectors: one warp a row at four vectors a thread, two
// rows a block (kRowsPerBlockByDefault) where the rows are even: bf16 rows of
// 1024 and 1000 (125 vectors), f32 rows of 512. Not: an odd number of rows,
// rows of 256 vectors (f32 1024: two warps a row), rows of fewer than 64
// vectors (one warp a block already), hand-set threads, or a strategy.
// CHECK-LABEL: func.func @rows_a_block
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<block = [2], threads = 64, vector = 8>} : tensor<16384x1024xbf16>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<block = [2], threads = 64, vector = 8>} : tensor<1000x1000xbf16>
// CHECK: kb.reduce {{.*}} {config = #kb.config<block = [2], threads = 64, vector = 4>} : tensor<64x512xf32>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 64, vector = 8>} : tensor<7x1024xbf16>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 64, vector = 4>} : tensor<64x1024xf32>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 32, vector = 8>} : tensor<64x256xbf16>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 64, vector = 8>} : tensor<16384x1024xbf16>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<block = [4], threads = 128, vector = 8>} : tensor<16384x1024xbf16>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 1024, vector = 8, strategy = "online">} : tensor<16384x1024xbf16>
func.func @rows_a_block(%a: tensor<16384x1024xbf16>, %b: tensor<1000x1000xbf16>, %c: tensor<64x512xf32>, %d: tensor<7x1024xbf16>, %e: tensor<64x1024xf32>, %f: tensor<64x256xbf16>)
    -> (tensor<16384x1024xbf16>, tensor<1000x1000xbf16>, tensor<64xf32>, tensor<7x1024xbf16>, tensor<64x1024xf32>, tensor<64x256xbf16>, tensor<16384x1024xbf16>, tensor<16384x1024xbf16>, tensor<16384x1024xbf16>) {
  %0 = kb.rms_norm %a eps(1.0e-06) : tensor<16384x1024xbf16> -> tensor<16384x1024xbf16>
  %1 = kb.layer_norm %b eps(1.0e-05) : tensor<1000x1000xbf16> -> tensor<1000x1000xbf16>
  %2 = kb.reduce %c sum : tensor<64x512xf32> -> tensor<64xf32>
  %3 = kb.rms_norm %d eps(1.0e-06) : tensor<7x1024xbf16> -> tensor<7x1024xbf16>
  %4 = kb.rms_norm %e eps(1.0e-06) : tensor<64x1024xf32> -> tensor<64x1024xf32>
  %5 = kb.rms_norm %f eps(1.0e-06) : tensor<64x256xbf16> -> tensor<64x256xbf16>
  %6 = kb.rms_norm %a eps(1.0e-06) {config = #kb.config<threads = 64>} : tensor<16384x1024xbf16> -> tensor<16384x1024xbf16>
  %7 = kb.rms_norm %a eps(1.0e-06) {config = #kb.config<block = [4]>} : tensor<16384x1024xbf16> -> tensor<16384x1024xbf16>
  %8 = kb.rms_norm %a eps(1.0e-06) {config = #kb.config<strategy = "online">} : tensor<16384x1024xbf16> -> tensor<16384x1024xbf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<16384x1024xbf16>, tensor<1000x1000xbf16>, tensor<64xf32>, tensor<7x1024xbf16>, tensor<64x1024xf32>, tensor<64x256xbf16>, tensor<16384x1024xbf16>, tensor<16384x1024xbf16>, tensor<16384x1024xbf16>
}

// -----

func.func @rows_a_block_odd(%x: tensor<15x1024xbf16>) -> tensor<15x1024xbf16> {
  // expected-error @+1 {{row reduction block = [2] needs the rows (15) to be a multiple of it}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<block = [2]>} : tensor<15x1024xbf16> -> tensor<15x1024xbf16>
  return %0 : tensor<15x1024xbf16>
}

// -----

func.func @rows_a_block_threads(%x: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  // expected-error @+1 {{row reduction block = [2] holds one row a warp: threads must be 64, not 128}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<block = [2], threads = 128>} : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

// -----

func.func @rows_a_block_strategy(%x: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  // expected-error @+1 {{row reduction block = [rows a block] is for the row in registers, one warp a row; strategy "online" takes one row a block}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<block = [2], strategy = "online">} : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

// -----

func.func @rows_a_block_too_wide(%x: tensor<16x8192xbf16>) -> tensor<16x8192xbf16> {
  // expected-error @+1 {{would hold 256 values of each row per thread (row length 8192, one warp a row, block = [2]); at most 64 fit: leave block out (one row a block)}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<block = [2]>} : tensor<16x8192xbf16> -> tensor<16x8192xbf16>
  return %0 : tensor<16x8192xbf16>
}

// -----

// grid = G: asked for by hand (a persistent grid of warp rows), kept.
// CHECK-LABEL: func.func @persistent
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<block = [2], threads = 64, vector = 8, grid = 4>} : tensor<16x1024xbf16>
func.func @persistent(%x: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<block = [2], grid = 4>} : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

// -----

func.func @persistent_too_many_warps(%x: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  // expected-error @+1 {{row reduction grid = 16 (a persistent grid) takes block = [rows a block], one warp a row, and at most 16 warps (grid x rows a block)}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<block = [2], grid = 16>} : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

// -----

func.func @persistent_one_row_a_block(%x: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  // expected-error @+1 {{row reduction grid = 4 (a persistent grid) takes block = [rows a block], one warp a row, and at most 16 warps (grid x rows a block)}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<grid = 4>} : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

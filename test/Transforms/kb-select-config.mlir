// RUN: kb-opt %s --kb-select-config=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// Softmax: the row in one block's registers up to 32 values per thread of a
// 1024-thread block; wider rows split over the shared memory of up to 64
// ordinary blocks of 512 threads (split_global: the fewest whose parts fit
// in half an SM's shared memory); rows too wide for that take the online
// strategy (two reads). The cluster strategies (split, split_shared) are
// chosen only when asked for. Rows that are not a multiple of 4 long read aligned 16-byte chunks
// (vector = 4) in the registers and split strategies staged in shared
// memory, scalars otherwise.
// CHECK-LABEL: func.func @softmax_strategies
// CHECK: kb.softmax %{{.*}} {config = #kb.config<block = [1], threads = 64, vector = 4, strategy = "registers">} : tensor<32x1024xf32>
// CHECK: kb.softmax %{{.*}} {config = #kb.config<block = [1], threads = 1024, vector = 4, strategy = "registers">} : tensor<8x32768xf32>
// CHECK: kb.softmax %{{.*}} {config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "split_global", cluster = 2>} : tensor<8x32772xf32>
// CHECK: kb.softmax %{{.*}} {config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "split_global", cluster = 16>} : tensor<2x400000xf32>
// CHECK: kb.softmax %{{.*}} {config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "split_global", cluster = 64>} : tensor<2x1000000xf32>
// CHECK: kb.softmax %{{.*}} {config = #kb.config<block = [1], threads = 288, vector = 4, strategy = "registers">} : tensor<3x4099xf32>
// CHECK: kb.softmax %{{.*}} {config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "split_global", cluster = 16>} : tensor<3x400001xf32>
func.func @softmax_strategies(%a: tensor<32x1024xf32>, %b: tensor<8x32768xf32>, %b2: tensor<8x32772xf32>, %c: tensor<2x400000xf32>, %c2: tensor<2x1000000xf32>, %d: tensor<3x4099xf32>, %e: tensor<3x400001xf32>)
    -> (tensor<32x1024xf32>, tensor<8x32768xf32>, tensor<8x32772xf32>, tensor<2x400000xf32>, tensor<2x1000000xf32>, tensor<3x4099xf32>, tensor<3x400001xf32>) {
  %0 = kb.softmax %a : tensor<32x1024xf32>
  %1 = kb.softmax %b : tensor<8x32768xf32>
  %2 = kb.softmax %b2 : tensor<8x32772xf32>
  %3 = kb.softmax %c : tensor<2x400000xf32>
  %4 = kb.softmax %c2 : tensor<2x1000000xf32>
  %5 = kb.softmax %d : tensor<3x4099xf32>
  %6 = kb.softmax %e : tensor<3x400001xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<32x1024xf32>, tensor<8x32768xf32>, tensor<8x32772xf32>, tensor<2x400000xf32>, tensor<2x1000000xf32>, tensor<3x4099xf32>, tensor<3x400001xf32>
}

// -----

// Elementwise: 16-byte accesses when the last dimension allows them.
// CHECK-LABEL: func.func @elementwise_vectors
// CHECK: kb.relu %{{.*}} {config = #kb.config<threads = 256, vector = 4>} : tensor<8x1024xf32>
// CHECK: kb.relu %{{.*}} {config = #kb.config<threads = 256, vector = 2>} : tensor<8x1022xf32>
// CHECK: kb.relu %{{.*}} {config = #kb.config<threads = 256, vector = 1>} : tensor<8x1001xf32>
// Hand-set fields are kept.
// CHECK: kb.exp %{{.*}} {config = #kb.config<threads = 128, vector = 1>} : tensor<8x1024xf32>
func.func @elementwise_vectors(%a: tensor<8x1024xf32>, %b: tensor<8x1022xf32>, %c: tensor<8x1001xf32>)
    -> (tensor<8x1024xf32>, tensor<8x1022xf32>, tensor<8x1001xf32>, tensor<8x1024xf32>) {
  %0 = kb.relu %a : tensor<8x1024xf32>
  %1 = kb.relu %b : tensor<8x1022xf32>
  %2 = kb.relu %c : tensor<8x1001xf32>
  %3 = kb.exp %a {config = #kb.config<threads = 128, vector = 1>} : tensor<8x1024xf32>
  return %0, %1, %2, %3 : tensor<8x1024xf32>, tensor<8x1022xf32>, tensor<8x1001xf32>, tensor<8x1024xf32>
}

// -----

func.func @vector_does_not_divide(%a: tensor<8x1001xf32>) -> tensor<8x1001xf32> {
  // expected-error @+1 {{config asks for vector width 4, which needs the last dimension (1001) to be a multiple of it}}
  %0 = kb.relu %a {config = #kb.config<vector = 4>} : tensor<8x1001xf32>
  return %0 : tensor<8x1001xf32>
}

// -----

func.func @row_too_wide_for_registers(%a: tensor<2x400000xf32>) -> tensor<2x400000xf32> {
  // expected-error @+1 {{softmax strategy 'registers' would hold 392 values of each row per thread (row length 400000, 1024 threads); at most 64 fit: use strategy "online" or more threads}}
  %0 = kb.softmax %a {config = #kb.config<strategy = "registers">} : tensor<2x400000xf32>
  return %0 : tensor<2x400000xf32>
}

// -----

func.func @unaligned_rows_need_registers(%a: tensor<2x4099xf32>) -> tensor<2x4099xf32> {
  // expected-error @+1 {{config asks for vector width 4, which needs the row length (4099) to be a multiple of it}}
  %0 = kb.softmax %a {config = #kb.config<strategy = "online", vector = 4>} : tensor<2x4099xf32>
  return %0 : tensor<2x4099xf32>
}

// -----

func.func @split_over_too_few_blocks(%a: tensor<2x400000xf32>) -> tensor<2x400000xf32> {
  // expected-error @+1 {{softmax strategy 'split' would hold 196 values of each row per thread (row length 400000, 2 blocks of 1024 threads); at most 64 fit: use strategy "online" or more threads or blocks}}
  %0 = kb.softmax %a {config = #kb.config<strategy = "split", cluster = 2>} : tensor<2x400000xf32>
  return %0 : tensor<2x400000xf32>
}

// -----

func.func @split_shared_too_big(%a: tensor<2x1000000xf32>) -> tensor<2x1000000xf32> {
  // expected-error @+1 {{softmax strategy 'split_shared' would stage 250000 bytes of each row per block (row length 1000000, 16 blocks); sm_90 has 232448 per block: use strategy "online" or more blocks}}
  %0 = kb.softmax %a {config = #kb.config<strategy = "split_shared">} : tensor<2x1000000xf32>
  return %0 : tensor<2x1000000xf32>
}

// -----

func.func @rows_per_cluster_must_divide(%a: tensor<4x400000xf32>) -> tensor<4x400000xf32> {
  // expected-error @+1 {{softmax config block = [k] (rows per block or cluster) must be [1], or for an unfused split_shared or split_global softmax a k that divides the 4 rows}}
  %0 = kb.softmax %a {config = #kb.config<strategy = "split_shared", block = [3]>} : tensor<4x400000xf32>
  return %0 : tensor<4x400000xf32>
}

// -----

func.func @cluster_without_split(%a: tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  // expected-error @+1 {{config asks for a cluster of 4 blocks, which only softmax strategies "split", "split_shared" and "split_global", the row kernels' strategy "cluster" and a wgmma_tf32 matmul with TMA (cluster = 2, 4 or 8) use}}
  %0 = kb.softmax %a {config = #kb.config<strategy = "registers", cluster = 4>} : tensor<8x1024xf32>
  return %0 : tensor<8x1024xf32>
}

// -----

func.func @cluster_on_elementwise(%a: tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  // expected-error @+1 {{'kb.relu' op #kb.config field 'cluster' does not apply to an elementwise kernel (kb would ignore it)}}
  %0 = kb.relu %a {config = #kb.config<cluster = 2>} : tensor<8x1024xf32>
  return %0 : tensor<8x1024xf32>
}

// -----

func.func @partial_warp(%a: tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  // expected-error @+1 {{config asks for 100 threads per block; kb needs a multiple of 32 (whole warps)}}
  %0 = kb.relu %a {config = #kb.config<threads = 100>} : tensor<8x1024xf32>
  return %0 : tensor<8x1024xf32>
}

// -----

// Transposes take 64 x 64 tiles (or 32 x 32) split into whole rows.
// CHECK-LABEL: func.func @transpose_default
// CHECK: kb.transpose %{{.*}} {config = #kb.config<block = [64, 64], threads = 256>}
// CHECK: kb.transpose %{{.*}} {config = #kb.config<block = [32, 32], threads = 1024>}
func.func @transpose_default(%a: tensor<100x70xf32>) -> (tensor<70x100xf32>, tensor<70x100xf32>) {
  %0 = kb.transpose %a : tensor<100x70xf32> -> tensor<70x100xf32>
  %1 = kb.transpose %a {config = #kb.config<block = [32, 32], threads = 1024>} : tensor<100x70xf32> -> tensor<70x100xf32>
  return %0, %1 : tensor<70x100xf32>, tensor<70x100xf32>
}

// -----

// A pad (kb-select-mma's, in front of a wgmma matmul whose K % 4 != 0) is a
// copy: 256 threads unless set by hand; it has no tile.
// CHECK-LABEL: func.func @pad_default
// CHECK: kb.pad %{{.*}} multiple(32) {config = #kb.config<threads = 256>}
// CHECK: kb.pad %{{.*}} multiple(32) {config = #kb.config<threads = 512>}
func.func @pad_default(%a: tensor<100x70xf32>) -> (tensor<100x96xf32>, tensor<100x96xf32>) {
  %0 = kb.pad %a multiple(32) : tensor<100x70xf32> -> tensor<100x96xf32>
  %1 = kb.pad %a multiple(32) {config = #kb.config<threads = 512>} : tensor<100x70xf32> -> tensor<100x96xf32>
  return %0, %1 : tensor<100x96xf32>, tensor<100x96xf32>
}

// -----

func.func @pad_block(%a: tensor<100x70xf32>) -> tensor<100x96xf32> {
  // expected-error @+1 {{pad config takes threads only; block does not apply}}
  %0 = kb.pad %a multiple(32) {config = #kb.config<block = [64, 64]>} : tensor<100x70xf32> -> tensor<100x96xf32>
  return %0 : tensor<100x96xf32>
}

// -----

func.func @transpose_tile(%a: tensor<100x70xf32>) -> tensor<70x100xf32> {
  // expected-error @+1 {{transpose config needs block = [64, 64] or [32, 32]}}
  %0 = kb.transpose %a {config = #kb.config<block = [16, 16]>} : tensor<100x70xf32> -> tensor<70x100xf32>
  return %0 : tensor<70x100xf32>
}

// -----

func.func @transpose_threads(%a: tensor<100x70xf32>) -> tensor<70x100xf32> {
  // expected-error @+1 {{transpose config asks for 96 threads; a 64 x 64 tile needs a multiple of 64 that splits its rows evenly}}
  %0 = kb.transpose %a {config = #kb.config<threads = 96>} : tensor<100x70xf32> -> tensor<70x100xf32>
  return %0 : tensor<70x100xf32>
}

// -----

// split_global (asked for): blocks of 512 threads, the fewest blocks per row
// (a power of two) whose parts fit in half an SM's shared memory (two blocks
// per SM): 16 at 400000 columns; one row per group of blocks; more blocks
// per row than a cluster holds are fine. A part that does not
// fit one block's shared memory is an error.
// CHECK-LABEL: func.func @softmax_split_global
// CHECK: {config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "split_global", cluster = 16>} : tensor<8x400000xf32>
// CHECK: {config = #kb.config<block = [1], threads = 256, vector = 4, strategy = "split_global", cluster = 32>} : tensor<3x400001xf32>
func.func @softmax_split_global(%a: tensor<8x400000xf32>, %b: tensor<3x400001xf32>) -> (tensor<8x400000xf32>, tensor<3x400001xf32>) {
  %0 = kb.softmax %a {config = #kb.config<strategy = "split_global">} : tensor<8x400000xf32>
  %1 = kb.softmax %b {config = #kb.config<strategy = "split_global", cluster = 32, threads = 256>} : tensor<3x400001xf32>
  return %0, %1 : tensor<8x400000xf32>, tensor<3x400001xf32>
}

// -----

// A persistent grid for split_global rows of up to 8 blocks with more parts
// than the chip holds at once: shared memory, threads and registers (40 per
// thread estimated) give 3 blocks of 64 KB per SM at 131072 columns (8
// blocks per row): 396 blocks take the 8192 parts from tickets. Not for 16
// blocks per row (measured slower), nor when the parts fit at once (64 x 8
// parts), nor when the config names a grid, nor with block = [k] rows per
// group of blocks. Two stages: a block copies its next part while it stores
// this one.
// CHECK-LABEL: func.func @softmax_persistent
// CHECK: {config = #kb.config<block = [1], threads = 512, vector = 4, stages = 2, strategy = "split_global", cluster = 8, grid = 396>} : tensor<1024x131072xf32>
// CHECK: {config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "split_global", cluster = 16>} : tensor<1024x400000xf32>
// CHECK: {config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "split_global", cluster = 8>} : tensor<32x131072xf32>
// CHECK: {config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "split_global", cluster = 8, grid = 100>} : tensor<1024x131072xf32>
// CHECK: {config = #kb.config<block = [4], threads = 512, vector = 4, strategy = "split_global", cluster = 8>} : tensor<1024x131072xf32>
func.func @softmax_persistent(%a: tensor<1024x131072xf32>, %b: tensor<1024x400000xf32>, %c: tensor<32x131072xf32>)
    -> (tensor<1024x131072xf32>, tensor<1024x400000xf32>, tensor<32x131072xf32>, tensor<1024x131072xf32>, tensor<1024x131072xf32>) {
  %0 = kb.softmax %a : tensor<1024x131072xf32>
  %1 = kb.softmax %b : tensor<1024x400000xf32>
  %2 = kb.softmax %c : tensor<32x131072xf32>
  %3 = kb.softmax %a {config = #kb.config<strategy = "split_global", grid = 100>} : tensor<1024x131072xf32>
  %4 = kb.softmax %a {config = #kb.config<strategy = "split_global", block = [4]>} : tensor<1024x131072xf32>
  return %0, %1, %2, %3, %4 : tensor<1024x131072xf32>, tensor<1024x400000xf32>, tensor<32x131072xf32>, tensor<1024x131072xf32>, tensor<1024x131072xf32>
}

// -----

func.func @softmax_persistent_rows(%a: tensor<1024x131072xf32>) -> tensor<1024x131072xf32> {
  // expected-error @+1 {{softmax config grid = 396 (a persistent grid) takes one row per group of blocks (block = [1]), not 4}}
  %0 = kb.softmax %a {config = #kb.config<strategy = "split_global", block = [4], grid = 396>} : tensor<1024x131072xf32>
  return %0 : tensor<1024x131072xf32>
}

// -----

func.func @softmax_split_global_too_few(%a: tensor<8x400000xf32>) -> tensor<8x400000xf32> {
  // expected-error @+1 {{softmax strategy 'split_global' would stage 800000 bytes of each row per block (row length 400000, 2 blocks)}}
  %0 = kb.softmax %a {config = #kb.config<strategy = "split_global", cluster = 2>} : tensor<8x400000xf32>
  return %0 : tensor<8x400000xf32>
}

// -----

// A kb.fusion written by hand with configs on the ops inside (rather than
// `attributes {config = ...}` on the fusion): the anchor's moves onto the
// fusion and is honoured. (Until 2026-11-30 it stayed inside, unread: the
// kernel took the default config.)
// CHECK-LABEL: func.func @hand_written_fusion
// CHECK: kb.fusion ins(%arg0 : tensor<4x4096xf32>) attributes {config = #kb.config<block = [1], threads = {{[0-9]+}}, vector = 4, strategy = "online">}
// CHECK-NOT: config
func.func @hand_written_fusion(%x: tensor<4x4096xf32>) -> tensor<4x4096xf32> {
  %0 = kb.fusion ins(%x : tensor<4x4096xf32>) {
  ^bb0(%a: tensor<4x4096xf32>):
    %1 = kb.scale %a by 0.125 : tensor<4x4096xf32>
    %2 = kb.softmax %1 {config = #kb.config<strategy = "online">} : tensor<4x4096xf32>
    kb.yield %2 : tensor<4x4096xf32>
  } -> tensor<4x4096xf32>
  return %0 : tensor<4x4096xf32>
}

// -----

// A config on another op inside, which the kernel would not use, is refused
// (it was dropped with a warning until 2026-12-06).
func.func @hand_written_fusion_unused_config(%x: tensor<4x4096xf32>) -> tensor<4x4096xf32> {
  %0 = kb.fusion ins(%x : tensor<4x4096xf32>) {
  ^bb0(%a: tensor<4x4096xf32>):
    // expected-error @+1 {{#kb.config on 'kb.scale' would not be used: it is fused into one kernel with 'kb.softmax'}}
    %1 = kb.scale %a by 0.125 {config = #kb.config<vector = 2>} : tensor<4x4096xf32>
    %2 = kb.softmax %1 {config = #kb.config<strategy = "online">} : tensor<4x4096xf32>
    kb.yield %2 : tensor<4x4096xf32>
  } -> tensor<4x4096xf32>
  return %0 : tensor<4x4096xf32>
}

// -----

// A persistent grid on a softmax is split_global's: with the strategy left
// to kb-select-config (registers, for 8 floats a row) it is refused.
func.func @grid_without_split_global(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{softmax config grid = 264 (a persistent grid) is only for strategy "split_global", not "registers"}}
  %0 = kb.softmax %x {config = #kb.config<grid = 264>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A matmul whose unit is not wgmma (ieee: FFMA) with cluster = 2: refused
// once its unit is known.
func.func @cluster_on_ieee_matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{config asks for a cluster of 2 blocks, which only softmax strategies "split", "split_shared" and "split_global", the row kernels' strategy "cluster" and a wgmma_tf32 matmul with TMA (cluster = 2, 4 or 8) use}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<cluster = 2>} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// 16-bit tensors: 8 values a 16-byte access (an elementwise chain, with
// dropout too: two Philox draws a vector; a softmax whose rows are a
// multiple of 8 long).
// CHECK-LABEL: func.func @half_vectors
// CHECK: kb.gelu {{.*}}vector = 8
// CHECK: kb.softmax {{.*}}vector = 8
// CHECK: kb.dropout {{.*}}vector = 8
func.func @half_vectors(%x: tensor<64x1024xbf16>) -> (tensor<64x1024xbf16>, tensor<64x1024xbf16>) {
  %0 = kb.gelu %x approx(tanh) : tensor<64x1024xbf16>
  %1 = kb.softmax %0 : tensor<64x1024xbf16>
  %2 = kb.dropout %x p(3.000000e-01) seed(7) : tensor<64x1024xbf16>
  return %1, %2 : tensor<64x1024xbf16>, tensor<64x1024xbf16>
}

// -----

func.func @vector8_f32(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  // expected-error @+1 {{config asks for vector width 8, which is for kernels whose tensors are all 16-bit (16 bytes an access)}}
  %0 = kb.relu %x {config = #kb.config<vector = 8>} : tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}

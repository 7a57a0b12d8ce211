// RUN: kb-opt %s --kb-select-config=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s

// kb.attention's config on sm_90a (lib/Transforms/SelectAttentionConfig.cpp).
// The wgmma kernel (AttentionWgmma.cpp) is the default for 16-bit operands
// with D, Dv in {64, 128}, and where the config asks for mma = "wgmma_bf16" /
// "wgmma_f16": BQ = 128 (two consumer warpgroups of 64 rows), schedule =
// "overlap" (each warpgroup's softmax under its own P V) with 384 threads
// (a producer warpgroup) and 3 stages (D = 128: 32 KB of Q + 3 x 64 KB),
// BKV = 128 keys (BQ = 192, three warpgroups, by hand: @b192). Other head dims, and a hand-set block = [64, N], stay on
// mma.sync; 288 threads or 2 stages keep the serial schedule (@kept).
// CHECK-LABEL: func.func @defaults
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<2x4x1000x64xbf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<2x4x1000x128xbf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_f16", schedule = "overlap">} : tensor<8x256x64xf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [64, 64], threads = 128, stages = 3, mma = "mma_sync_tf32">} : tensor<8x128x64xf32>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [64, 64], threads = 128, stages = 3>} : tensor<8x256x32xbf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<2x4x1000x64xbf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [64, 64], threads = 128, stages = 3>} : tensor<2x4x1000x64xbf16>
func.func @defaults(%h: tensor<2x4x1000x64xbf16>, %h2: tensor<2x4x1000x128xbf16>, %f: tensor<8x256x64xf16>, %q: tensor<8x128x64xf32>, %s: tensor<8x256x32xbf16>)
    -> (tensor<2x4x1000x64xbf16>, tensor<2x4x1000x128xbf16>, tensor<8x256x64xf16>, tensor<8x128x64xf32>, tensor<8x256x32xbf16>, tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16>) {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<mma = "wgmma_bf16">} : tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16> -> tensor<2x4x1000x64xbf16>
  %1 = kb.attention %h2, %h2, %h2 scale(1.250000e-01) causal {config = #kb.config<mma = "wgmma_bf16">} : tensor<2x4x1000x128xbf16>, tensor<2x4x1000x128xbf16>, tensor<2x4x1000x128xbf16> -> tensor<2x4x1000x128xbf16>
  %2 = kb.attention %f, %f, %f scale(1.250000e-01) {config = #kb.config<mma = "wgmma_f16">} : tensor<8x256x64xf16>, tensor<8x256x64xf16>, tensor<8x256x64xf16> -> tensor<8x256x64xf16>
  %3 = kb.attention %q, %q, %q scale(1.250000e-01) : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>
  %4 = kb.attention %s, %s, %s scale(1.250000e-01) : tensor<8x256x32xbf16>, tensor<8x256x32xbf16>, tensor<8x256x32xbf16> -> tensor<8x256x32xbf16>
  %5 = kb.attention %h, %h, %h scale(1.250000e-01) : tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16> -> tensor<2x4x1000x64xbf16>
  %6 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [64, 64]>} : tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16> -> tensor<2x4x1000x64xbf16>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x4x1000x64xbf16>, tensor<2x4x1000x128xbf16>, tensor<8x256x64xf16>, tensor<8x128x64xf32>, tensor<8x256x32xbf16>, tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16>
}

// -----

// An explicit wgmma config keeps its key block and stages (with overlap's
// 384 threads); 288 threads or 2 stages keep the serial schedule.
// CHECK-LABEL: func.func @kept
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 64], threads = 384, stages = 4, mma = "wgmma_bf16", schedule = "overlap">}
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 288, stages = 2, mma = "wgmma_bf16">}
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 288, stages = 2, mma = "wgmma_bf16">}
func.func @kept(%h: tensor<8x256x128xbf16>) -> (tensor<8x256x128xbf16>, tensor<8x256x128xbf16>, tensor<8x256x128xbf16>) {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [128, 64], stages = 4, mma = "wgmma_bf16">} : tensor<8x256x128xbf16>, tensor<8x256x128xbf16>, tensor<8x256x128xbf16> -> tensor<8x256x128xbf16>
  %1 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<threads = 288>} : tensor<8x256x128xbf16>, tensor<8x256x128xbf16>, tensor<8x256x128xbf16> -> tensor<8x256x128xbf16>
  %2 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<stages = 2>} : tensor<8x256x128xbf16>, tensor<8x256x128xbf16>, tensor<8x256x128xbf16> -> tensor<8x256x128xbf16>
  return %0, %1, %2 : tensor<8x256x128xbf16>, tensor<8x256x128xbf16>, tensor<8x256x128xbf16>
}

// -----

func.func @wgmma_f32(%q: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  // expected-error @+1 {{'kb.attention' op config asks for mma = "wgmma_bf16" for 'f32' operands; the wgmma attention kernel takes only 16-bit operands}}
  %0 = kb.attention %q, %q, %q scale(1.250000e-01) {config = #kb.config<mma = "wgmma_bf16">} : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>
  return %0 : tensor<8x128x64xf32>
}

// -----

func.func @wgmma_wrong_type(%h: tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16> {
  // expected-error @+1 {{'kb.attention' op config asks for mma = "wgmma_f16" for 'bf16' operands; the wgmma attention kernel multiplies in the operands' type: mma = "wgmma_bf16"}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<mma = "wgmma_f16">} : tensor<8x128x64xbf16>, tensor<8x128x64xbf16>, tensor<8x128x64xbf16> -> tensor<8x128x64xbf16>
  return %0 : tensor<8x128x64xbf16>
}

// -----

func.func @wgmma_head_dim(%h: tensor<8x128x32xbf16>) -> tensor<8x128x32xbf16> {
  // expected-error @+1 {{'kb.attention' op mma = "wgmma_bf16" takes head dims D, Dv of 64 or 128, got D = 32, Dv = 32}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<mma = "wgmma_bf16">} : tensor<8x128x32xbf16>, tensor<8x128x32xbf16>, tensor<8x128x32xbf16> -> tensor<8x128x32xbf16>
  return %0 : tensor<8x128x32xbf16>
}

// -----

func.func @wgmma_block(%h: tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16> {
  // expected-error @+1 {{'kb.attention' op mma = "wgmma_bf16" with block = [64, 64]: BQ must be 128 or 192 (two or three warpgroups of 64 query rows) and BKV 16 to 176 keys, a multiple of 16}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [64, 64], mma = "wgmma_bf16">} : tensor<8x128x64xbf16>, tensor<8x128x64xbf16>, tensor<8x128x64xbf16> -> tensor<8x128x64xbf16>
  return %0 : tensor<8x128x64xbf16>
}

// -----

func.func @wgmma_too_big(%h: tensor<8x256x128xbf16>) -> tensor<8x256x128xbf16> {
  // expected-error @+1 {{'kb.attention' op config needs 296008 bytes of shared memory per block (block = [128, 128], stages = 4, D = 128, Dv = 128, mma = "wgmma_bf16"); sm_90a allows at most}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [128, 128], stages = 4, mma = "wgmma_bf16">} : tensor<8x256x128xbf16>, tensor<8x256x128xbf16>, tensor<8x256x128xbf16> -> tensor<8x256x128xbf16>
  return %0 : tensor<8x256x128xbf16>
}

// -----

// schedule = "pingpong" (the two consumer warpgroups take turns at the
// tensor cores) is kept as written, with the wgmma kernel it asks for: the
// default unit for 16-bit with D = 64 or 128, or an explicit one.
// CHECK-LABEL: func.func @pingpong
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 288, stages = 3, mma = "wgmma_bf16", schedule = "pingpong">} : tensor<16x32x4096x64xbf16>
// CHECK: kb.attention {{.*}} causal {config = #kb.config<block = [128, 128], threads = 288, stages = 2, mma = "wgmma_f16", schedule = "pingpong">} : tensor<8x256x128xf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 288, stages = 3, mma = "wgmma_bf16", schedule = "serial">} : tensor<16x32x4096x64xbf16>
func.func @pingpong(%h: tensor<16x32x4096x64xbf16>, %f: tensor<8x256x128xf16>) -> (tensor<16x32x4096x64xbf16>, tensor<8x256x128xf16>, tensor<16x32x4096x64xbf16>) {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<schedule = "pingpong">} : tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16> -> tensor<16x32x4096x64xbf16>
  %1 = kb.attention %f, %f, %f scale(0.0883883461) causal {config = #kb.config<mma = "wgmma_f16", schedule = "pingpong">} : tensor<8x256x128xf16>, tensor<8x256x128xf16>, tensor<8x256x128xf16> -> tensor<8x256x128xf16>
  %2 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<schedule = "serial">} : tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16> -> tensor<16x32x4096x64xbf16>
  return %0, %1, %2 : tensor<16x32x4096x64xbf16>, tensor<8x256x128xf16>, tensor<16x32x4096x64xbf16>
}

// -----

// The mma.sync kernel has no warpgroups to take turns.
func.func @pingpong_mma_sync(%h: tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16> {
  // expected-error @+1 {{'kb.attention' op schedule = "pingpong" takes turns between the wgmma kernel's two consumer warpgroups: it needs mma = "wgmma_bf16" or "wgmma_f16" (16-bit, sm_90a, D and Dv of 64 or 128)}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [64, 64], schedule = "pingpong">} : tensor<8x128x64xbf16>, tensor<8x128x64xbf16>, tensor<8x128x64xbf16> -> tensor<8x128x64xbf16>
  return %0 : tensor<8x128x64xbf16>
}

// -----

func.func @pingpong_head_dim(%h: tensor<8x128x32xbf16>) -> tensor<8x128x32xbf16> {
  // expected-error @+1 {{'kb.attention' op schedule = "pingpong" takes turns between the wgmma kernel's two consumer warpgroups}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<schedule = "pingpong">} : tensor<8x128x32xbf16>, tensor<8x128x32xbf16>, tensor<8x128x32xbf16> -> tensor<8x128x32xbf16>
  return %0 : tensor<8x128x32xbf16>
}

// -----

// schedule = "overlap" (AttentionWgmma.cpp's buildOverlap): 384 threads (a
// producer warpgroup whose registers the consumers take) and 3 stages at
// D = 128 too (a warpgroup holds two key blocks while it waits on a third);
// at D = 64 and S 4096 two consumer warpgroups too until the three-warpgroup
// kernel's first GPU check (@b192).
// CHECK-LABEL: func.func @overlap
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<16x32x4096x64xbf16>
// CHECK: kb.attention {{.*}} causal {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_f16", schedule = "overlap">} : tensor<8x256x128xf16>
func.func @overlap(%h: tensor<16x32x4096x64xbf16>, %f: tensor<8x256x128xf16>) -> (tensor<16x32x4096x64xbf16>, tensor<8x256x128xf16>) {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<schedule = "overlap">} : tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16> -> tensor<16x32x4096x64xbf16>
  %1 = kb.attention %f, %f, %f scale(0.0883883461) causal {config = #kb.config<mma = "wgmma_f16", schedule = "overlap">} : tensor<8x256x128xf16>, tensor<8x256x128xf16>, tensor<8x256x128xf16> -> tensor<8x256x128xf16>
  return %0, %1 : tensor<16x32x4096x64xbf16>, tensor<8x256x128xf16>
}

// -----

func.func @overlap_mma_sync(%h: tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16> {
  // expected-error @+1 {{'kb.attention' op schedule = "overlap" overlaps a wgmma warpgroup's softmax with its own P V: it needs mma = "wgmma_bf16" or "wgmma_f16"}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [64, 64], schedule = "overlap">} : tensor<8x128x64xbf16>, tensor<8x128x64xbf16>, tensor<8x128x64xbf16> -> tensor<8x128x64xbf16>
  return %0 : tensor<8x128x64xbf16>
}

// -----

func.func @overlap_two_stages(%h: tensor<8x256x128xbf16>) -> tensor<8x256x128xbf16> {
  // expected-error @+1 {{'kb.attention' op stages = 2 with schedule = "overlap": a warpgroup holds two key blocks while it waits on a third, so the ring needs 3 or 4 tiles}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<stages = 2, mma = "wgmma_bf16", schedule = "overlap">} : tensor<8x256x128xbf16>, tensor<8x256x128xbf16>, tensor<8x256x128xbf16> -> tensor<8x256x128xbf16>
  return %0 : tensor<8x256x128xbf16>
}

// -----

func.func @overlap_threads(%h: tensor<8x256x64xbf16>) -> tensor<8x256x64xbf16> {
  // expected-error @+1 {{'kb.attention' op mma = "wgmma_bf16" with threads = 288: the kernel runs 384 threads with schedule = "overlap" (two consumer warpgroups and a producer warpgroup)}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<threads = 288, mma = "wgmma_bf16", schedule = "overlap">} : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>, tensor<8x256x64xbf16> -> tensor<8x256x64xbf16>
  return %0 : tensor<8x256x64xbf16>
}

// -----

// Three consumer warpgroups (block = [192, BKV], 512 threads, overlap only):
// not a default until the kernel's first GPU check
// (kAttentionWgmma192ByDefault; its rule, once on: 16-bit D = Dv = 64, not
// causal, no mask, where 192-row blocks pad Sq to at most 1/16 more rows);
// an explicit block = [192, N] or threads = 512 asks for it at any Sq,
// causal too (@b192_causal).
// CHECK-LABEL: func.func @b192
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<16x32x4096x64xbf16>
// CHECK: kb.attention {{.*}} causal {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_f16", schedule = "overlap">} : tensor<2x8x8192x64xf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<16x32x1024x64xbf16>
// CHECK: kb.attention {{.*}} mask(%{{.*}}) {{.*}} {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<16x32x4096x64xbf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 288, stages = 2, mma = "wgmma_bf16">} : tensor<16x32x4096x64xbf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<16x32x4096x64xbf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [192, 64], threads = 512, stages = 4, mma = "wgmma_bf16", schedule = "overlap">} : tensor<16x32x1024x64xbf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [192, 128], threads = 512, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<16x32x1024x64xbf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<2x2x4096x128xbf16>
func.func @b192(%h: tensor<16x32x4096x64xbf16>, %f: tensor<2x8x8192x64xf16>, %s: tensor<16x32x1024x64xbf16>, %m: tensor<4096x4096xbf16>, %d: tensor<2x2x4096x128xbf16>)
    -> (tensor<16x32x4096x64xbf16>, tensor<2x8x8192x64xf16>, tensor<16x32x1024x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x1024x64xbf16>, tensor<16x32x1024x64xbf16>, tensor<2x2x4096x128xbf16>) {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) : tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16> -> tensor<16x32x4096x64xbf16>
  %1 = kb.attention %f, %f, %f scale(1.250000e-01) causal : tensor<2x8x8192x64xf16>, tensor<2x8x8192x64xf16>, tensor<2x8x8192x64xf16> -> tensor<2x8x8192x64xf16>
  %2 = kb.attention %s, %s, %s scale(1.250000e-01) : tensor<16x32x1024x64xbf16>, tensor<16x32x1024x64xbf16>, tensor<16x32x1024x64xbf16> -> tensor<16x32x1024x64xbf16>
  %3 = kb.attention %h, %h, %h mask(%m) scale(1.250000e-01) : tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<4096x4096xbf16> -> tensor<16x32x4096x64xbf16>
  %4 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<stages = 2>} : tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16> -> tensor<16x32x4096x64xbf16>
  %5 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<threads = 384>} : tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16> -> tensor<16x32x4096x64xbf16>
  %6 = kb.attention %s, %s, %s scale(1.250000e-01) {config = #kb.config<block = [192, 64], stages = 4>} : tensor<16x32x1024x64xbf16>, tensor<16x32x1024x64xbf16>, tensor<16x32x1024x64xbf16> -> tensor<16x32x1024x64xbf16>
  %7 = kb.attention %s, %s, %s scale(1.250000e-01) {config = #kb.config<threads = 512>} : tensor<16x32x1024x64xbf16>, tensor<16x32x1024x64xbf16>, tensor<16x32x1024x64xbf16> -> tensor<16x32x1024x64xbf16>
  %8 = kb.attention %d, %d, %d scale(1.250000e-01) : tensor<2x2x4096x128xbf16>, tensor<2x2x4096x128xbf16>, tensor<2x2x4096x128xbf16> -> tensor<2x2x4096x128xbf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<16x32x4096x64xbf16>, tensor<2x8x8192x64xf16>, tensor<16x32x1024x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x4096x64xbf16>, tensor<16x32x1024x64xbf16>, tensor<16x32x1024x64xbf16>, tensor<2x2x4096x128xbf16>
}

// -----

// Three warpgroups at D = 128: O (64 registers), S (64) and P (32) of each
// do not fit 160 registers.
func.func @b192_head_dim(%h: tensor<8x256x128xbf16>) -> tensor<8x256x128xbf16> {
  // expected-error @+1 {{'kb.attention' op mma = "wgmma_bf16" with block = [192, 128]: three consumer warpgroups keep O, S and P in their 160 registers only at D = Dv = 64, BKV <= 128 and without a mask, got D = 128, Dv = 128}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [192, 128]>} : tensor<8x256x128xbf16>, tensor<8x256x128xbf16>, tensor<8x256x128xbf16> -> tensor<8x256x128xbf16>
  return %0 : tensor<8x256x128xbf16>
}

// -----

func.func @b192_mask(%h: tensor<8x256x64xf16>, %m: tensor<256x256xf16>) -> tensor<8x256x64xf16> {
  // expected-error @+1 {{'kb.attention' op mma = "wgmma_f16" with block = [192, 128]: three consumer warpgroups keep O, S and P in their 160 registers only at D = Dv = 64, BKV <= 128 and without a mask, got D = 64, Dv = 64 with a mask}}
  %0 = kb.attention %h, %h, %h mask(%m) scale(1.250000e-01) {config = #kb.config<block = [192, 128]>} : tensor<8x256x64xf16>, tensor<8x256x64xf16>, tensor<8x256x64xf16>, tensor<256x256xf16> -> tensor<8x256x64xf16>
  return %0 : tensor<8x256x64xf16>
}

// -----

func.func @b192_wide_keys(%h: tensor<8x256x64xbf16>) -> tensor<8x256x64xbf16> {
  // expected-error @+1 {{'kb.attention' op mma = "wgmma_bf16" with block = [192, 144]: three consumer warpgroups keep O, S and P in their 160 registers only at D = Dv = 64, BKV <= 128 and without a mask, got D = 64, Dv = 64}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [192, 144]>} : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>, tensor<8x256x64xbf16> -> tensor<8x256x64xbf16>
  return %0 : tensor<8x256x64xbf16>
}

// -----

func.func @b192_pingpong(%h: tensor<8x256x64xbf16>) -> tensor<8x256x64xbf16> {
  // expected-error @+1 {{'kb.attention' op mma = "wgmma_bf16" with block = [192, 128]: three consumer warpgroups run schedule = "overlap" only (ping-pong takes turns between two; the serial schedule's 416 threads leave 128 registers a thread)}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [192, 128], schedule = "pingpong">} : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>, tensor<8x256x64xbf16> -> tensor<8x256x64xbf16>
  return %0 : tensor<8x256x64xbf16>
}

// -----

// Two stages keep the serial schedule, which three warpgroups do not run.
func.func @b192_serial(%h: tensor<8x256x64xbf16>) -> tensor<8x256x64xbf16> {
  // expected-error @+1 {{'kb.attention' op mma = "wgmma_bf16" with block = [192, 128]: three consumer warpgroups run schedule = "overlap" only}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [192, 128], stages = 2>} : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>, tensor<8x256x64xbf16> -> tensor<8x256x64xbf16>
  return %0 : tensor<8x256x64xbf16>
}

// -----

func.func @b192_threads(%h: tensor<8x256x64xbf16>) -> tensor<8x256x64xbf16> {
  // expected-error @+1 {{'kb.attention' op mma = "wgmma_bf16" with threads = 384: the kernel runs 512 threads with schedule = "overlap" (three consumer warpgroups and a producer warpgroup)}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [192, 128], threads = 384, mma = "wgmma_bf16", schedule = "overlap">} : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>, tensor<8x256x64xbf16> -> tensor<8x256x64xbf16>
  return %0 : tensor<8x256x64xbf16>
}

// -----

// Causal: two warpgroups unless the config asks for three; f16 at S 8192
// not causal: two too while kAttentionWgmma192ByDefault is off.
// CHECK-LABEL: func.func @b192_causal
// CHECK: kb.attention {{.*}} causal {config = #kb.config<block = [192, 128], threads = 512, stages = 3, mma = "wgmma_f16", schedule = "overlap">} : tensor<2x8x8192x64xf16>
// CHECK: kb.attention {{.*}} {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_f16", schedule = "overlap">} : tensor<2x8x8192x64xf16>
func.func @b192_causal(%f: tensor<2x8x8192x64xf16>) -> (tensor<2x8x8192x64xf16>, tensor<2x8x8192x64xf16>) {
  %0 = kb.attention %f, %f, %f scale(1.250000e-01) causal {config = #kb.config<block = [192, 128]>} : tensor<2x8x8192x64xf16>, tensor<2x8x8192x64xf16>, tensor<2x8x8192x64xf16> -> tensor<2x8x8192x64xf16>
  %1 = kb.attention %f, %f, %f scale(1.250000e-01) : tensor<2x8x8192x64xf16>, tensor<2x8x8192x64xf16>, tensor<2x8x8192x64xf16> -> tensor<2x8x8192x64xf16>
  return %0, %1 : tensor<2x8x8192x64xf16>, tensor<2x8x8192x64xf16>
}

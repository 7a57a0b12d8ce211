// RUN: kb-opt %s --kb-select-config=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// The row kernels' strategy "cluster": rows that one block's registers do not
// hold (more than 1024 threads of 32 values) but a cluster of 2, 4 or 8
// blocks does, split into whole vectors. The fewest blocks whose parts are at
// most 32 KB (8192 f32, 16384 16-bit values), else the most that fit; each
// block's threads eight vectors a thread of its part (sm_80, without
// clusters: kb-select-config-norms-cluster-sm80.mlir). The default for the
// norms (@default below); a row reduction gets it where asked for by
// strategy = "cluster"; a row no cluster holds stays online.
// CHECK-LABEL: func.func @wide_rows
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 256, vector = 4, strategy = "cluster", cluster = 8>} : tensor<1024x65536xf32>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 256, vector = 4, strategy = "cluster", cluster = 8>} : tensor<1024x65536xf32>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 256, vector = 8, strategy = "cluster", cluster = 4>} : tensor<1024x65536xbf16>
// CHECK: kb.reduce {{.*}} {config = #kb.config<threads = 256, vector = 4, strategy = "cluster", cluster = 8>} : tensor<1024x65536xf32>
// CHECK: kb.reduce {{.*}} {config = #kb.config<threads = 1024, vector = 4, strategy = "cluster", cluster = 8>} : tensor<8x262144xf32>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 1024, vector = 4, strategy = "online">} : tensor<4x524288xf32>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 256, vector = 4, strategy = "cluster", cluster = 8>} : tensor<16x40000xf32>
func.func @wide_rows(%a: tensor<1024x65536xf32>, %w: tensor<65536xf32>, %h: tensor<1024x65536xbf16>, %wh: tensor<65536xbf16>, %e: tensor<8x262144xf32>, %f: tensor<4x524288xf32>, %g: tensor<16x40000xf32>)
    -> (tensor<1024x65536xf32>, tensor<1024x65536xf32>, tensor<1024x65536xbf16>, tensor<1024xf32>, tensor<8xf32>, tensor<4x524288xf32>, tensor<16x40000xf32>) {
  %0 = kb.layer_norm %a, %w, %w eps(1.0e-05) {config = #kb.config<strategy = "cluster">} : tensor<1024x65536xf32>, tensor<65536xf32>, tensor<65536xf32> -> tensor<1024x65536xf32>
  %1 = kb.rms_norm %a, %w eps(1.0e-06) {config = #kb.config<strategy = "cluster">} : tensor<1024x65536xf32>, tensor<65536xf32> -> tensor<1024x65536xf32>
  %2 = kb.rms_norm %h, %wh eps(1.0e-06) {config = #kb.config<strategy = "cluster">} : tensor<1024x65536xbf16>, tensor<65536xbf16> -> tensor<1024x65536xbf16>
  %3 = kb.reduce %a sum {config = #kb.config<strategy = "cluster">} : tensor<1024x65536xf32> -> tensor<1024xf32>
  %4 = kb.reduce %e max {config = #kb.config<strategy = "cluster">} : tensor<8x262144xf32> -> tensor<8xf32>
  %5 = kb.rms_norm %f eps(1.0e-06) : tensor<4x524288xf32> -> tensor<4x524288xf32>
  %6 = kb.layer_norm %g eps(1.0e-05) {config = #kb.config<strategy = "cluster">} : tensor<16x40000xf32> -> tensor<16x40000xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<1024x65536xf32>, tensor<1024x65536xf32>, tensor<1024x65536xbf16>, tensor<1024xf32>, tensor<8xf32>, tensor<4x524288xf32>, tensor<16x40000xf32>
}

// -----

// A fused residual add in front of the norm: the fusion takes the norm's
// strategy too.
// CHECK-LABEL: func.func @fused
// CHECK: kb.fusion
// CHECK-SAME: strategy = "cluster", cluster = 8
func.func @fused(%x: tensor<1024x65536xf32>, %r: tensor<1024x65536xf32>, %w: tensor<65536xf32>) -> tensor<1024x65536xf32> {
  %0 = kb.fusion ins(%x, %r, %w : tensor<1024x65536xf32>, tensor<1024x65536xf32>, tensor<65536xf32>) attributes {config = #kb.config<strategy = "cluster">} {
  ^bb0(%a: tensor<1024x65536xf32>, %b: tensor<1024x65536xf32>, %c: tensor<65536xf32>):
    %1 = kb.add %a, %b : tensor<1024x65536xf32>
    %2 = kb.layer_norm %1, %c, %c eps(1.0e-05) : tensor<1024x65536xf32>, tensor<65536xf32>, tensor<65536xf32> -> tensor<1024x65536xf32>
    kb.yield %2 : tensor<1024x65536xf32>
  } -> tensor<1024x65536xf32>
  return %0 : tensor<1024x65536xf32>
}

// -----

// Not asked for: a norm gets the cluster (kRowClusterByDefault: online
// reads its row twice), a row sum stays online (it reads its row once
// either way, and was slower in clusters).
// CHECK-LABEL: func.func @default
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 256, vector = 4, strategy = "cluster", cluster = 8>} : tensor<1024x65536xf32>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 256, vector = 8, strategy = "cluster", cluster = 4>} : tensor<256x65536xbf16>
// CHECK: kb.reduce {{.*}} {config = #kb.config<threads = 1024, vector = 4, strategy = "online">} : tensor<1024x65536xf32>
func.func @default(%a: tensor<1024x65536xf32>, %w: tensor<65536xf32>, %h: tensor<256x65536xbf16>) -> (tensor<1024x65536xf32>, tensor<256x65536xbf16>, tensor<1024xf32>) {
  %0 = kb.rms_norm %a, %w eps(1.0e-06) : tensor<1024x65536xf32>, tensor<65536xf32> -> tensor<1024x65536xf32>
  %1 = kb.layer_norm %h eps(1.0e-05) : tensor<256x65536xbf16> -> tensor<256x65536xbf16>
  %2 = kb.reduce %a sum : tensor<1024x65536xf32> -> tensor<1024xf32>
  return %0, %1, %2 : tensor<1024x65536xf32>, tensor<256x65536xbf16>, tensor<1024xf32>
}

// -----

// Rows that fill the chip (at least one a multiprocessor, 132 on sm_90) and
// whose rows in flight, one a multiprocessor, fit a quarter of L2
// (kOnlineRowsInFlightBytes, 12.5 MB): online, whose second and third reads
// of a row hit L2. bf16 rows of 40000 (132 x 80 KB = 10.6 MB): online from
// 256 rows on; f32 rows of 40000 (21 MB) and bf16 rows of 65536 (16.9 MB)
// keep the cluster, as do 128 f32 rows of 40000 (fewer rows than
// multiprocessors) and 131 bf16 rows of 40000.
// CHECK-LABEL: func.func @online_in_l2
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 1024, vector = 8, strategy = "online">} : tensor<256x40000xbf16>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 1024, vector = 8, strategy = "online">} : tensor<512x40000xbf16>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 256, vector = 8, strategy = "cluster", cluster = 4>} : tensor<131x40000xbf16>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 256, vector = 4, strategy = "cluster", cluster = 8>} : tensor<256x40000xf32>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 256, vector = 4, strategy = "cluster", cluster = 8>} : tensor<128x40000xf32>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 256, vector = 8, strategy = "cluster", cluster = 4>} : tensor<1024x65536xbf16>
func.func @online_in_l2(%a: tensor<256x40000xbf16>, %b: tensor<512x40000xbf16>, %c: tensor<131x40000xbf16>, %d: tensor<256x40000xf32>, %e: tensor<128x40000xf32>, %f: tensor<1024x65536xbf16>)
    -> (tensor<256x40000xbf16>, tensor<512x40000xbf16>, tensor<131x40000xbf16>, tensor<256x40000xf32>, tensor<128x40000xf32>, tensor<1024x65536xbf16>) {
  %0 = kb.layer_norm %a eps(1.0e-05) : tensor<256x40000xbf16> -> tensor<256x40000xbf16>
  %1 = kb.layer_norm %b eps(1.0e-05) : tensor<512x40000xbf16> -> tensor<512x40000xbf16>
  %2 = kb.layer_norm %c eps(1.0e-05) : tensor<131x40000xbf16> -> tensor<131x40000xbf16>
  %3 = kb.layer_norm %d eps(1.0e-05) : tensor<256x40000xf32> -> tensor<256x40000xf32>
  %4 = kb.layer_norm %e eps(1.0e-05) : tensor<128x40000xf32> -> tensor<128x40000xf32>
  %5 = kb.rms_norm %f eps(1.0e-06) : tensor<1024x65536xbf16> -> tensor<1024x65536xbf16>
  return %0, %1, %2, %3, %4, %5 : tensor<256x40000xbf16>, tensor<512x40000xbf16>, tensor<131x40000xbf16>, tensor<256x40000xf32>, tensor<128x40000xf32>, tensor<1024x65536xbf16>
}

// -----

// Hand-set: the cluster kept, the threads chosen for its part.
// CHECK-LABEL: func.func @forced
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 64, vector = 4, strategy = "cluster", cluster = 2>} : tensor<64x4096xf32>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 1024, vector = 4, strategy = "cluster", cluster = 8>} : tensor<4x65536xf32>
func.func @forced(%x: tensor<64x4096xf32>, %y: tensor<4x65536xf32>) -> (tensor<64x4096xf32>, tensor<4x65536xf32>) {
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<strategy = "cluster", cluster = 2>} : tensor<64x4096xf32> -> tensor<64x4096xf32>
  %1 = kb.layer_norm %y eps(1.0e-05) {config = #kb.config<threads = 1024, strategy = "cluster", cluster = 8>} : tensor<4x65536xf32> -> tensor<4x65536xf32>
  return %0, %1 : tensor<64x4096xf32>, tensor<4x65536xf32>
}

// -----

func.func @cluster_too_large(%x: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  // expected-error @+1 {{row reduction strategy "cluster" splits a row over 2, 4 or 8 blocks, not 16}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<strategy = "cluster", cluster = 16>} : tensor<4x65536xf32> -> tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}

// -----

func.func @cluster_not_power_of_two(%x: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  // expected-error @+1 {{row reduction strategy "cluster" splits a row over 2, 4 or 8 blocks, not 3}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<strategy = "cluster", cluster = 3>} : tensor<4x65536xf32> -> tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}

// -----

func.func @parts_not_whole_vectors(%x: tensor<4x40004xf32>) -> tensor<4x40004xf32> {
  // expected-error @+1 {{row reduction strategy "cluster" with cluster = 8 and vector 4 needs the row length (40004) to split into whole vectors a block}}
  %0 = kb.layer_norm %x eps(1.0e-05) {config = #kb.config<strategy = "cluster", cluster = 8>} : tensor<4x40004xf32> -> tensor<4x40004xf32>
  return %0 : tensor<4x40004xf32>
}

// -----

func.func @cluster_without_strategy(%x: tensor<4x65536xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{row reduction config takes threads, vector, block = [rows a block], grid, strategy = "online" and strategy = "cluster" with cluster = 2, 4 or 8 only}}
  %0 = kb.reduce %x sum {config = #kb.config<cluster = 8>} : tensor<4x65536xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @part_too_wide(%x: tensor<4x1048576xf32>) -> tensor<4x1048576xf32> {
  // expected-error @+1 {{would hold 128 values of each row per thread (row length 1048576, 8 blocks of 1024 threads); at most 64 fit: use strategy "online"}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<strategy = "cluster">} : tensor<4x1048576xf32> -> tensor<4x1048576xf32>
  return %0 : tensor<4x1048576xf32>
}

// -----

func.func @softmax_cluster(%x: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  // expected-error @+1 {{strategy "cluster" is the row kernels' (norms, row reductions); a softmax splits a row over a cluster with "split" or "split_shared"}}
  %0 = kb.softmax %x {config = #kb.config<strategy = "cluster", cluster = 4>} : tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}

// -----

func.func @part_too_wide_threads(%x: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  // expected-error @+1 {{would hold 512 values of each row per thread (row length 65536, 4 blocks of 32 threads); at most 64 fit: use strategy "online" or more threads or a larger cluster}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<threads = 32, strategy = "cluster", cluster = 4>} : tensor<4x65536xf32> -> tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}

// RUN: kb-opt %s --kb-select-config=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// Row reductions and norms: one block a row, the row in registers. The
// vector is 8 for 16-bit rows a multiple of 8 long, else the widest that
// divides the row; about four vectors a thread, a power of two of threads
// from 64 (32 for rows of fewer than 64 vectors) to 1024. Rows wider than 1024 threads of 32 values take
// strategy "online" (the row read in loops; "cluster" where asked for:
// kb-select-config-norms-cluster.mlir).
// CHECK-LABEL: func.func @norm_configs
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 64, vector = 4>} : tensor<16384x1024xf32>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 512, vector = 4>} : tensor<4096x8192xf32>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 256, vector = 8>} : tensor<4096x8192xbf16>
// CHECK: kb.rms_norm {{.*}} {config = #kb.config<threads = 32, vector = 1>} : tensor<7x33xf32>
// CHECK: kb.reduce {{.*}} {config = #kb.config<threads = 1024, vector = 4>} : tensor<64x32768xf32>
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 64, vector = 8>} : tensor<16384x1024xbf16>
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
  // expected-error @+1 {{row reduction config takes threads, vector, strategy = "online" and strategy = "cluster" with cluster = 2, 4 or 8 only}}
  %0 = kb.rms_norm %x eps(1.0e-05) {config = #kb.config<strategy = "registers">} : tensor<4x8192xf32> -> tensor<4x8192xf32>
  return %0 : tensor<4x8192xf32>
}

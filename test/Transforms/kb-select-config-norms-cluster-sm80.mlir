// RUN: kb-opt %s --kb-select-config=chip=sm_80 -split-input-file -verify-diagnostics | FileCheck %s

// sm_80 has no thread-block clusters: rows too wide for one block's
// registers are read in loops (strategy "online"), and a hand-set "cluster"
// is refused.
// CHECK-LABEL: func.func @wide_rows
// CHECK: kb.layer_norm {{.*}} {config = #kb.config<threads = 1024, vector = 4, strategy = "online">} : tensor<1024x65536xf32>
// CHECK: kb.reduce {{.*}} {config = #kb.config<threads = 1024, vector = 4, strategy = "online">} : tensor<1024x65536xf32>
func.func @wide_rows(%a: tensor<1024x65536xf32>, %w: tensor<65536xf32>) -> (tensor<1024x65536xf32>, tensor<1024xf32>) {
  %0 = kb.layer_norm %a, %w, %w eps(1.0e-05) : tensor<1024x65536xf32>, tensor<65536xf32>, tensor<65536xf32> -> tensor<1024x65536xf32>
  %1 = kb.reduce %a sum : tensor<1024x65536xf32> -> tensor<1024xf32>
  return %0, %1 : tensor<1024x65536xf32>, tensor<1024xf32>
}

// -----

func.func @forced_cluster(%x: tensor<64x65536xf32>) -> tensor<64x65536xf32> {
  // expected-error @+1 {{row reduction strategy "cluster" needs thread-block clusters, which sm_80 does not have}}
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<strategy = "cluster", cluster = 8>} : tensor<64x65536xf32> -> tensor<64x65536xf32>
  return %0 : tensor<64x65536xf32>
}

// RUN: kb-opt %s --kb-select-config=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// kb.log_softmax takes softmax's decisions, but only the strategies built
// for it: "registers" where the row fits one block's registers, else
// "online" (a softmax of 1024x65536 would take split_global); rows not a
// multiple of 4 long read aligned chunks with vector 4 (unfused).
// CHECK-LABEL: func.func @log_softmax_configs
// CHECK: kb.log_softmax %{{.*}} {config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "registers">} : tensor<4096x8192xf32>
// CHECK: kb.log_softmax %{{.*}} {config = #kb.config<block = [1], threads = 1024, vector = 4, strategy = "online">} : tensor<1024x65536xf32>
// CHECK: kb.softmax %{{.*}} {config = #kb.config<{{.*}}strategy = "split_global"{{.*}}>} : tensor<1024x65536xf32>
// CHECK: kb.log_softmax %{{.*}} {config = #kb.config<block = [1], threads = 64, vector = 4, strategy = "registers">} : tensor<1000x1001xf32>
func.func @log_softmax_configs(%a: tensor<4096x8192xf32>, %b: tensor<1024x65536xf32>, %c: tensor<1000x1001xf32>)
    -> (tensor<4096x8192xf32>, tensor<1024x65536xf32>, tensor<1024x65536xf32>, tensor<1000x1001xf32>) {
  %0 = kb.log_softmax %a : tensor<4096x8192xf32>
  %1 = kb.log_softmax %b : tensor<1024x65536xf32>
  %2 = kb.softmax %b : tensor<1024x65536xf32>
  %3 = kb.log_softmax %c : tensor<1000x1001xf32>
  return %0, %1, %2, %3 : tensor<4096x8192xf32>, tensor<1024x65536xf32>, tensor<1024x65536xf32>, tensor<1000x1001xf32>
}

// -----

func.func @split_refused(%x: tensor<64x65536xf32>) -> tensor<64x65536xf32> {
  // expected-error @+1 {{log_softmax is built with strategy "registers" or "online", not "split_global"}}
  %0 = kb.log_softmax %x {config = #kb.config<strategy = "split_global", cluster = 4>} : tensor<64x65536xf32>
  return %0 : tensor<64x65536xf32>
}

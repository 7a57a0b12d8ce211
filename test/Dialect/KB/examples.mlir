// Every example parses, verifies and round-trips through its printed form.
// RUN: kb-opt %kb_src/examples/bias_gelu_dropout.mlir | kb-opt | FileCheck %s --check-prefix=BGD
// RUN: kb-opt %kb_src/examples/softmax.mlir | kb-opt | FileCheck %s --check-prefix=SOFTMAX
// RUN: kb-opt %kb_src/examples/matmul.mlir | kb-opt | FileCheck %s --check-prefix=MATMUL
// RUN: kb-opt %kb_src/examples/matmul_awkward.mlir | kb-opt | FileCheck %s --check-prefix=AWKWARD
// BGD: kb.bias_add
// BGD: kb.gelu %{{.*}} approx(tanh)
// BGD: kb.dropout %{{.*}} p(3.000000e-01) seed(42)
// SOFTMAX: kb.softmax %{{.*}} : tensor<8192x32768xf32>
// MATMUL: kb.matmul %{{.*}}, %{{.*}} precision(tf32) : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
// AWKWARD: kb.matmul %{{.*}}, %{{.*}} precision(ieee) : tensor<1000x1500xf32>, tensor<1500x700xf32> -> tensor<1000x700xf32>
// AWKWARD: kb.softmax %{{.*}} : tensor<1000x700xf32>

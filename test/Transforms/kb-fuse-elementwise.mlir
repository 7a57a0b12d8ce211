// RUN: kb-opt %s --kb-fuse-elementwise -split-input-file | FileCheck %s
// RUN: kb-opt %s --fuse-elementwise -split-input-file | FileCheck %s
// `fuse-elementwise` inside --pass-pipeline, nested in func.func or on the module:
// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(fuse-elementwise))" -split-input-file | FileCheck %s
// RUN: kb-opt %s --pass-pipeline="builtin.module(fuse-elementwise)" -split-input-file | FileCheck %s
// A config the fused kernel would not use: kb-fuse-elementwise-errors.mlir.

// Bias + GELU + dropout: three kernels become one kb.fusion.
// CHECK-LABEL: func.func @bias_gelu_dropout
// CHECK-SAME: (%[[X:.+]]: tensor<64x128xf32>, %[[B:.+]]: tensor<128xf32>)
// CHECK: %[[F:.+]] = kb.fusion ins(%[[X]], %[[B]] : tensor<64x128xf32>, tensor<128xf32>) {
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<64x128xf32>, %[[A1:.+]]: tensor<128xf32>):
// CHECK-NEXT: %[[S:.+]] = kb.bias_add %[[A0]], %[[A1]]
// CHECK-NEXT: %[[G:.+]] = kb.gelu %[[S]]
// CHECK-NEXT: %[[D:.+]] = kb.dropout %[[G]]
// CHECK-NEXT: kb.yield %[[D]]
// CHECK: return %[[F]]
func.func @bias_gelu_dropout(%x: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %0 = kb.bias_add %x, %b : tensor<64x128xf32>, tensor<128xf32> -> tensor<64x128xf32>
  %1 = kb.gelu %0 approx(tanh) : tensor<64x128xf32>
  %2 = kb.dropout %1 p(0.3) seed(42) : tensor<64x128xf32>
  return %2 : tensor<64x128xf32>
}

// -----

// Negative: an intermediate used outside the chain ends the chain, so no
// kernel recomputes it. %0 is returned, so it stays its own kernel.
// CHECK-LABEL: func.func @shared_intermediate
// CHECK: %[[E:.+]] = kb.exp
// CHECK: %[[F:.+]] = kb.fusion ins(%[[E]] : tensor<8x8xf32>)
// CHECK: kb.relu
// CHECK: kb.scale
// CHECK: return %[[E]], %[[F]]
func.func @shared_intermediate(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = kb.exp %x : tensor<8x8xf32>
  %1 = kb.relu %0 : tensor<8x8xf32>
  %2 = kb.scale %1 by 2.0 : tensor<8x8xf32>
  return %0, %2 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Negative: a bias vector computed by an elementwise op has another shape
// (another iteration space), so it is not pulled into the 2-D chain.
// CHECK-LABEL: func.func @broadcast_does_not_fit
// CHECK: %[[R:.+]] = kb.relu %{{.*}} : tensor<16xf32>
// CHECK: kb.fusion ins(%{{.*}}, %[[R]] : tensor<4x16xf32>, tensor<16xf32>)
func.func @broadcast_does_not_fit(%x: tensor<4x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %r = kb.relu %b : tensor<16xf32>
  %0 = kb.bias_add %x, %r : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %1 = kb.tanh %0 : tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// Negative: softmax and matmul are not elementwise; a lone elementwise op
// needs no fusion.
// CHECK-LABEL: func.func @not_elementwise
// CHECK-NOT: kb.fusion
// CHECK: kb.matmul
// CHECK: kb.softmax
// CHECK: kb.relu
func.func @not_elementwise(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = kb.matmul %a, %a precision(ieee) : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %1 = kb.softmax %0 : tensor<8x8xf32>
  %2 = kb.relu %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}

// -----

// A diamond: both branches feed only the final op, so all four fuse.
// CHECK-LABEL: func.func @diamond
// CHECK: kb.fusion ins(%{{.*}} : tensor<8x8xf32>)
// CHECK-COUNT-4: kb.{{exp|sigmoid|add|mul}}
// CHECK: kb.yield
// CHECK-NOT: kb.fusion
func.func @diamond(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = kb.exp %x : tensor<8x8xf32>
  %1 = kb.sigmoid %0 : tensor<8x8xf32>
  %2 = kb.add %0, %1 : tensor<8x8xf32>
  %3 = kb.mul %2, %x : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}

// -----

// A matmul whose result only the chain reads becomes the fusion's anchor:
// bias + GELU run as its epilogue, on the accumulators.
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK-SAME: (%[[A:.+]]: tensor<64x32xf32>, %[[B:.+]]: tensor<32x16xf32>, %[[V:.+]]: tensor<16xf32>)
// CHECK: kb.fusion ins(%[[A]], %[[B]], %[[V]] : tensor<64x32xf32>, tensor<32x16xf32>, tensor<16xf32>)
// CHECK: kb.matmul
// CHECK-NEXT: kb.bias_add
// CHECK-NEXT: kb.gelu
// CHECK-NEXT: kb.yield
func.func @matmul_epilogue(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>, %v: tensor<16xf32>) -> tensor<64x16xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  %1 = kb.bias_add %0, %v : tensor<64x16xf32>, tensor<16xf32> -> tensor<64x16xf32>
  %2 = kb.gelu %1 approx(tanh) : tensor<64x16xf32>
  return %2 : tensor<64x16xf32>
}

// -----

// The ops with a constant fuse like the others: MinGPT's GELU written out,
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), and a swish and a leaky
// ReLU, become the matmul's epilogue.
// CHECK-LABEL: func.func @matmul_constants_epilogue
// CHECK: kb.fusion ins
// CHECK: kb.matmul
// CHECK-NEXT: kb.pow {{.*}} exponent(3.000000e+00)
// CHECK-NEXT: kb.scale
// CHECK-NEXT: kb.add
// CHECK-NEXT: kb.scale
// CHECK-NEXT: kb.tanh
// CHECK-NEXT: kb.add_scalar {{.*}} value(1.000000e+00)
// CHECK-NEXT: kb.mul
// CHECK-NEXT: kb.scale
// CHECK-NEXT: kb.silu
// CHECK-NEXT: kb.leaky_relu
// CHECK-NEXT: kb.yield
// CHECK-NOT: kb.fusion
func.func @matmul_constants_epilogue(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  %1 = kb.pow %0 exponent(3.0) : tensor<64x16xf32>
  %2 = kb.scale %1 by 0.044715 : tensor<64x16xf32>
  %3 = kb.add %0, %2 : tensor<64x16xf32>
  %4 = kb.scale %3 by 0.7978845608 : tensor<64x16xf32>
  %5 = kb.tanh %4 : tensor<64x16xf32>
  %6 = kb.add_scalar %5 value(1.0) : tensor<64x16xf32>
  %7 = kb.mul %0, %6 : tensor<64x16xf32>
  %8 = kb.scale %7 by 0.5 : tensor<64x16xf32>
  %9 = kb.silu %8 : tensor<64x16xf32>
  %10 = kb.leaky_relu %9 slope(0.2) : tensor<64x16xf32>
  return %10 : tensor<64x16xf32>
}

// -----

// Negative: the product is also returned, so it must reach memory anyway;
// the matmul stays its own kernel and the chain reads its result.
// CHECK-LABEL: func.func @matmul_result_escapes
// CHECK: %[[M:.+]] = kb.matmul
// CHECK: kb.fusion ins(%[[M]], %{{.*}} : tensor<64x16xf32>, tensor<16xf32>)
// CHECK-NOT: kb.matmul
func.func @matmul_result_escapes(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>, %v: tensor<16xf32>) -> (tensor<64x16xf32>, tensor<64x16xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  %1 = kb.bias_add %0, %v : tensor<64x16xf32>, tensor<16xf32> -> tensor<64x16xf32>
  %2 = kb.relu %1 : tensor<64x16xf32>
  return %0, %2 : tensor<64x16xf32>, tensor<64x16xf32>
}

// -----

// Around a softmax: the scale and mask that feed only the softmax become its
// prologue, the dropout that only reads it its epilogue: one kernel.
// CHECK-LABEL: func.func @softmax_prologue_epilogue
// CHECK: %[[F:.+]] = kb.fusion ins(%{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<64xf32>)
// CHECK: kb.scale
// CHECK-NEXT: kb.bias_add
// CHECK-NEXT: kb.softmax
// CHECK-NEXT: kb.dropout
// CHECK-NEXT: kb.yield
// CHECK: return %[[F]]
func.func @softmax_prologue_epilogue(%x: tensor<8x64xf32>, %m: tensor<64xf32>) -> tensor<8x64xf32> {
  %0 = kb.scale %x by 0.125 : tensor<8x64xf32>
  %1 = kb.bias_add %0, %m : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %2 = kb.softmax %1 : tensor<8x64xf32>
  %3 = kb.dropout %2 p(0.1) seed(7) : tensor<8x64xf32>
  return %3 : tensor<8x64xf32>
}

// -----

// A prologue alone joins the softmax; the softmax ends the group.
// CHECK-LABEL: func.func @softmax_prologue_only
// CHECK: kb.fusion
// CHECK: kb.scale
// CHECK-NEXT: kb.softmax
// CHECK-NEXT: kb.yield
func.func @softmax_prologue_only(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = kb.scale %x by 0.125 : tensor<8x64xf32>
  %1 = kb.softmax %0 : tensor<8x64xf32>
  return %1 : tensor<8x64xf32>
}

// -----

// Negative: the scaled input is also returned, so the softmax reads it from
// memory; only the epilogue side fuses.
// CHECK-LABEL: func.func @softmax_input_escapes
// CHECK: %[[S:.+]] = kb.scale
// CHECK: kb.fusion ins(%[[S]] : tensor<8x64xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kb.softmax
// CHECK-NEXT: kb.exp
func.func @softmax_input_escapes(%x: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %0 = kb.scale %x by 0.125 : tensor<8x64xf32>
  %1 = kb.softmax %0 : tensor<8x64xf32>
  %2 = kb.exp %1 : tensor<8x64xf32>
  return %0, %2 : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// A config the program gave the anchor moves onto the fusion (the kernel's
// config, which kb-select-config completes and the lowering reads); the op
// inside keeps none. Without an anchor, the config of any op of the chain
// moves (here the first's: the chain is one elementwise kernel).
// CHECK-LABEL: func.func @config_moves
// CHECK: kb.fusion ins({{.*}}) attributes {config = #kb.config<strategy = "split_global", grid = 100>}
// CHECK: kb.scale %{{.*}} by 1.250000e-01 : tensor<256x200000xf32>
// CHECK: kb.softmax %{{.*}} : tensor<256x200000xf32>
// CHECK: kb.fusion ins({{.*}}) attributes {config = #kb.config<threads = 128>}
// CHECK: kb.gelu %{{.*}} approx(tanh) : tensor<64x64xf32>
func.func @config_moves(%x: tensor<256x200000xf32>, %y: tensor<64x64xf32>) -> (tensor<256x200000xf32>, tensor<64x64xf32>) {
  %0 = kb.scale %x by 0.125 : tensor<256x200000xf32>
  %1 = kb.softmax %0 {config = #kb.config<strategy = "split_global", grid = 100>} : tensor<256x200000xf32>
  %2 = kb.relu %y {config = #kb.config<threads = 128>} : tensor<64x64xf32>
  %3 = kb.gelu %2 approx(tanh) : tensor<64x64xf32>
  return %1, %3 : tensor<256x200000xf32>, tensor<64x64xf32>
}

// -----

// A softmax epilogue that reads a value its prologue would hold (relu feeds
// both the softmax and the tanh after it): the softmax takes no prologue, the
// relu stays its own kernel and both the softmax and the epilogue read it
// (fusing it crashed the lowering: the differential run, issue #17). A
// prologue nobody else reads still fuses (the second function).
// CHECK-LABEL: func.func @epilogue_reads_prologue
// CHECK: %[[R:.+]] = kb.relu %arg0 : tensor<4x33xf32>
// CHECK: kb.fusion ins(%[[R]] : tensor<4x33xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4x33xf32>):
// CHECK-NEXT: %[[S:.+]] = kb.softmax %[[A]]
// CHECK-NEXT: %[[T:.+]] = kb.tanh %[[A]]
// CHECK-NEXT: kb.div %[[S]], %[[T]]
func.func @epilogue_reads_prologue(%x: tensor<4x33xf32>) -> tensor<4x33xf32> {
  %r = kb.relu %x : tensor<4x33xf32>
  %s = kb.softmax %r : tensor<4x33xf32>
  %t = kb.tanh %r : tensor<4x33xf32>
  %y = kb.div %s, %t : tensor<4x33xf32>
  return %y : tensor<4x33xf32>
}

// -----

// CHECK-LABEL: func.func @prologue_alone
// CHECK-NEXT: kb.fusion ins(%arg0 : tensor<4x33xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4x33xf32>):
// CHECK-NEXT: %[[R:.+]] = kb.relu %[[A]]
// CHECK-NEXT: %[[S:.+]] = kb.softmax %[[R]]
// CHECK-NEXT: kb.tanh %[[S]]
func.func @prologue_alone(%x: tensor<4x33xf32>) -> tensor<4x33xf32> {
  %r = kb.relu %x : tensor<4x33xf32>
  %s = kb.softmax %r : tensor<4x33xf32>
  %t = kb.tanh %s : tensor<4x33xf32>
  return %t : tensor<4x33xf32>
}

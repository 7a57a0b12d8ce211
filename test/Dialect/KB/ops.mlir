// RUN: kb-opt %s | kb-opt | FileCheck %s
// RUN: kb-opt %s --mlir-print-op-generic | kb-opt | FileCheck %s

// Every kb op round-trips through its printed form.

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: kb.add %{{.*}}, %{{.*}} : tensor<4x8xf32>
  %0 = kb.add %x, %y : tensor<4x8xf32>
  // CHECK: kb.sub
  %1 = kb.sub %0, %y : tensor<4x8xf32>
  // CHECK: kb.mul
  %2 = kb.mul %1, %y : tensor<4x8xf32>
  // CHECK: kb.div
  %3 = kb.div %2, %y : tensor<4x8xf32>
  // CHECK: kb.bias_add %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %4 = kb.bias_add %3, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: kb.scale %{{.*}} by 1.250000e-01 : tensor<4x8xf32>
  %5 = kb.scale %4 by 0.125 : tensor<4x8xf32>
  // CHECK: kb.gelu %{{.*}} approx(tanh)
  %6 = kb.gelu %5 approx(tanh) : tensor<4x8xf32>
  // CHECK: kb.gelu %{{.*}} approx(erf)
  %7 = kb.gelu %6 approx(erf) : tensor<4x8xf32>
  // CHECK: kb.relu
  %8 = kb.relu %7 : tensor<4x8xf32>
  // CHECK: kb.tanh
  %9 = kb.tanh %8 : tensor<4x8xf32>
  // CHECK: kb.sigmoid
  %10 = kb.sigmoid %9 : tensor<4x8xf32>
  // CHECK: kb.exp
  %11 = kb.exp %10 : tensor<4x8xf32>
  // CHECK: kb.dropout %{{.*}} p(3.000000e-01) seed(42) : tensor<4x8xf32>
  %12 = kb.dropout %11 p(0.3) seed(42) : tensor<4x8xf32>
  return %12 : tensor<4x8xf32>
}

// The ops with a constant that PyTorch programs need (x + c, x ** c, SiLU,
// LeakyReLU).
// CHECK-LABEL: func.func @constants
func.func @constants(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: kb.add_scalar %{{.*}} value(1.500000e+00) : tensor<4x8xf32>
  %0 = kb.add_scalar %x value(1.5) : tensor<4x8xf32>
  // CHECK: kb.pow %{{.*}} exponent(3.000000e+00) : tensor<4x8xf32>
  %1 = kb.pow %0 exponent(3.0) : tensor<4x8xf32>
  // CHECK: kb.silu %{{.*}} : tensor<4x8xf32>
  %2 = kb.silu %1 : tensor<4x8xf32>
  // CHECK: kb.leaky_relu %{{.*}} slope(0.00999999977) : tensor<4x8xf32>
  %3 = kb.leaky_relu %2 slope(0.01) : tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @matmuls
func.func @matmuls(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>, %bt: tensor<16x32xf32>,
                   %ba: tensor<2x64x32xf32>, %bb: tensor<2x32x16xf32>)
    -> (tensor<64x16xf32>, tensor<64x16xf32>, tensor<2x64x16xf32>) {
  // CHECK: kb.matmul %{{.*}}, %{{.*}} precision(tf32) : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  %0 = kb.matmul %a, %b precision(tf32) : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  // CHECK: kb.matmul %{{.*}}, %{{.*}} precision(ieee) transpose_b
  %1 = kb.matmul %a, %bt precision(ieee) transpose_b : tensor<64x32xf32>, tensor<16x32xf32> -> tensor<64x16xf32>
  // CHECK: kb.matmul %{{.*}}, %{{.*}} precision(tf32x3) : tensor<2x64x32xf32>
  %2 = kb.matmul %ba, %bb precision(tf32x3) : tensor<2x64x32xf32>, tensor<2x32x16xf32> -> tensor<2x64x16xf32>
  return %0, %1, %2 : tensor<64x16xf32>, tensor<64x16xf32>, tensor<2x64x16xf32>
}

// A B^T whose rows are padded to a multiple of 32 (kb-select-mma for wgmma),
// and the matmul that reads the first K of each row.
// CHECK-LABEL: func.func @pad
// CHECK: %[[P:.*]] = kb.pad %{{.*}} multiple(32) : tensor<64x30xf32> -> tensor<64x32xf32>
// CHECK: kb.pad %{{.*}} multiple(4) : tensor<2x3x5xf32> -> tensor<2x3x8xf32>
func.func @pad(%a: tensor<64x30xf32>, %b: tensor<2x3x5xf32>) -> (tensor<64x32xf32>, tensor<2x3x8xf32>) {
  %0 = kb.pad %a multiple(32) : tensor<64x30xf32> -> tensor<64x32xf32>
  %1 = kb.pad %b multiple(4) : tensor<2x3x5xf32> -> tensor<2x3x8xf32>
  return %0, %1 : tensor<64x32xf32>, tensor<2x3x8xf32>
}

// CHECK-LABEL: func.func @padded_transpose
// CHECK: %[[T:.*]] = kb.transpose %{{.*}} pad(32) : tensor<30x16xf32> -> tensor<16x32xf32>
// CHECK: kb.matmul %{{.*}}, %[[T]] precision(tf32) transpose_b padded_b : tensor<64x30xf32>, tensor<16x32xf32> -> tensor<64x16xf32>
func.func @padded_transpose(%a: tensor<64x30xf32>, %b: tensor<30x16xf32>) -> tensor<64x16xf32> {
  %t = kb.transpose %b pad(32) : tensor<30x16xf32> -> tensor<16x32xf32>
  %0 = kb.matmul %a, %t precision(tf32) transpose_b padded_b : tensor<64x30xf32>, tensor<16x32xf32> -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// CHECK-LABEL: func.func @softmax_with_config
func.func @softmax_with_config(%x: tensor<16x1000xf32>) -> tensor<16x1000xf32> {
  // CHECK: kb.softmax %{{.*}} {config = #kb.config<threads = 128, strategy = "online">} : tensor<16x1000xf32>
  %0 = kb.softmax %x {config = #kb.config<threads = 128, strategy = "online">} : tensor<16x1000xf32>
  return %0 : tensor<16x1000xf32>
}

// CHECK-LABEL: func.func @config_fields
func.func @config_fields(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  // CHECK: #kb.config<block = [128, 128, 32], warp = [64, 32], threads = 256, stages = 2, pad = [4, 8], mma = "mma_sync_tf32">
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [128, 128, 32], warp = [64, 32], threads = 256, stages = 2, pad = [4, 8], mma = "mma_sync_tf32">} : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// CHECK-LABEL: func.func @fusion
func.func @fusion(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: kb.fusion ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>) {
  // CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>):
  // CHECK-NEXT: %[[S:.+]] = kb.bias_add %[[A]], %[[B]]
  // CHECK-NEXT: %[[R:.+]] = kb.relu %[[S]]
  // CHECK-NEXT: kb.yield %[[R]] : tensor<4x8xf32>
  // CHECK-NEXT: } -> tensor<4x8xf32>
  %0 = kb.fusion ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
    %1 = kb.bias_add %a, %c : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %2 = kb.relu %1 : tensor<4x8xf32>
    kb.yield %2 : tensor<4x8xf32>
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on elementwise kernels and fusions: every #kb.config is written out
// complete (as kb-select-mma, kb-select-config, kb-tile and
// kb-promote-shared-memory chose it), so this file breaks only when
// the lowering changes.

// The fused chain: one kernel, 16-byte loads and stores, one Philox call per
// 4 elements, a guard for the grid's tail; the function takes its result as a
// trailing output buffer.
// CHECK-LABEL: func.func @bias_gelu_dropout
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<64x128xf32> {kb.name = "x", kb.role = "input"}
// CHECK-SAME: %[[Y:[a-z0-9_]+]]: memref<64x128xf32> {kb.name = "out0", kb.role = "output"}
// CHECK: gpu.launch_func @[[M:.+]]::@[[K:.+]] blocks in (%{{.*}}) threads in (%{{.*}}) args(%[[X]] : memref<64x128xf32>, %{{.*}} : memref<128xf32>, %[[Y]] : memref<64x128xf32>)
// CHECK-SAME: kb.ops = [{{.*}}op = "kb.bias_add"{{.*}}op = "kb.gelu"{{.*}}op = "kb.dropout", output = "out0"
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.module @[[M]]
// CHECK: gpu.func @[[K]]
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: scf.if
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<128xf32>, vector<4xf32>
// One Philox4x32-10 call for the 4 elements: 2 multiplies a round, less the
// first round's multiply of the zero counter word, which folds away.
// CHECK-COUNT-19: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK: math.exp
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
func.func @bias_gelu_dropout(%arg0: tensor<64x128xf32> {kb.name = "x"}, %arg1: tensor<128xf32>) -> tensor<64x128xf32> {
  %0 = kb.fusion ins(%arg0, %arg1 : tensor<64x128xf32>, tensor<128xf32>) attributes {config = #kb.config<block = [1024], threads = 256, vector = 4>} {
  ^bb0(%arg2: tensor<64x128xf32>, %arg3: tensor<128xf32>):
    %1 = kb.bias_add %arg2, %arg3 : tensor<64x128xf32>, tensor<128xf32> -> tensor<64x128xf32>
    %2 = kb.gelu %1 approx(tanh) : tensor<64x128xf32>
    %3 = kb.dropout %2 p(3.000000e-01) seed(42) : tensor<64x128xf32>
    kb.yield %3 : tensor<64x128xf32>
  } -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// Unfused: one kernel per op, intermediates in scratch buffers.
// CHECK-LABEL: func.func @unfused
// CHECK: %[[T0:[a-z0-9_]+]] = memref.alloc() {kb.name = "t0"} : memref<4x8xf32>
// CHECK: gpu.launch_func {{.*}}args(%{{.*}}, %[[T0]] : memref<4x8xf32>)
// CHECK: gpu.launch_func {{.*}}args(%[[T0]] : memref<4x8xf32>, %{{.*}} : memref<4x8xf32>)
func.func @unfused(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.exp %arg0 {config = #kb.config<block = [1024], threads = 256, vector = 4>} : tensor<4x8xf32>
  %1 = kb.relu %0 {config = #kb.config<block = [1024], threads = 256, vector = 4>} : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// The ops with a constant: add_scalar is one add; pow by an integer is
// square and multiply (x^3: two products; x^-2: one product, then 1 / it);
// any other exponent is math.powf (libdevice, never the fast form); silu is
// x / (1 + exp(-x)); leaky_relu selects x or slope * x on x >= 0.
// CHECK-LABEL: func.func @constant_ops
// CHECK: gpu.func
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[SLOPE:.+]] = arith.constant 2.000000e-01 : f32
// CHECK-DAG: %[[E:.+]] = arith.constant 7.500000e-01 : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[C:.+]] = arith.constant 1.500000e+00 : f32
// CHECK: %[[A:.+]] = arith.addf %{{.*}}, %[[C]] : f32
// CHECK-NEXT: %[[SQ:.+]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[CUBE:.+]] = arith.mulf %[[A]], %[[SQ]] : f32
// CHECK-NEXT: %[[SQ2:.+]] = arith.mulf %[[CUBE]], %[[CUBE]] : f32
// CHECK-NEXT: %[[INV:.+]] = arith.divf %[[ONE]], %[[SQ2]] : f32
// CHECK-NEXT: %[[P:.+]] = math.powf %[[INV]], %[[E]] : f32
// CHECK-NEXT: %[[N:.+]] = arith.negf %[[P]] : f32
// CHECK-NEXT: %[[X:.+]] = math.exp %[[N]] : f32
// CHECK-NEXT: %[[D:.+]] = arith.addf %[[X]], %[[ONE]] : f32
// CHECK-NEXT: %[[S:.+]] = arith.divf %[[P]], %[[D]] : f32
// CHECK-NEXT: %[[NEG:.+]] = arith.mulf %[[S]], %[[SLOPE]] : f32
// CHECK-NEXT: %[[GE:.+]] = arith.cmpf oge, %[[S]], %[[ZERO]] : f32
// CHECK-NEXT: arith.select %[[GE]], %[[S]], %[[NEG]] : f32
func.func @constant_ops(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.fusion ins(%arg0 : tensor<4x8xf32>) attributes {config = #kb.config<block = [1024], threads = 256, vector = 1>} {
  ^bb0(%x: tensor<4x8xf32>):
    %1 = kb.add_scalar %x value(1.5) : tensor<4x8xf32>
    %2 = kb.pow %1 exponent(3.0) : tensor<4x8xf32>
    %3 = kb.pow %2 exponent(-2.0) : tensor<4x8xf32>
    %4 = kb.pow %3 exponent(0.75) : tensor<4x8xf32>
    %5 = kb.silu %4 : tensor<4x8xf32>
    %6 = kb.leaky_relu %5 slope(0.2) : tensor<4x8xf32>
    kb.yield %6 : tensor<4x8xf32>
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// x^0 is 1 whatever x is (NaN included, as in PyTorch): a constant, no
// product and no powf.
// CHECK-LABEL: func.func @pow_zero
// CHECK: gpu.func
// CHECK-NOT: arith.mulf
// CHECK-NOT: math.powf
// CHECK: vector.store
func.func @pow_zero(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.pow %arg0 exponent(0.0) {config = #kb.config<block = [1024], threads = 256, vector = 4>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A 16-bit dropout at vector = 8 (one 16-byte access): two Philox calls of
// four elements each, for groups index / 4 and index / 4 + 1 (the mask of
// vector = 4, whatever the vector), 19 multiplies each.
// CHECK-LABEL: func.func @half_dropout_vector8
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xbf16>, vector<8xbf16>
// CHECK: %[[G:.+]] = arith.shrui %{{.*}}, %c2_i64 : i64
// CHECK-COUNT-19: arith.mului_extended
// CHECK: arith.addi %[[G]], %c1_i64 : i64
// CHECK-COUNT-19: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<8192xbf16>, vector<8xbf16>
func.func @half_dropout_vector8(%arg0: tensor<64x128xbf16> {kb.name = "x"}) -> tensor<64x128xbf16> {
  %0 = kb.fusion ins(%arg0 : tensor<64x128xbf16>) attributes {config = #kb.config<block = [2048], threads = 256, vector = 8>} {
  ^bb0(%arg2: tensor<64x128xbf16>):
    %3 = kb.dropout %arg2 p(3.000000e-01) seed(42) : tensor<64x128xbf16>
    kb.yield %3 : tensor<64x128xbf16>
  } -> tensor<64x128xbf16>
  return %0 : tensor<64x128xbf16>
}

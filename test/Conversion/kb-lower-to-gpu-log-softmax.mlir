// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// kb-lower-to-gpu alone on kb.log_softmax, configs written out: the softmax
// kernel's row machinery, each element written as (x - max) - log(sum)
// (one math.log a row, no division, no exp at the store).

// Registers: every load first, the max, exp of x - max summed, one log.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_log_softmax
// CHECK-NOT: scf.for
// CHECK-COUNT-4: vector.load
// CHECK: gpu.shuffle xor
// CHECK: math.exp
// CHECK: math.log
// CHECK-NOT: arith.divf
// CHECK-NOT: math.exp
// CHECK: arith.subf
// CHECK: vector.store
func.func @log_softmax_registers(%arg0: tensor<16x4096xf32>) -> tensor<16x4096xf32> {
  %0 = kb.log_softmax %arg0 {config = #kb.config<block = [1], threads = 256, vector = 4, strategy = "registers">} : tensor<16x4096xf32>
  return %0 : tensor<16x4096xf32>
}

// -----

// Online: a loop of running (max, sum), then a second loop that reads the
// row again and writes x - max - log(sum).
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_log_softmax
// CHECK: scf.for
// CHECK: math.exp
// CHECK: math.log
// CHECK: scf.for
// CHECK: vector.load
// CHECK-NOT: math.exp
// CHECK: arith.subf
// CHECK: arith.subf
// CHECK: vector.store
func.func @log_softmax_online(%arg0: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  %0 = kb.log_softmax %arg0 {config = #kb.config<block = [1], threads = 1024, vector = 4, strategy = "online">} : tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}

// -----

// Fused: a residual add in front, a scale behind, in bf16 (16-bit loads and
// stores, f32 arithmetic).
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_fused_add_log_softmax_scale
// CHECK: vector.load {{.*}} vector<8xbf16>
// CHECK: arith.addf
// CHECK: math.log
// CHECK: arith.mulf %{{.*}}, %cst
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store {{.*}} vector<8xbf16>
func.func @log_softmax_fused(%a: tensor<8x1024xbf16>, %b: tensor<8x1024xbf16>) -> tensor<8x1024xbf16> {
  %0 = kb.fusion ins(%a, %b : tensor<8x1024xbf16>, tensor<8x1024xbf16>) attributes {config = #kb.config<block = [1], threads = 32, vector = 8, strategy = "registers">} {
  ^bb0(%x: tensor<8x1024xbf16>, %y: tensor<8x1024xbf16>):
    %1 = kb.add %x, %y : tensor<8x1024xbf16>
    %2 = kb.log_softmax %1 : tensor<8x1024xbf16>
    %3 = kb.scale %2 by 2.0 : tensor<8x1024xbf16>
    kb.yield %3 : tensor<8x1024xbf16>
  } -> tensor<8x1024xbf16>
  return %0 : tensor<8x1024xbf16>
}

// -----

func.func @log_softmax_split(%arg0: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  // expected-error @+1 {{has a log_softmax, which kb builds with strategy "registers" or "online", not "split"}}
  %0 = kb.log_softmax %arg0 {config = #kb.config<block = [1], threads = 1024, vector = 4, strategy = "split", cluster = 2>} : tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}

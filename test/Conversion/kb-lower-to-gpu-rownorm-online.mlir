// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on the row kernels' online strategy (rows too wide
// for one block's registers), configs written out: the row read in loops of
// threads x vector columns.

// layer_norm of rows of 65536: three loops (the sum, the squared
// deviations, the write), a block reduction after each of the first two.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_layer_norm
// CHECK: scf.for
// CHECK: vector.load
// CHECK: arith.addf
// CHECK: gpu.shuffle xor
// CHECK: arith.divf
// CHECK: scf.for
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: gpu.shuffle xor
// CHECK: math.rsqrt
// CHECK: scf.for
// CHECK: vector.load
// CHECK: vector.store
func.func @layer_norm_online(%x: tensor<4x65536xf32>, %w: tensor<65536xf32>, %b: tensor<65536xf32>) -> tensor<4x65536xf32> {
  %0 = kb.layer_norm %x, %w, %b eps(1.0e-05) {config = #kb.config<threads = 1024, vector = 4, strategy = "online">} : tensor<4x65536xf32>, tensor<65536xf32>, tensor<65536xf32> -> tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}

// -----

// rms_norm of bf16 rows of 40000 (not a multiple of 1024 x 8: each loop's
// chunks guarded): two loops.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_rms_norm
// CHECK: scf.for
// CHECK: scf.if
// CHECK: vector.load {{.*}} vector<8xbf16>
// CHECK: math.rsqrt
// CHECK: scf.for
// CHECK: scf.if
// CHECK: vector.store {{.*}} vector<8xbf16>
// CHECK-NOT: scf.for
func.func @rms_norm_online(%x: tensor<2x40000xbf16>) -> tensor<2x40000xbf16> {
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<threads = 1024, vector = 8, strategy = "online">} : tensor<2x40000xbf16> -> tensor<2x40000xbf16>
  return %0 : tensor<2x40000xbf16>
}

// -----

// reduce: one loop, then thread 0 stores the row's value.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_reduce
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK: gpu.shuffle xor
// CHECK: memref.store
// CHECK-NOT: scf.for
func.func @reduce_online(%x: tensor<8x131072xf32>) -> tensor<8xf32> {
  %0 = kb.reduce %x max {config = #kb.config<threads = 1024, vector = 4, strategy = "online">} : tensor<8x131072xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

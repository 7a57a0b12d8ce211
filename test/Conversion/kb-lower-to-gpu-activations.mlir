// RUN: kb-opt %s --kb-lower-to-gpu | FileCheck %s

// kb-lower-to-gpu alone on a fusion of the activations of issue #45, its
// #kb.config written out: one kernel for the whole chain, 16-byte loads of
// both inputs and a 16-byte store, and per element the precise forms
// (ActivationScalar.cpp): log1p and log without fastmath (libdevice's
// __nv_log1pf / __nv_logf, not the fast ones), sqrt.rn.f32 as inline PTX
// (math.sqrt would become sqrt.approx), 1 / sqrt for rsqrt, min and max
// that propagate NaN (maximumf, not maxnumf), expm1 for elu's negative side.

// CHECK-LABEL: func.func @activations
// CHECK: gpu.launch_func @[[M:.+]]::@[[K:.+]] blocks in
// CHECK-SAME: kb.ops = [{{.*}}op = "kb.softplus"{{.*}}op = "kb.mish"{{.*}}op = "kb.maximum"{{.*}}op = "kb.clamp"{{.*}}op = "kb.rsqrt"{{.*}}op = "kb.log"{{.*}}op = "kb.elu", output = "out0"
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @[[K]]
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
// softplus, beta 2: log1p(exp(2 x)) / 2, x where 2 x > 20.
// CHECK: %[[Z:.+]] = arith.mulf %[[X:.+]], %{{.*}} : f32
// CHECK: %[[E:.+]] = math.exp %[[Z]] : f32
// CHECK: %[[L:.+]] = math.log1p %[[E]] : f32
// CHECK: %[[D:.+]] = arith.divf %[[L]], %{{.*}} : f32
// CHECK: %[[BIG:.+]] = arith.cmpf ogt, %[[Z]], %{{.*}} : f32
// CHECK: %[[SP:.+]] = arith.select %[[BIG]], %[[X]], %[[D]] : f32
// mish: x tanh(log1p(exp(x))).
// CHECK: %[[E2:.+]] = math.exp %[[SP]] : f32
// CHECK: %[[L2:.+]] = math.log1p %[[E2]] : f32
// CHECK: %[[T:.+]] = math.tanh %[[L2]] : f32
// CHECK: %[[MISH:.+]] = arith.mulf %[[SP]], %[[T]] : f32
// CHECK: %[[MAX:.+]] = arith.maximumf %[[MISH]], %{{.*}} : f32
// CHECK: %[[CL:.+]] = arith.maximumf %[[MAX]], %{{.*}} : f32
// CHECK: %[[S:.+]] = llvm.inline_asm "sqrt.rn.f32 $0, $1;", "=f,f" %[[CL]] : (f32) -> f32
// CHECK: %[[R:.+]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK: %[[LOG:.+]] = math.log %[[R]] : f32
// elu, alpha 0.5: x where x > 0, 0.5 expm1(x) elsewhere.
// CHECK: %[[EM:.+]] = math.expm1 %[[LOG]] : f32
// CHECK: %[[NEG:.+]] = arith.mulf %[[EM]], %{{.*}} : f32
// CHECK: %[[POS:.+]] = arith.cmpf ogt, %[[LOG]], %{{.*}} : f32
// CHECK: arith.select %[[POS]], %[[LOG]], %[[NEG]] : f32
// CHECK-NOT: math.sqrt
// CHECK-NOT: math.rsqrt
// CHECK-NOT: fastmath
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
func.func @activations(%arg0: tensor<64x128xf32> {kb.name = "x"}, %arg1: tensor<64x128xf32> {kb.name = "w"}) -> tensor<64x128xf32> {
  %0 = kb.fusion ins(%arg0, %arg1 : tensor<64x128xf32>, tensor<64x128xf32>) attributes {config = #kb.config<block = [1024], threads = 256, vector = 4>} {
  ^bb0(%x: tensor<64x128xf32>, %w: tensor<64x128xf32>):
    %1 = kb.softplus %x beta(2.0) threshold(20.0) : tensor<64x128xf32>
    %2 = kb.mish %1 : tensor<64x128xf32>
    %3 = kb.maximum %2, %w : tensor<64x128xf32>
    %4 = kb.clamp %3 min(0.0625) : tensor<64x128xf32>
    %5 = kb.rsqrt %4 : tensor<64x128xf32>
    %6 = kb.log %5 : tensor<64x128xf32>
    %7 = kb.elu %6 alpha(0.5) : tensor<64x128xf32>
    kb.yield %7 : tensor<64x128xf32>
  } -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// The ops with a constant (add_scalar, pow, silu, leaky_relu) compile to
// one fused kernel whose PTX ptxas accepts, with powf linked from libdevice
// (no call left unresolved), and the manifest records each constant for
// kb-run's float64 reference.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: kb-opt %s --kb-compile="output=%t/b ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=PTX < %t/b/k0_fused_add_scalar_pow_pow_silu_leaky_relu.ptx
// RUN: kb-opt %s --kb-compile="output=%t/u fuse=false ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=UNFUSED < %t/u/manifest.json
// kb-run reads the new ops and their constants (its float64 reference
// evaluates them; unittests/ToleranceTest.cpp checks the bounds).
// RUN: %if kb-run %{ kb-run --check %t/b | FileCheck %s --check-prefix=VALID %}

// MANIFEST: "name": "k0_fused_add_scalar_pow_pow_silu_leaky_relu"
// MANIFEST-DAG: "value": 1.5
// MANIFEST-DAG: "exponent": 3
// MANIFEST-DAG: "exponent": 0.75
// MANIFEST-DAG: "slope": 0.20000000298023224
// MANIFEST-DAG: "op": "kb.silu"
// PTX: .entry k0_fused_add_scalar_pow_pow_silu_leaky_relu
// PTX-NOT: call{{.*}}__nv_powf
// PTX: ex2.approx
// VALID: OK (1 kernels, 2 buffers, 5 ops
// UNFUSED: "name": "k0_add_scalar"
// UNFUSED: "name": "k1_pow"
// UNFUSED: "name": "k2_pow"
// UNFUSED: "name": "k3_silu"
// UNFUSED: "name": "k4_leaky_relu"
func.func @constant_ops(%x: tensor<256x1024xf32> {kb.name = "x"}) -> (tensor<256x1024xf32> {kb.name = "y"}) {
  %0 = kb.add_scalar %x value(1.5) : tensor<256x1024xf32>
  %1 = kb.pow %0 exponent(3.0) : tensor<256x1024xf32>
  %2 = kb.pow %1 exponent(0.75) : tensor<256x1024xf32>
  %3 = kb.silu %2 : tensor<256x1024xf32>
  %4 = kb.leaky_relu %3 slope(0.2) : tensor<256x1024xf32>
  return %4 : tensor<256x1024xf32>
}

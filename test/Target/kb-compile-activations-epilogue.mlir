// Activations as a matmul's epilogue (the fast form: __nv_fast_expf, fast
// division) on mma.sync (sm_90) and wgmma (sm_90a): one kernel each, still
// sqrt.rn / rcp.rn and no approximate sqrt, rsqrt or log, and kb-run
// reads the manifest.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: kb-opt %s --kb-compile="output=%t/b chip=sm_90 ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX --implicit-check-not=sqrt.approx --implicit-check-not=rsqrt.approx --implicit-check-not=lg2.approx --implicit-check-not=call < %t/b/k0_fused_matmul_mish_softplus_clamp_rsqrt.ptx
// RUN: kb-opt %s --kb-compile="output=%t/a chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX --implicit-check-not=sqrt.approx --implicit-check-not=rsqrt.approx --implicit-check-not=lg2.approx --implicit-check-not=call < %t/a/k0_fused_matmul_mish_softplus_clamp_rsqrt.ptx
// RUN: %if kb-run %{ kb-run --check %t/b | FileCheck %s --check-prefix=VALID %}
// RUN: %if kb-run %{ kb-run --check %t/a | FileCheck %s --check-prefix=VALID %}

// PTX: .entry k0_fused_matmul_mish_softplus_clamp_rsqrt
// PTX: ex2.approx
// PTX: min.NaN.f32
// PTX: sqrt.rn.f32
// PTX: rcp.rn.f32
// VALID: OK (1 kernels
func.func @linear_mish(%x: tensor<512x256xf32> {kb.name = "x"}, %w: tensor<384x256xf32> {kb.name = "w"}) -> (tensor<512x384xf32> {kb.name = "y"}) {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b : tensor<512x256xf32>, tensor<384x256xf32> -> tensor<512x384xf32>
  %1 = kb.mish %0 : tensor<512x384xf32>
  %2 = kb.softplus %1 beta(2.0) threshold(10.0) : tensor<512x384xf32>
  %3 = kb.clamp %2 max(6.0) : tensor<512x384xf32>
  %4 = kb.rsqrt %3 : tensor<512x384xf32>
  return %4 : tensor<512x384xf32>
}

// A chain of every activation of issue #45 compiles with --kb-compile to
// one fused kernel whose PTX ptxas accepts, with libdevice's functions
// linked (no call left), the precise forms the error bounds of
// docs/tolerances.md assume (sqrt.rn and rcp.rn, no sqrt.approx,
// rsqrt.approx or lg2.approx: log and log1p are __nv_logf / __nv_log1pf),
// and NaN-propagating min and max; the manifest records every constant
// and kb-run reads it. Unfused, each op is its own kernel.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: kb-opt %s --kb-compile="output=%t/b ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=PTX --implicit-check-not=sqrt.approx --implicit-check-not=rsqrt.approx --implicit-check-not=lg2.approx --implicit-check-not=call < %t/b/k0_fused_softplus_elu_selu_hardtanh_hardsigmoid_har.ptx
// RUN: kb-opt %s --kb-compile="output=%t/u fuse=false ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=UNFUSED < %t/u/manifest.json
// RUN: %if kb-run %{ kb-run --check %t/b | FileCheck %s --check-prefix=VALID %}

// MANIFEST: "name": "k0_fused_softplus_elu_selu_hardtanh_hardsigmoid_har"
// MANIFEST-NOT: "name": "k1
// MANIFEST-DAG: "beta": 2
// MANIFEST-DAG: "threshold": 20
// MANIFEST-DAG: "alpha": 1.5
// MANIFEST-DAG: "min_val": -2
// MANIFEST-DAG: "max_val": 2
// MANIFEST-DAG: "min": 0.0625
// MANIFEST-DAG: "op": "kb.minimum"
// MANIFEST-DAG: "op": "kb.maximum"
// PTX: .entry k0_fused_softplus_elu_selu_hardtanh_hardsigmoid_har
// PTX: max.NaN.f32
// PTX: min.NaN.f32
// PTX: sqrt.rn.f32
// PTX: rcp.rn.f32
// VALID: OK (1 kernels, 3 buffers, 17 ops
// UNFUSED: "name": "k0_softplus"
// UNFUSED: "name": "k10_minimum"
// UNFUSED: "name": "k16_clamp"
func.func @activations(%x: tensor<256x1024xf32> {kb.name = "x"}, %w: tensor<256x1024xf32> {kb.name = "w"}) -> tensor<256x1024xf32> {
  %0 = kb.softplus %x beta(2.0) threshold(20.0) : tensor<256x1024xf32>
  %1 = kb.elu %0 alpha(1.5) : tensor<256x1024xf32>
  %2 = kb.selu %1 : tensor<256x1024xf32>
  %3 = kb.hardtanh %2 min_val(-2.0) max_val(2.0) : tensor<256x1024xf32>
  %4 = kb.hardsigmoid %3 : tensor<256x1024xf32>
  %5 = kb.hardswish %4 : tensor<256x1024xf32>
  %6 = kb.mish %5 : tensor<256x1024xf32>
  %7 = kb.softsign %6 : tensor<256x1024xf32>
  %8 = kb.abs %7 : tensor<256x1024xf32>
  %9 = kb.neg %8 : tensor<256x1024xf32>
  %10 = kb.minimum %9, %w : tensor<256x1024xf32>
  %11 = kb.maximum %10, %x : tensor<256x1024xf32>
  %12 = kb.clamp %11 min(0.0625) : tensor<256x1024xf32>
  %13 = kb.sqrt %12 : tensor<256x1024xf32>
  %14 = kb.rsqrt %13 : tensor<256x1024xf32>
  %15 = kb.log %14 : tensor<256x1024xf32>
  %16 = kb.clamp %15 min(-4.0) max(4.0) : tensor<256x1024xf32>
  return %16 : tensor<256x1024xf32>
}

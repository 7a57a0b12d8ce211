// The norm examples compile with --kb-compile to one kernel each, ptxas
// accepting the PTX for sm_90: examples/layernorm.mlir with the residual
// add fused in front of the layer_norm, examples/rmsnorm.mlir in bf16; and
// a reduce (this file). The manifest records each kernel's ops and attrs.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: kb-opt %kb_src/examples/layernorm.mlir --kb-compile="output=%t/ln ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=LN < %t/ln/manifest.json
// RUN: kb-opt %kb_src/examples/rmsnorm.mlir --kb-compile="output=%t/rms ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=RMS < %t/rms/manifest.json
// RUN: FileCheck %s --check-prefix=RMS-PTX < %t/rms/k0_rms_norm.ptx
// RUN: kb-opt %s --kb-compile="output=%t/red ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=RED < %t/red/manifest.json

// LN: "kernels": [
// LN: "config": "#kb.config<threads = 64, vector = 4>"
// LN: "name": "k0_fused_add_layer_norm",
// LN-NOT: "name": "k1_
// LN: "op": "kb.add",
// LN: "attrs": {
// LN-NEXT: "eps": 9.99999974{{[0-9]*}}e-06
// LN: "inputs": [
// LN-NEXT: "k0_fused_add_layer_norm.v0",
// LN-NEXT: "weight",
// LN-NEXT: "bias"
// LN: "op": "kb.layer_norm",

// RMS: "config": "#kb.config<threads = 256, vector = 8>"
// RMS: "name": "k0_rms_norm",
// RMS: "spill_store_bytes": 0
// RMS: "op": "kb.rms_norm",
// RMS-PTX: ld.global.nc.v4.b32
// RMS-PTX: rsqrt.approx

// RED: "name": "k0_reduce",
// RED: "attrs": {
// RED-NEXT: "keepdim": true,
// RED-NEXT: "kind": "mean"
// RED: "shape": [
// RED-NEXT: 1000,
// RED-NEXT: 1
func.func @mean(%x: tensor<1000x4097xf32> {kb.name = "x"}) -> (tensor<1000x1xf32> {kb.name = "m"}) {
  %0 = kb.reduce %x mean keepdim : tensor<1000x4097xf32> -> tensor<1000x1xf32>
  return %0 : tensor<1000x1xf32>
}

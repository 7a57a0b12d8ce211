// The row kernels' cluster strategy through --kb-compile, ptxas accepting the
// PTX for sm_90: a layer_norm with the residual add fused in front, an f32
// and a bf16 rms_norm and a sum, rows of 65536 (issue #45's sizes, 64 rows
// here): the norms by default (kRowClusterByDefault), the sum asked for by
// strategy = "cluster"; each cluster size and threads chosen by
// kb-select-config (eight vectors a thread: 256 threads for a part of 8192
// f32). The manifest records the cluster
// launch and no spills; the PTX holds the cluster barriers, mapa and the
// ld.shared::cluster of the exchange, and the input is read once (8 vector
// loads a thread of x before the exchange, none after it but the weight's:
// no loop).
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: kb-opt %s --kb-compile="output=%t/out ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/out/manifest.json
// RUN: FileCheck %s --check-prefix=PTX < %t/out/k1_rms_norm.ptx
// RUN: FileCheck %s --check-prefix=LN-PTX < %t/out/k0_fused_add_layer_norm.ptx

// CHECK: "cluster": [
// CHECK-NEXT: 8,
// CHECK: "config": "#kb.config<threads = 256, vector = 4, strategy = \"cluster\", cluster = 8>"
// CHECK: "grid": [
// CHECK-NEXT: 512,
// CHECK: "name": "k0_fused_add_layer_norm",
// CHECK: "spill_store_bytes": 0,
// CHECK: "cluster": [
// CHECK-NEXT: 8,
// CHECK: "config": "#kb.config<threads = 256, vector = 4, strategy = \"cluster\", cluster = 8>"
// CHECK: "name": "k1_rms_norm",
// CHECK: "spill_store_bytes": 0,
// CHECK: "cluster": [
// CHECK-NEXT: 4,
// CHECK: "config": "#kb.config<threads = 256, vector = 8, strategy = \"cluster\", cluster = 4>"
// CHECK: "name": "k2_rms_norm",
// CHECK: "spill_store_bytes": 0,
// CHECK: "cluster": [
// CHECK-NEXT: 8,
// CHECK: "name": "k3_reduce",
// CHECK: "spill_store_bytes": 0,

// PTX-COUNT-8: ld.global.nc.v4
// PTX-NOT: ld.global
// PTX: barrier.cluster.arrive.aligned
// PTX-NEXT: barrier.cluster.wait.aligned
// PTX-NOT: ld.global
// PTX: mapa.shared::cluster
// PTX: ld.shared::cluster.b32
// PTX-COUNT-8: shfl.sync.idx.b32
// PTX-NOT: ld.global
// PTX: barrier.cluster.arrive.aligned
// PTX: rsqrt.approx
// PTX-COUNT-8: st.global.v4
// PTX-NEXT: barrier.cluster.wait.aligned

// The layer_norm: x and the residual read once (16 loads before the
// exchange), one exchange (one cluster barrier before it, the (mean, M2)
// pair read as two ld.shared::cluster, 8 + 8 shuffles), then the weight and
// bias loaded as each vector is stored.
// LN-PTX-COUNT-16: ld.global.nc.v4
// LN-PTX-NOT: ld.global
// LN-PTX-NOT: barrier.cluster
// LN-PTX: barrier.cluster.arrive.aligned
// LN-PTX-NEXT: barrier.cluster.wait.aligned
// LN-PTX-NOT: ld.global
// LN-PTX: mapa.shared::cluster
// LN-PTX-COUNT-2: ld.shared::cluster.b32
// LN-PTX-NOT: ld.shared::cluster
// LN-PTX-COUNT-16: shfl.sync.idx.b32
// LN-PTX-NOT: shfl.sync.idx
// LN-PTX-NOT: barrier.cluster.wait
// LN-PTX: barrier.cluster.arrive.aligned
// LN-PTX-NOT: barrier.cluster
// LN-PTX: rsqrt.approx
// LN-PTX-COUNT-8: st.global.v4
// LN-PTX-NEXT: barrier.cluster.wait.aligned
// LN-PTX-NOT: barrier.cluster
func.func @norms(%x: tensor<64x65536xf32> {kb.name = "x"}, %r: tensor<64x65536xf32> {kb.name = "residual"}, %w: tensor<65536xf32> {kb.name = "weight"}, %b: tensor<65536xf32> {kb.name = "bias"}, %h: tensor<64x65536xbf16> {kb.name = "h"}, %wh: tensor<65536xbf16> {kb.name = "wh"})
    -> (tensor<64x65536xf32>, tensor<64x65536xf32>, tensor<64x65536xbf16>, tensor<64x1xf32>) {
  %0 = kb.add %x, %r : tensor<64x65536xf32>
  %1 = kb.layer_norm %0, %w, %b eps(1.0e-05) : tensor<64x65536xf32>, tensor<65536xf32>, tensor<65536xf32> -> tensor<64x65536xf32>
  %2 = kb.rms_norm %x, %w eps(1.0e-06) : tensor<64x65536xf32>, tensor<65536xf32> -> tensor<64x65536xf32>
  %3 = kb.rms_norm %h, %wh eps(1.0e-06) : tensor<64x65536xbf16>, tensor<65536xbf16> -> tensor<64x65536xbf16>
  %4 = kb.reduce %x sum keepdim {config = #kb.config<strategy = "cluster">} : tensor<64x65536xf32> -> tensor<64x1xf32>
  return %1, %2, %3, %4 : tensor<64x65536xf32>, tensor<64x65536xf32>, tensor<64x65536xbf16>, tensor<64x1xf32>
}

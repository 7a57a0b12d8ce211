// A column reduction and a whole-tensor reduction compile with --kb-compile
// to one kernel each, ptxas accepting the PTX for sm_90; the manifest records
// the axis, `all`, the whole reduction's workspace (2 + grid words) and its
// grid; kb-run --check accepts both bundles without a GPU.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: kb-opt %s --kb-compile="output=%t/b ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=COL-PTX < %t/b/k0_reduce.ptx
// RUN: FileCheck %s --check-prefix=ALL-PTX < %t/b/k1_reduce.ptx
// RUN: kb-run --check %t/b | FileCheck %s --check-prefix=VALID

// CHECK: "name": "ws{{[0-9]+}}",
// CHECK-NEXT: "role": "workspace",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: 491
// CHECK: "config": "#kb.config<block = [64], threads = 512, vector = 1>",
// CHECK: "name": "k0_reduce",
// CHECK: "config": "#kb.config<threads = 512, vector = 4, grid = 489>",
// CHECK: "grid": [
// CHECK-NEXT: 489,
// CHECK: "name": "k1_reduce",
// CHECK: "attrs": {
// CHECK-NEXT: "axis": 0,
// CHECK-NEXT: "kind": "sum"
// CHECK: "attrs": {
// CHECK-NEXT: "all": true,
// CHECK-NEXT: "kind": "max"

// Coalesced column loads; the slices' partials through shared memory.
// COL-PTX: ld.global.nc.b32
// COL-PTX: st.shared.b32
// COL-PTX: bar.sync
// COL-PTX: ld.shared.b32

// Stage 1's 16-byte loads, the partial's relaxed store, the acq_rel count,
// the last block's relaxed loads of the partials.
// ALL-PTX: ld.global.nc.v4.b32
// ALL-PTX: st.relaxed.gpu.global.b32
// ALL-PTX: atom.acq_rel.gpu.add.u32
// ALL-PTX: ld.relaxed.gpu.global.b32

// VALID: OK (2 kernels
func.func @reductions(%x: tensor<1000x1001xf32> {kb.name = "x"}) -> (tensor<1001xf32> {kb.name = "c"}, tensor<1xf32> {kb.name = "t"}) {
  %0 = kb.reduce %x sum axis(0) : tensor<1000x1001xf32> -> tensor<1001xf32>
  %1 = kb.reduce %x max all : tensor<1000x1001xf32> -> tensor<1xf32>
  return %0, %1 : tensor<1001xf32>, tensor<1xf32>
}

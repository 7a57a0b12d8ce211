// bf16 matvec 1 x 4099 x 4093 (bench/shapes.py: M 1, N 4099, K 4093; a
// row-major B whose rows are 2-byte aligned: 8198 bytes) compiles to the gemv kernel's realigned loads
// (thread = [1, 8, 8], hand-set until kb-tile's default takes it after a
// GPU check): 16-byte loads of the aligned chunks
// (ld.global.nc.v4.b32, the next chunk's words predicated on a segment's
// last thread), the neighbour's words by shfl.sync.down, f32 FMAs, no
// spill. PTX through ptxas.
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/a chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/a/manifest.json
// RUN: FileCheck %s < %t/a/k0_matmul.ptx
// MANIFEST: "config": "#kb.config<block = [1, 32, 1024], thread = [1, 8, 8], threads = 512, stages = 2, mma = \"gemv\">"
// MANIFEST: "spill_load_bytes": 0
// MANIFEST: "spill_store_bytes": 0

// CHECK-NOT: ld.global.nc.L2::cache_hint.b16
// CHECK: ld.global.nc.L2::cache_hint.v4.b32
// CHECK: @p ld.global.nc.L2::cache_hint.v4.b32
// CHECK: shfl.sync.down.b32
// CHECK: fma.rn.f32
// CHECK: shfl.sync.bfly.b32
// CHECK: cvt.rn.bf16.f32

func.func @decode(%x: tensor<1x4093xbf16>, %w: tensor<4093x4099xbf16>) -> tensor<1x4099xbf16> {
  %0 = kb.matmul %x, %w {config = #kb.config<block = [1, 32, 1024], thread = [1, 8, 8], mma = "gemv">} : tensor<1x4093xbf16>, tensor<4093x4099xbf16> -> tensor<1x4099xbf16>
  return %0 : tensor<1x4099xbf16>
}

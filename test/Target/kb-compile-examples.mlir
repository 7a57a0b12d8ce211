// Every example compiles to a bundle whose PTX ptxas accepts for sm_90, and
// the manifest records buffers, launches, resources and the program.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: kb-opt %kb_src/examples/bias_gelu_dropout.mlir --kb-compile="output=%t/bgd ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=BGD < %t/bgd/manifest.json
// RUN: FileCheck %s --check-prefix=BGD-PTX < %t/bgd/k0_fused_bias_add_gelu_dropout.ptx
// RUN: kb-opt %kb_src/examples/bias_gelu_dropout.mlir --kb-compile="output=%t/bgd-unfused fuse=false ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=UNFUSED < %t/bgd-unfused/manifest.json
// RUN: kb-opt %kb_src/examples/softmax.mlir --kb-compile="output=%t/softmax ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=SOFTMAX < %t/softmax/manifest.json
// RUN: kb-opt %kb_src/examples/matmul.mlir --kb-compile="output=%t/matmul chip=sm_90 ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=MMA-PTX < %t/matmul/k0_matmul.ptx
// RUN: kb-opt %kb_src/examples/matmul_awkward.mlir --kb-compile="output=%t/awkward ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=AWKWARD < %t/awkward/manifest.json
// RUN: FileCheck %s --check-prefix=FFMA-PTX < %t/awkward/k0_matmul.ptx
// RUN: kb-opt %kb_src/examples/softmax_wide.mlir --kb-compile="output=%t/wide ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=WIDE < %t/wide/manifest.json
// RUN: FileCheck %s --check-prefix=WIDE-PTX < %t/wide/k0_softmax.ptx
// The other split kernels through ptxas: register parts, unaligned rows on
// a cluster's and on ordinary blocks' shared memory.
// RUN: kb-opt %s --kb-compile="output=%t/split ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=SPLIT < %t/split/manifest.json
// RUN: kb-opt %kb_src/examples/matmul.mlir --kb-compile="output=%t/matmul90a chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=SM90A < %t/matmul90a/manifest.json
// RUN: FileCheck %s --check-prefix=SM90A-PTX < %t/matmul90a/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=SM90A-MMA < %t/matmul90a/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=SM90A-NONE < %t/matmul90a/k0_matmul.ptx

// WIDE: "dtype": "i32",
// WIDE-NEXT: "name": "ws0",
// WIDE-NEXT: "role": "workspace",
// WIDE: "co_resident_blocks": 16,
// WIDE: "config": "#kb.config<block = [1], threads = 512, vector = 4, strategy = \"split_global\", cluster = 16>"
// WIDE: "dynamic_shared_bytes": 100272,
// WIDE: "grid": [
// WIDE-NEXT: 16384,
// WIDE: "resources": {
// WIDE: "spill_store_bytes": 0
// WIDE-PTX: atom.global.add.u32
// WIDE-PTX: cp.async.cg.shared.global
// WIDE-PTX: st.relaxed.gpu.global.b64
// WIDE-PTX: atom.acq_rel.gpu.add.u32
// WIDE-PTX: ld.acquire.gpu.global.b32
// WIDE-PTX: nanosleep.u32
// WIDE-PTX: ld.relaxed.gpu.global.b64
// WIDE-PTX-NOT: membar.gl
// WIDE-PTX-NOT: barrier.cluster
// SPLIT: strategy = \"split\", cluster = 2>"
// SPLIT: "name": "k0_softmax"
// SPLIT: "spill_store_bytes": 0
// SPLIT: strategy = \"split_shared\", cluster = 8>"
// SPLIT: "name": "k1_softmax"
// SPLIT: "spill_store_bytes": 0
// SPLIT: strategy = \"split_global\", cluster = 16>"
// SPLIT: "name": "k2_softmax"
// SPLIT: "spill_store_bytes": 0
func.func @split(%a: tensor<8x65536xf32>, %b: tensor<6x400001xf32>) -> (tensor<8x65536xf32>, tensor<6x400001xf32>, tensor<6x400001xf32>) {
  %0 = kb.softmax %a {config = #kb.config<strategy = "split">} : tensor<8x65536xf32>
  %1 = kb.softmax %b {config = #kb.config<strategy = "split_shared">} : tensor<6x400001xf32>
  %2 = kb.softmax %b : tensor<6x400001xf32>
  return %0, %1, %2 : tensor<8x65536xf32>, tensor<6x400001xf32>, tensor<6x400001xf32>
}

// BGD: "buffers": [
// BGD: "name": "x",
// BGD-NEXT: "role": "input",
// BGD-NEXT: "shape": [
// BGD-NEXT: 4096,
// BGD-NEXT: 1024
// BGD: "name": "y",
// BGD-NEXT: "role": "output",
// BGD: "kernels": [
// BGD: "args": [
// BGD-NEXT: "x",
// BGD-NEXT: "bias",
// BGD-NEXT: "y"
// BGD: "cubin": "k0_fused_bias_add_gelu_dropout.cubin",
// BGD: "grid": [
// BGD-NEXT: 4096,
// BGD: "resources": {
// BGD: "registers":
// BGD: "spill_store_bytes": 0,
// BGD: "program": [
// BGD: "op": "kb.bias_add",
// BGD: "op": "kb.gelu",
// BGD: "op": "kb.dropout",
// BGD: "target": "sm_90a",
// BGD: "version": 1

// BGD-PTX: .target sm_90
// The inputs are read-only and unaliased: non-coherent (read-only cache) loads.
// BGD-PTX: ld.global.nc.v4.b32
// BGD-PTX: mul.lo.s64 {{.*}}, 3528531795;
// BGD-PTX: st.global.v4.b32
// BGD-PTX-NOT: ld.local

// UNFUSED: "name": "t0",
// UNFUSED-NEXT: "role": "scratch",
// UNFUSED: "name": "k0_bias_add",
// UNFUSED: "name": "k1_gelu",
// UNFUSED: "name": "k2_dropout",

// SOFTMAX: "block": [
// SOFTMAX-NEXT: 1024,
// SOFTMAX: strategy = \"registers\"
// SOFTMAX: "grid": [
// SOFTMAX-NEXT: 8192,

// MMA-PTX: cp.async.cg.shared.global
// MMA-PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// MMA-PTX: add.s32 {{.*}}, 4096;
// MMA-PTX: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// MMA-PTX-NOT: cvt.rna.tf32

// AWKWARD: "name": "t0",
// AWKWARD-NEXT: "role": "scratch",
// AWKWARD-NEXT: "shape": [
// AWKWARD-NEXT: 1000,
// AWKWARD-NEXT: 700
// AWKWARD: "dynamic_shared_bytes": {{[1-9][0-9]*}},
// AWKWARD: "name": "k0_matmul",
// AWKWARD: "name": "k1_softmax",

// The tiles come by TMA: mbarriers, tensor copies, no per-thread cp.async;
// the producer warpgroup gives its registers to the two consumer warpgroups.
// SM90A-PTX-DAG: mbarrier.init.shared.b64
// SM90A-PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// SM90A-PTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SM90A-PTX-DAG: mbarrier.try_wait.parity.shared.b64
// SM90A-PTX-DAG: bar.sync
// SM90A-PTX-DAG: setmaxnreg.dec.sync.aligned.u32 40;
// SM90A-PTX-DAG: setmaxnreg.inc.sync.aligned.u32 232;
// SM90A-PTX-DAG: wgmma.fence.sync.aligned
// SM90A-PTX-DAG: wgmma.commit_group.sync.aligned
// SM90A-PTX-DAG: wgmma.wait_group.sync.aligned {{[[:space:]]*}}0;
// Four k8 steps per k tile, one after the other (LLVM may peel the first
// k tile, which then holds another four), B^T's fragments from registers.
// SM90A-MMA-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1;
// SM90A-MMA-NOT: wgmma.mma_async
// SM90A-MMA: wgmma.commit_group.sync.aligned
// No mma.sync and no ldmatrix anywhere in the kernel; shared memory is read
// only for B^T's fragments (16 words a k tile), never waited on by
// wait_group 1 (the registers a wgmma reads stay untouched until it retires).
// SM90A-NONE-NOT: mma.sync
// SM90A-NONE-NOT: cp.async.cg
// SM90A-NONE-NOT: ldmatrix
// SM90A-NONE-NOT: wgmma.wait_group.sync.aligned {{[[:space:]]*}}1;

// FFMA-PTX: fma.rn.f32
// FFMA-PTX-NOT: mma.sync

// On sm_90a the tf32 matmul is one wgmma kernel that reads the row-major B
// as it is (C^T = B^T A^T, B^T's fragments in registers): no transpose.
// SM90A-NOT: "name": "k0_transpose",
// SM90A: "args": [
// SM90A-NEXT: "a",
// SM90A-NEXT: "b",
// SM90A-NEXT: "tm0",
// SM90A-NEXT: "tm1",
// SM90A-NEXT: "c"
// SM90A: "config": "#kb.config<block = [256, 128, 32], threads = 384, stages = 4, pad = [0, 0], mma = \"wgmma_tf32\", copy = \"tma\">",
// SM90A: "cubin": "k0_matmul.cubin",
// SM90A-NOT: "op": "kb.transpose",
// SM90A-NOT: "transpose_b": true
// SM90A: "target": "sm_90a",

// RUN: kb-opt %s --kb-lower-to-gpu --kb-dependent-launch -split-input-file -verify-diagnostics | FileCheck %s
// The last case fails kb-compile on sm_90a (its kernel is launched twice):
// RUN: not kb-opt %s -split-input-file --kb-compile="chip=sm_90a fuse=false" 2>/dev/null | FileCheck %s --check-prefix=PTX90
// RUN: kb-opt %s -split-input-file --kb-compile="chip=sm_80 fuse=false" 2>/dev/null | FileCheck %s --check-prefix=PTX80

// kb-dependent-launch: of a program's kernels, each after the first begins
// with griddepcontrol.wait and its launch is marked kb.dependent_launch
// (kb-run launches it with programmatic stream serialization); each before
// the last begins with griddepcontrol.launch_dependents, unless the next
// grid's blocks would crowd onto the SMs it leaves idle. kb-compile runs it
// for sm_90 and sm_90a only.

// Three kernels (no fusion here: kb-lower-to-gpu alone).
// CHECK-LABEL: func.func @three
// CHECK: gpu.launch_func @[[M0:k0_[a-z]+_module]]::@{{.*}} blocks
// CHECK-NOT: kb.dependent_launch
// CHECK-SAME: kb.ops
// CHECK: gpu.launch_func @[[M1:k1_[a-z]+_module]]::@{{.*}} blocks
// CHECK-SAME: kb.dependent_launch
// CHECK: gpu.launch_func @[[M2:k2_[a-z]+_module]]::@{{.*}} blocks
// CHECK-SAME: kb.dependent_launch
// CHECK: gpu.module @[[M0]]
// CHECK-NEXT: gpu.func
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NOT: griddepcontrol
// CHECK: gpu.module @[[M1]]
// CHECK-NEXT: gpu.func
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// CHECK-NOT: griddepcontrol
// CHECK: gpu.module @[[M2]]
// CHECK-NEXT: gpu.func
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// CHECK-NOT: griddepcontrol
// In the PTX no global load comes before a kernel's wait.
// PTX90: .entry k0_exp(
// PTX90: griddepcontrol.launch_dependents
// PTX90: .entry k1_relu(
// PTX90: griddepcontrol.launch_dependents
// PTX90-NOT: ld.global
// PTX90: griddepcontrol.wait
// PTX90: .entry k2_exp(
// PTX90-NOT: ld.global
// PTX90: griddepcontrol.wait
// PTX80-NOT: griddepcontrol
func.func @three(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = kb.exp %x {config = #kb.config<block = [1024], threads = 256, vector = 4>} : tensor<64x128xf32>
  %1 = kb.relu %0 {config = #kb.config<block = [1024], threads = 256, vector = 4>} : tensor<64x128xf32>
  %2 = kb.exp %1 {config = #kb.config<block = [1024], threads = 256, vector = 4>} : tensor<64x128xf32>
  return %2 : tensor<64x128xf32>
}

// -----

// One kernel: nothing to overlap, nothing added.
// CHECK-LABEL: func.func @one
// CHECK-NOT: kb.dependent_launch
// CHECK-NOT: griddepcontrol
func.func @one(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = kb.exp %x {config = #kb.config<block = [1024], threads = 256, vector = 4>} : tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// A first grid of 128 blocks leaves 4 of the sm_90a model's 132 SMs idle;
// 128 of the next grid's 256 blocks (64 threads, 32 an SM) would be placed
// there at once: 50% of it on 3% of the SMs, more than 4x their share. The
// first kernel gets no launch_dependents; the second still waits.
// CHECK-LABEL: func.func @crowded
// CHECK: gpu.launch_func @[[C0:k0_[a-z]+_module]]::@{{.*}} blocks in (%c128
// CHECK: gpu.launch_func @[[C1:k1_[a-z]+_module]]::@{{.*}} blocks in (%c256
// CHECK-SAME: kb.dependent_launch
// CHECK: gpu.module @[[C0]]
// CHECK-NOT: griddepcontrol
// CHECK: gpu.module @[[C1]]
// CHECK-NEXT: gpu.func
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
func.func @crowded(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %0 = kb.exp %x {config = #kb.config<block = [512], threads = 128, vector = 4>} : tensor<64x1024xf32>
  %1 = kb.relu %0 {config = #kb.config<block = [256], threads = 64, vector = 4>} : tensor<64x1024xf32>
  return %1 : tensor<64x1024xf32>
}

// -----

// A kernel launched twice is refused: its wait and its signal are placed
// for one position in the program.
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  func.func @twice() {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{kb-dependent-launch: kernel @m::@k is launched 2 times; each kernel of a kb program is launched once}}
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

// Without ptxas the bundle still holds the PTX and the manifest (no cubin, no
// resource report); a missing output folder is an error.
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t ptxas=none" -o /dev/null
// RUN: FileCheck %s < %t/manifest.json
// RUN: FileCheck %s --check-prefix=PTX < %t/k0_exp.ptx
// RUN: not kb-opt %s --kb-emit-bundle 2>&1 | FileCheck %s --check-prefix=NOOUT
// RUN: not kb-opt %s --kb-emit-bundle=output=%t/x 2>&1 | FileCheck %s --check-prefix=NOENTRY
// RUN: not kb-opt %s --kb-compile="output=%t/y ptxas=/nonexistent/ptxas" 2>&1 | FileCheck %s --check-prefix=BADPTXAS

// CHECK-NOT: "cubin"
// CHECK-NOT: "resources"
// CHECK: "ptx": "k0_exp.ptx"
// PTX: .visible .entry k0_exp(
// PTX-NEXT: .param .u64 .ptr .align 1 k0_exp_param_0,
// PTX-NEXT: .param .u64 .ptr .align 1 k0_exp_param_1
// NOOUT: kb-emit-bundle: option 'output' (the bundle folder) is required
// NOENTRY: kb-emit-bundle.mlir:20:8: error: kb-emit-bundle: this kb op was not lowered by kb-lower-to-gpu: run kb-lower-to-gpu first
// BADPTXAS: kb-emit-bundle: ptxas '/nonexistent/ptxas' is not an executable
func.func @f(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = kb.exp %x : tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

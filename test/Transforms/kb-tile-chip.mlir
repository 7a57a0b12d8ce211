// RUN: kb-opt %s --kb-tile | FileCheck %s
// RUN: kb-opt %s --kb-tile=chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: not kb-opt %s --kb-tile=chip=sm_75 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: kb-tile: unknown chip 'sm_75' (known: sm_80, sm_90, sm_90a)

// The SM count is the chip's: 1408x1408 has 121 128x128 tiles, fewer than
// sm_90's 132 SMs (64x64 tiles) but more than sm_80's 108.
// CHECK-LABEL: func.func @sm_count
// CHECK: block = [64, 64, 8]{{.*}}tensor<1408x1408xf32>
// SM80-LABEL: func.func @sm_count
// SM80: block = [128, 128, 16]{{.*}}tensor<1408x1408xf32>
func.func @sm_count(%a: tensor<1408x1408xf32>) -> tensor<1408x1408xf32> {
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<mma = "ffma">} : tensor<1408x1408xf32>, tensor<1408x1408xf32> -> tensor<1408x1408xf32>
  return %0 : tensor<1408x1408xf32>
}


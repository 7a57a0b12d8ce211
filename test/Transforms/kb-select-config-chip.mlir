// RUN: not kb-opt %s --kb-select-config=chip=sm_75 2>&1 | FileCheck %s
// RUN: kb-opt %s --kb-select-config=chip=sm_80 | FileCheck %s --check-prefix=SM80

// An unknown chip is an error that lists the known ones.
// CHECK: kb-select-config: unknown chip 'sm_75' (known: sm_80, sm_90, sm_90a)
// SM80: kb.relu %{{.*}} {config = #kb.config<threads = 256, vector = 4>}
func.func @f(%a: tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  %0 = kb.relu %a : tensor<8x1024xf32>
  return %0 : tensor<8x1024xf32>
}

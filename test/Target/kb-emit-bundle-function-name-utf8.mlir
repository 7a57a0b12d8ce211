// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t ptxas=none" && FileCheck %s < %t/manifest.json
// A function named in UTF-8 beyond ASCII is fine: the manifest records it
// (the negative case of kb-emit-bundle-function-name.mlir).
// CHECK: "function": "rélu"
func.func @"r\C3\A9lu"(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

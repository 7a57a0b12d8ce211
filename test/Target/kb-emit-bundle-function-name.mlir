// RUN: rm -rf %t && not kb-opt %s --kb-compile="output=%t ptxas=none" 2>&1 | FileCheck %s
// The manifest records the function's name, and JSON holds only UTF-8: a
// symbol that is not UTF-8 is refused at the function (the JSON writer
// asserted, or wrote U+FFFD in its place, before; found with the kb.name
// case by the kb-compile fuzzer). Negative: the same function named in
// UTF-8 beyond ASCII compiles (kb-compile-names.test covers plain names).

// CHECK: kb-emit-bundle-function-name.mlir:[[@LINE+1]]:1: error: kb-emit-bundle: the function's name is not valid UTF-8 (the bundle's JSON manifest records it)
func.func @"b\FFx"(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

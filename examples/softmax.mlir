// Softmax over rows of 32768: the lab notes' memory-bound lesson. The row
// fits in the registers of one block (32 values per thread), so the kernel
// reads each row once and writes it once.
//   kb-opt --kb-compile="output=/tmp/softmax" examples/softmax.mlir
func.func @softmax(%x: tensor<8192x32768xf32> {kb.name = "x"})
    -> (tensor<8192x32768xf32> {kb.name = "y"}) {
  %0 = kb.softmax %x : tensor<8192x32768xf32>
  return %0 : tensor<8192x32768xf32>
}

// RUN: kb-opt %s --kb-fuse-elementwise -split-input-file -verify-diagnostics
// RUN: not kb-opt %s --kb-compile="fuse=true" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=COMPILE

// A #kb.config the fused kernel would not use is refused, naming the op
// (it was dropped with a warning, exit 0, until 2026-12-06): around a
// softmax or matmul the kernel takes the anchor's config.
// COMPILE: error: #kb.config on 'kb.scale' would not be used: it is fused into one kernel with 'kb.softmax'
func.func @config_beside_anchor(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{#kb.config on 'kb.scale' would not be used: it is fused into one kernel with 'kb.softmax', whose config the kernel takes; put the config on the 'kb.softmax' (or on the kb.fusion), or compile with fuse=false to keep 'kb.scale' its own kernel}}
  %0 = kb.scale %x by 0.125 {config = #kb.config<threads = 64>} : tensor<8x64xf32>
  %1 = kb.softmax %0 : tensor<8x64xf32>
  return %1 : tensor<8x64xf32>
}

// -----

// The same beside a matmul, whose epilogue the chain becomes.
func.func @config_in_epilogue(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  // expected-error @+1 {{#kb.config on 'kb.relu' would not be used: it is fused into one kernel with 'kb.matmul'}}
  %1 = kb.relu %0 {config = #kb.config<vector = 2>} : tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}

// -----

// Two ops of one elementwise chain with different configs: one kernel
// cannot take both.
func.func @configs_disagree(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = kb.relu %x {config = #kb.config<threads = 128>} : tensor<64x64xf32>
  // expected-error @+1 {{#kb.config on 'kb.tanh' disagrees with the config on 'kb.relu', and both would be the config of the one kernel they are fused into; give the kernel one config (on the kb.fusion), or compile with fuse=false to keep them apart}}
  %1 = kb.tanh %0 {config = #kb.config<threads = 256>} : tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}

// kb-fuse-elementwise puts a fusion's anchor (its matmul, softmax or norm)
// right after the ops that compute its operands: the lowering takes every
// op after the anchor as its epilogue, so an epilogue op that does not read
// the anchor follows it even where the program wrote it first.
// In SwiGLU, silu(x W1) * (x W3), the silu of the first matmul's result
// came before the second matmul, the anchor: the epilogue had no value for
// it and kb-opt crashed in emitChainScalar (found by the torch.compile
// backend on a Llama block). exp(y) written before softmax(x) in
// exp(y) * softmax(x) was refused as a prologue value.
// RUN: kb-opt %s --fuse-elementwise | FileCheck %s
// Each function compiles (a bundle holds one): SwiGLU in two kernels, the
// softmax one in one.
// RUN: sed -n '/^func.func @swiglu/,/^}/p' %s | kb-opt --kb-compile="output=%t.1 chip=sm_90a" -o /dev/null
// RUN: python3 -c "import json; m = json.load(open('%t.1/manifest.json')); print(len(m['kernels']), 'kernels')" | FileCheck %s --check-prefix=TWO
// TWO: 2 kernels
// RUN: sed -n '/^func.func @exp_before_softmax/,/^}/p' %s | kb-opt --kb-compile="output=%t.2" -o /dev/null
// RUN: python3 -c "import json; m = json.load(open('%t.2/manifest.json')); print(len(m['kernels']), 'kernels')" | FileCheck %s --check-prefix=ONE
// ONE: 1 kernels

// CHECK-LABEL: func.func @swiglu
// CHECK: %[[A:.*]] = kb.matmul %arg0, %arg1
// CHECK: kb.fusion ins(%arg0, %arg2, %[[A]] :
// CHECK: ^bb0(%{{.*}}, %{{.*}}, %[[AA:.*]]: tensor<16x640xf32>):
// CHECK-NEXT: %[[B:.*]] = kb.matmul
// CHECK-NEXT: %[[S:.*]] = kb.silu %[[AA]]
// CHECK-NEXT: kb.mul %[[S]], %[[B]]
func.func @swiglu(%x: tensor<16x256xf32>, %w1: tensor<640x256xf32>, %w3: tensor<640x256xf32>) -> tensor<16x640xf32> {
  %a = kb.matmul %x, %w1 precision(ieee) transpose_b : tensor<16x256xf32>, tensor<640x256xf32> -> tensor<16x640xf32>
  %s = kb.silu %a : tensor<16x640xf32>
  %b = kb.matmul %x, %w3 precision(ieee) transpose_b : tensor<16x256xf32>, tensor<640x256xf32> -> tensor<16x640xf32>
  %m = kb.mul %s, %b : tensor<16x640xf32>
  return %m : tensor<16x640xf32>
}

// CHECK-LABEL: func.func @exp_before_softmax
// CHECK: kb.fusion ins(%arg0, %arg1 :
// CHECK: ^bb0(%[[X:.*]]: tensor<64x128xf32>, %[[Y:.*]]: tensor<64x128xf32>):
// CHECK-NEXT: %[[P:.*]] = kb.softmax %[[X]]
// CHECK-NEXT: %[[E:.*]] = kb.exp %[[Y]]
// CHECK-NEXT: kb.mul %[[P]], %[[E]]
func.func @exp_before_softmax(%x: tensor<64x128xf32>, %y: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = kb.exp %y : tensor<64x128xf32>
  %p = kb.softmax %x : tensor<64x128xf32>
  %m = kb.mul %p, %e : tensor<64x128xf32>
  return %m : tensor<64x128xf32>
}

// A prologue stays in front of its softmax, and the epilogue op written
// between them moves behind it.
// CHECK-LABEL: func.func @prologue_kept
// CHECK: kb.fusion
// CHECK: %[[R:.*]] = kb.relu
// CHECK-NEXT: %[[P:.*]] = kb.softmax %[[R]]
// CHECK-NEXT: %[[T:.*]] = kb.tanh
// CHECK-NEXT: kb.mul %[[P]], %[[T]]
func.func @prologue_kept(%x: tensor<64x128xf32>, %y: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %r = kb.relu %x : tensor<64x128xf32>
  %t = kb.tanh %y : tensor<64x128xf32>
  %p = kb.softmax %r : tensor<64x128xf32>
  %m = kb.mul %p, %t : tensor<64x128xf32>
  return %m : tensor<64x128xf32>
}

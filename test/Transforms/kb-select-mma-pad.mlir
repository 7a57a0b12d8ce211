// RUN: kb-opt %s --kb-select-mma=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s

// kb-select-mma alone on sm_90a, tf32 matmuls whose K is not a multiple of
// 4: wgmma's TMA copies need rows whose pitch is a multiple of 16 bytes, so
// A's rows get a kb.pad to a multiple of 32 floats in front (zeros after
// K), and B^T is padded to the same K (kb.transpose pad(32) for a row-major
// B, kb.pad for a given B^T): the matmul multiplies over the padded K and
// needs no padded_b. The input is pinned: no config but where a case sets
// one.

// A row-major B: pad A, transpose B with padded rows, both 2080 long.
// CHECK-LABEL: func.func @row_major_b
// CHECK: %[[T:.*]] = kb.transpose %arg1 pad(32) : tensor<2050x2048xf32> -> tensor<2048x2080xf32>
// CHECK: %[[P:.*]] = kb.pad %arg0 multiple(32) : tensor<2048x2050xf32> -> tensor<2048x2080xf32>
// CHECK: kb.matmul %[[P]], %[[T]] precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<2048x2080xf32>, tensor<2048x2080xf32> -> tensor<2048x2048xf32>
func.func @row_major_b(%a: tensor<2048x2050xf32>, %b: tensor<2050x2048xf32>) -> tensor<2048x2048xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<2048x2050xf32>, tensor<2050x2048xf32> -> tensor<2048x2048xf32>
  return %0 : tensor<2048x2048xf32>
}

// -----

// B given as B^T (nn.Linear's layout): both operands get a kb.pad; two
// matmuls that share A share its pad.
// CHECK-LABEL: func.func @given_bt
// CHECK: %[[PB:.*]] = kb.pad %arg1 multiple(32) : tensor<3000x3001xf32> -> tensor<3000x3008xf32>
// CHECK: %[[PA:.*]] = kb.pad %arg0 multiple(32) : tensor<3000x3001xf32> -> tensor<3000x3008xf32>
// CHECK: kb.matmul %[[PA]], %[[PB]] precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">}
// CHECK: %[[PC:.*]] = kb.pad %arg2 multiple(32) : tensor<2000x3001xf32> -> tensor<2000x3008xf32>
// CHECK-NOT: kb.pad
// CHECK: kb.matmul %[[PA]], %[[PC]] precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">}
func.func @given_bt(%a: tensor<3000x3001xf32>, %bt: tensor<3000x3001xf32>, %ct: tensor<2000x3001xf32>) -> (tensor<3000x3000xf32>, tensor<3000x2000xf32>) {
  %0 = kb.matmul %a, %bt precision(tf32) transpose_b : tensor<3000x3001xf32>, tensor<3000x3001xf32> -> tensor<3000x3000xf32>
  %1 = kb.matmul %a, %ct precision(tf32) transpose_b : tensor<3000x3001xf32>, tensor<2000x3001xf32> -> tensor<3000x2000xf32>
  return %0, %1 : tensor<3000x3000xf32>, tensor<3000x2000xf32>
}

// -----

// A batched matmul pads its rank-3 A; a matmul with an epilogue gets the
// pad in front of its fusion, whose A argument takes the padded type.
// CHECK-LABEL: func.func @batched_and_fused
// CHECK: kb.pad %arg0 multiple(32) : tensor<16x512x511xf32> -> tensor<16x512x512xf32>
// CHECK: kb.matmul {{.*}} precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<16x512x512xf32>, tensor<16x512x512xf32>
// CHECK: %[[T:.*]] = kb.transpose %arg3 pad(32) : tensor<1023x512xf32> -> tensor<512x1024xf32>
// CHECK: %[[P:.*]] = kb.pad %arg2 multiple(32) : tensor<1024x1023xf32> -> tensor<1024x1024xf32>
// CHECK: kb.fusion ins(%[[P]], %[[T]], %arg4 : tensor<1024x1024xf32>, tensor<512x1024xf32>, tensor<512xf32>)
// CHECK: ^bb0(%[[X:.*]]: tensor<1024x1024xf32>, %[[Y:.*]]: tensor<512x1024xf32>, %{{.*}}: tensor<512xf32>):
// CHECK: kb.matmul %[[X]], %[[Y]] precision(tf32) transpose_b
func.func @batched_and_fused(%a: tensor<16x512x511xf32>, %b: tensor<16x511x512xf32>,
                             %x: tensor<1024x1023xf32>, %y: tensor<1023x512xf32>, %bias: tensor<512xf32>)
    -> (tensor<16x512x512xf32>, tensor<1024x512xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<16x512x511xf32>, tensor<16x511x512xf32> -> tensor<16x512x512xf32>
  %1 = kb.fusion ins(%x, %y, %bias : tensor<1024x1023xf32>, tensor<1023x512xf32>, tensor<512xf32>) {
  ^bb0(%p: tensor<1024x1023xf32>, %q: tensor<1023x512xf32>, %r: tensor<512xf32>):
    %2 = kb.matmul %p, %q precision(tf32) : tensor<1024x1023xf32>, tensor<1023x512xf32> -> tensor<1024x512xf32>
    %3 = kb.bias_add %2, %r : tensor<1024x512xf32>, tensor<512xf32> -> tensor<1024x512xf32>
    kb.yield %3 : tensor<1024x512xf32>
  } -> tensor<1024x512xf32>
  return %0, %1 : tensor<16x512x512xf32>, tensor<1024x512xf32>
}

// -----

// Where the pads cost more than wgmma saves (32 rows times a matrix, bound
// by its bytes) mma.sync stays, with a remark naming the reason; a K that is
// a multiple of 4 gets no pad (and its row-major B no transpose); sm_90a's mma.sync set by hand gets none.
// CHECK-LABEL: func.func @stays
// CHECK-NOT: kb.pad
// CHECK: kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<mma = "mma_sync_tf32">}
// CHECK: kb.matmul %arg2, %arg3 precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<1024x1028xf32>
// CHECK-NOT: kb.pad
// CHECK: kb.matmul %arg4, %arg5 precision(tf32) {config = #kb.config<mma = "mma_sync_tf32">} : tensor<2048x2050xf32>
func.func @stays(%v: tensor<32x4099xf32>, %w: tensor<4099x4096xf32>,
                 %a: tensor<1024x1028xf32>, %b: tensor<1028x1024xf32>,
                 %c: tensor<2048x2050xf32>, %d: tensor<2050x2048xf32>)
    -> (tensor<32x4096xf32>, tensor<1024x1024xf32>, tensor<2048x2048xf32>) {
  // expected-remark @+1 {{mma.sync, not wgmma: this matmul is bound by its bytes, and the pad of A's rows (K = 4099 is not a multiple of 4) and the transpose of B that wgmma needs would move more than it saves}}
  %0 = kb.matmul %v, %w precision(tf32) : tensor<32x4099xf32>, tensor<4099x4096xf32> -> tensor<32x4096xf32>
  %1 = kb.matmul %a, %b precision(tf32) : tensor<1024x1028xf32>, tensor<1028x1024xf32> -> tensor<1024x1024xf32>
  %2 = kb.matmul %c, %d precision(tf32) {config = #kb.config<mma = "mma_sync_tf32">} : tensor<2048x2050xf32>, tensor<2050x2048xf32> -> tensor<2048x2048xf32>
  return %0, %1, %2 : tensor<32x4096xf32>, tensor<1024x1024xf32>, tensor<2048x2048xf32>
}

// -----

// A is also read by the epilogue (N = K): it cannot be padded in front of
// the fusion, so mma.sync, with the reason; and the IR is left as it was.
// CHECK-LABEL: func.func @a_read_twice
// CHECK-NOT: kb.pad
// CHECK-NOT: kb.transpose
// CHECK: kb.matmul %{{.*}}, %{{.*}} precision(tf32) : tensor<1024x1023xf32>, tensor<1023x1023xf32>
func.func @a_read_twice(%x: tensor<1024x1023xf32>, %y: tensor<1023x1023xf32>) -> tensor<1024x1023xf32> {
  // expected-remark @+1 {{mma.sync, not wgmma: A (or the given B^T) is a fusion input that other ops of the fusion also read, so its rows cannot be padded in front of it (K % 4 != 0)}}
  %0 = kb.fusion ins(%x, %y : tensor<1024x1023xf32>, tensor<1023x1023xf32>) {
  ^bb0(%p: tensor<1024x1023xf32>, %q: tensor<1023x1023xf32>):
    %1 = kb.matmul %p, %q precision(tf32) : tensor<1024x1023xf32>, tensor<1023x1023xf32> -> tensor<1024x1023xf32>
    %2 = kb.add %1, %p : tensor<1024x1023xf32>
    kb.yield %2 : tensor<1024x1023xf32>
  } -> tensor<1024x1023xf32>
  return %0 : tensor<1024x1023xf32>
}

// -----

// Negative: the same fusion with wgmma asked for by hand is an error.
func.func @a_read_twice_wgmma(%x: tensor<1024x1023xf32>, %y: tensor<1023x1023xf32>) -> tensor<1024x1023xf32> {
  // expected-error @+1 {{config asks for mma "wgmma_tf32", which reads rows 16-byte pitched; A (or the given B^T) is a fusion input that other ops of the fusion also read, so its rows cannot be padded in front of it (K % 4 != 0)}}
  %0 = kb.fusion ins(%x, %y : tensor<1024x1023xf32>, tensor<1023x1023xf32>) attributes {config = #kb.config<mma = "wgmma_tf32">} {
  ^bb0(%p: tensor<1024x1023xf32>, %q: tensor<1023x1023xf32>):
    %1 = kb.matmul %p, %q precision(tf32) : tensor<1024x1023xf32>, tensor<1023x1023xf32> -> tensor<1024x1023xf32>
    %2 = kb.add %1, %p : tensor<1024x1023xf32>
    kb.yield %2 : tensor<1024x1023xf32>
  } -> tensor<1024x1023xf32>
  return %0 : tensor<1024x1023xf32>
}

// -----

// A 16-bit B^T padded to 32 by its kb.transpose (K = 1500: 1504 rows) is
// shorter than A padded to a 128-byte line (64 bf16: 1536): B^T is padded
// again, to A's K, and the matmul multiplies over 1536 (no padded_b).
// CHECK-LABEL: func.func @bf16_transposed_b_short
// CHECK: %[[BT:.+]] = kb.transpose %{{.*}} pad(32) : tensor<1500x64xbf16> -> tensor<64x1504xbf16>
// CHECK-DAG: %[[B:.+]] = kb.pad %[[BT]] multiple(64) : tensor<64x1504xbf16> -> tensor<64x1536xbf16>
// CHECK-DAG: %[[A:.+]] = kb.pad %{{.*}} multiple(64) : tensor<64x1500xbf16> -> tensor<64x1536xbf16>
// CHECK: kb.matmul %[[A]], %[[B]] transpose_b {config = #kb.config<mma = "wgmma_bf16">} : tensor<64x1536xbf16>, tensor<64x1536xbf16> -> tensor<64x64xf32>
func.func @bf16_transposed_b_short(%a: tensor<64x1500xbf16>, %b: tensor<1500x64xbf16>) -> tensor<64x64xf32> {
  %bt = kb.transpose %b pad(32) : tensor<1500x64xbf16> -> tensor<64x1504xbf16>
  %c = kb.matmul %a, %bt transpose_b padded_b : tensor<64x1500xbf16>, tensor<64x1504xbf16> -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

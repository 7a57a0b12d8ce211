// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile,kb-promote-shared-memory{chip=sm_90a}))" -split-input-file -verify-diagnostics | FileCheck %s

// On sm_90a precision(tf32) becomes wgmma (on sm_90 it stays mma.sync:
// kb-select-mma.mlir). A row-major B (N % 4 == 0) is read as it is: the
// kernel computes C^T = B^T A^T with B^T's fragments in registers, one
// warpgroup per 64 columns, so the big tile is 256 x 128 (two warpgroups
// and a whole producer warpgroup, 384 threads). Four 128-byte-swizzled
// stages, no padding.
// CHECK-LABEL: func.func @wgmma
// CHECK-NOT: kb.transpose
// CHECK: kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<block = [256, 128, 32], threads = 384, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">}
// A B that is already K-major is used as it is, one warpgroup per 64 rows;
// its 256 tiles of 128 x 256 take a persistent grid (kb-tile's persistent
// rule, kb-tile-persistent.mlir).
// CHECK: kb.matmul %arg0, %arg2 precision(tf32) transpose_b {config = #kb.config<block = [128, 256, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 132, copy = "tma">}
// A medium shape: 128 x 128 tiles in two chunks of 24 and 23 k tiles
// (kb-tile's medium rule, kb-tile-medium.mlir), five stages (96 blocks:
// one an SM); K = 1500 needs nothing else: TMA zero-fills past K.
// CHECK: kb.matmul %arg3, %arg4 precision(tf32) {config = #kb.config<block = [128, 128, 32], threads = 384, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">} : tensor<1000x1500xf32>, tensor<1500x700xf32>
// K not a multiple of 4 (rows not 16-byte aligned) stays on mma.sync.
// CHECK-NOT: kb.transpose
// CHECK: kb.matmul {{.*}}mma = "mma_sync_tf32"
// ieee stays FFMA, tf32x3 mma.sync.
// CHECK: mma = "ffma"
// CHECK: mma = "mma_sync_tf32x3"
func.func @wgmma(%a: tensor<4096x4096xf32>, %b: tensor<4096x2048xf32>, %bt: tensor<2048x4096xf32>,
                 %s: tensor<1000x1500xf32>, %sb: tensor<1500x700xf32>,
                 %o: tensor<64x30xf32>, %ob: tensor<30x64xf32>)
    -> (tensor<4096x2048xf32>, tensor<4096x2048xf32>, tensor<1000x700xf32>, tensor<64x64xf32>,
        tensor<4096x4096xf32>, tensor<4096x4096xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<4096x4096xf32>, tensor<4096x2048xf32> -> tensor<4096x2048xf32>
  %1 = kb.matmul %a, %bt precision(tf32) transpose_b : tensor<4096x4096xf32>, tensor<2048x4096xf32> -> tensor<4096x2048xf32>
  %2 = kb.matmul %s, %sb precision(tf32) : tensor<1000x1500xf32>, tensor<1500x700xf32> -> tensor<1000x700xf32>
  // expected-remark @+1 {{K = 30 is not a multiple of 4}}
  %3 = kb.matmul %o, %ob precision(tf32) : tensor<64x30xf32>, tensor<30x64xf32> -> tensor<64x64xf32>
  %4 = kb.matmul %a, %a precision(ieee) : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %5 = kb.matmul %a, %a precision(tf32x3) : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4096x2048xf32>, tensor<4096x2048xf32>, tensor<1000x700xf32>, tensor<64x64xf32>, tensor<4096x4096xf32>, tensor<4096x4096xf32>
}

// -----

// A matmul with an epilogue reads its row-major B as it is. Where N % 4 !=
// 0 the transpose goes in front of the fusion and the fusion's B argument
// takes the transposed type (padded to 32 floats: K = 500).
// CHECK-LABEL: func.func @epilogue_odd_n
// CHECK: %[[T:.*]] = kb.transpose %arg1 pad(32) {{.*}} : tensor<500x250xf32> -> tensor<250x512xf32>
// CHECK: kb.fusion ins(%arg0, %[[T]], %arg2 : tensor<1024x500xf32>, tensor<250x512xf32>, tensor<250xf32>)
// CHECK: ^bb0(%{{.*}}: tensor<1024x500xf32>, %[[B:.*]]: tensor<250x512xf32>, %{{.*}}: tensor<250xf32>):
// CHECK: kb.matmul %{{.*}}, %[[B]] precision(tf32) transpose_b padded_b
// CHECK-LABEL: func.func @epilogue(
// CHECK-NOT: kb.transpose
// CHECK: kb.fusion ins(%arg0, %arg1, %arg2 : tensor<1024x512xf32>, tensor<512x256xf32>, tensor<256xf32>)
// CHECK: kb.matmul %{{.*}}, %{{.*}} precision(tf32) :
func.func @epilogue_odd_n(%a: tensor<1024x500xf32>, %b: tensor<500x250xf32>, %bias: tensor<250xf32>) -> tensor<1024x250xf32> {
  %0 = kb.fusion ins(%a, %b, %bias : tensor<1024x500xf32>, tensor<500x250xf32>, tensor<250xf32>) {
  ^bb0(%x: tensor<1024x500xf32>, %y: tensor<500x250xf32>, %z: tensor<250xf32>):
    %1 = kb.matmul %x, %y precision(tf32) : tensor<1024x500xf32>, tensor<500x250xf32> -> tensor<1024x250xf32>
    %2 = kb.bias_add %1, %z : tensor<1024x250xf32>, tensor<250xf32> -> tensor<1024x250xf32>
    kb.yield %2 : tensor<1024x250xf32>
  } -> tensor<1024x250xf32>
  return %0 : tensor<1024x250xf32>
}
func.func @epilogue(%a: tensor<1024x512xf32>, %b: tensor<512x256xf32>, %bias: tensor<256xf32>) -> tensor<1024x256xf32> {
  %0 = kb.fusion ins(%a, %b, %bias : tensor<1024x512xf32>, tensor<512x256xf32>, tensor<256xf32>) {
  ^bb0(%x: tensor<1024x512xf32>, %y: tensor<512x256xf32>, %z: tensor<256xf32>):
    %1 = kb.matmul %x, %y precision(tf32) : tensor<1024x512xf32>, tensor<512x256xf32> -> tensor<1024x256xf32>
    %2 = kb.bias_add %1, %z : tensor<1024x256xf32>, tensor<256xf32> -> tensor<1024x256xf32>
    kb.yield %2 : tensor<1024x256xf32>
  } -> tensor<1024x256xf32>
  return %0 : tensor<1024x256xf32>
}


// -----

func.func @wgmma_ieee(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{config asks for mma "wgmma_tf32", but precision(ieee) needs fp32 arithmetic}}
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<mma = "wgmma_tf32">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// wgmma asked for by hand where K % 4 != 0: A's rows are padded to 32
// floats (kb.pad, configured by kb-select-config) and B^T's the same.
// CHECK-LABEL: func.func @wgmma_odd_k
// CHECK: kb.transpose %arg1 pad(32) {{.*}} : tensor<30x64xf32> -> tensor<64x32xf32>
// CHECK: kb.pad %arg0 multiple(32) {config = #kb.config<threads = 256>} : tensor<64x30xf32> -> tensor<64x32xf32>
// CHECK: kb.matmul {{.*}} precision(tf32) transpose_b {config = #kb.config<{{.*}}mma = "wgmma_tf32", copy = "tma">} : tensor<64x32xf32>, tensor<64x32xf32>
func.func @wgmma_odd_k(%a: tensor<64x30xf32>, %b: tensor<30x64xf32>) -> tensor<64x64xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<64x30xf32>, tensor<30x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @wgmma_padded(%a: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{wgmma tiles are swizzled, not padded: pad must be [0, 0]}}
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<mma = "wgmma_tf32", pad = [4, 8]>} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

func.func @wgmma_two_stages(%a: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{wgmma needs at least 3 stages (copies two tiles ahead of the one in flight); got 2}}
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<mma = "wgmma_tf32", stages = 2>} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

func.func @wgmma_bad_tile(%a: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{wgmma tiles need BM a multiple of 64 (one warpgroup per 64 rows), BN a multiple of 8 up to 256 and BK = 32; got block = [96, 128, 32]}}
  %0 = kb.matmul %a, %a precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [96, 128, 32]>} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

func.func @wgmma_bad_tile_row_major_b(%a: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{wgmma tiles with a row-major B need BN a multiple of 64 (one warpgroup per 64 columns), BM a multiple of 8 up to 256 and BK = 32; got block = [128, 96, 32]}}
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<mma = "wgmma_tf32", block = [128, 96, 32]>} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A row-major B with cp.async copies (asked for) gets the transpose in
// front: the kernel reads a row-major B through TMA only.
// CHECK-LABEL: func.func @row_major_b_cp_async
// CHECK: %[[T:.*]] = kb.transpose %arg0
// CHECK: kb.matmul %arg0, %[[T]] precision(tf32) transpose_b {{.*}}copy = "cp_async">}
func.func @row_major_b_cp_async(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<copy = "cp_async">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// copy: TMA by default; a config that asks for cp.async keeps it, and its
// shared memory has no mbarriers (4 x (128 + 256) x 128 + 1024 bytes).
// CHECK-LABEL: func.func @copy_kept
// CHECK: kb.matmul {{.*}}mma = "wgmma_tf32", copy = "cp_async">}
func.func @copy_kept(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = kb.matmul %a, %a precision(tf32) transpose_b {config = #kb.config<copy = "cp_async">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

func.func @tma_on_ffma(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  // expected-error @+1 {{config asks for copy = "tma", which only the wgmma kernel has (mma = "wgmma_tf32", chip sm_90a, precision(tf32)); this matmul gets mma = "ffma"}}
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<copy = "tma">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

func.func @bad_copy(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+2 {{#kb.config 'copy' must be "registers", "cp_async" or "tma", got "dma"}}
  // expected-error @+1 {{failed to parse KB_ConfigAttr parameter 'copy'}}
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<copy = "dma">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @wgmma_too_much_shared(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  // expected-error @+1 {{config needs 394336 bytes of shared memory per block (block = [256, 256, 32], stages = 6); sm_90a allows at most 232448}}
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<mma = "wgmma_tf32", block = [256, 256, 32], stages = 6>} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// Two matmuls reading one row-major B that must be transposed (N % 4 !=
// 0) share one transpose.
// CHECK-LABEL: func.func @shared_b
// CHECK: %[[T:.*]] = kb.transpose %arg2
// CHECK-NOT: kb.transpose
// CHECK: kb.matmul %arg0, %[[T]] precision(tf32) transpose_b
// CHECK: kb.matmul %arg1, %[[T]] precision(tf32) transpose_b
func.func @shared_b(%a: tensor<512x256xf32>, %c: tensor<512x256xf32>, %b: tensor<256x510xf32>) -> (tensor<512x510xf32>, tensor<512x510xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<512x256xf32>, tensor<256x510xf32> -> tensor<512x510xf32>
  %1 = kb.matmul %c, %b precision(tf32) : tensor<512x256xf32>, tensor<256x510xf32> -> tensor<512x510xf32>
  return %0, %1 : tensor<512x510xf32>, tensor<512x510xf32>
}

// -----

// kb-tile takes the largest wgmma tile whose grid covers 90% of the 132 SMs:
// 2048^3 keeps 128x256 (128 blocks), 1024^3 gets 128x64 (128 blocks; 128x128
// would give 64).
// CHECK-LABEL: func.func @coverage
// CHECK: kb.matmul {{.*}}block = [128, 256, 32], threads = 288{{.*}}tensor<2048x2048xf32>
// CHECK: kb.matmul {{.*}}block = [128, 64, 32], threads = 288{{.*}}tensor<1024x1024xf32>
// 64x64 where A's rows are whole lines (K = 1024), 64x128 where they are
// not (K = 1000), 64x64 again where 64x128 would leave more than half of
// the SMs idle (4 x 11 blocks). With B^T, K % 32 != 0 stays out of the
// few-tiles model (its 128 x 192 in 4 chunks ran 0.0230 ms, 64 x 128
// 0.0224, run 11). (32 k tiles: under the medium rule's 48.)
// CHECK: kb.matmul {{.*}}block = [64, 64, 32], threads = 160{{.*}}tensor<1000x1024xf32>
// CHECK: kb.matmul {{.*}}block = [64, 128, 32], threads = 160{{.*}}tensor<1000x1000xf32>
// CHECK: kb.matmul {{.*}}block = [64, 64, 32], threads = 160{{.*}}tensor<256x1000xf32>
func.func @coverage(%a: tensor<2048x2048xf32>, %s: tensor<1024x1024xf32>,
                    %x: tensor<1000x1024xf32>, %xb: tensor<700x1024xf32>,
                    %y: tensor<1000x1000xf32>, %yb: tensor<700x1000xf32>,
                    %z: tensor<256x1000xf32>)
    -> (tensor<2048x2048xf32>, tensor<1024x1024xf32>, tensor<1000x700xf32>,
        tensor<1000x700xf32>, tensor<256x700xf32>) {
  %0 = kb.matmul %a, %a precision(tf32) transpose_b : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  %1 = kb.matmul %s, %s precision(tf32) transpose_b : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  %2 = kb.matmul %x, %xb precision(tf32) transpose_b : tensor<1000x1024xf32>, tensor<700x1024xf32> -> tensor<1000x700xf32>
  %3 = kb.matmul %y, %yb precision(tf32) transpose_b : tensor<1000x1000xf32>, tensor<700x1000xf32> -> tensor<1000x700xf32>
  %4 = kb.matmul %z, %yb precision(tf32) transpose_b : tensor<256x1000xf32>, tensor<700x1000xf32> -> tensor<256x700xf32>
  return %0, %1, %2, %3, %4 : tensor<2048x2048xf32>, tensor<1024x1024xf32>, tensor<1000x700xf32>, tensor<1000x700xf32>, tensor<256x700xf32>
}

// -----

// A fusion whose epilogue also reads B: wgmma reads a row-major B as it is
// (N % 4 == 0), so nothing needs transposing. Where N % 4 != 0 B cannot get
// transposed in front of the fusion: the default stays on mma.sync (no
// transpose), a forced wgmma is an error.
// CHECK-LABEL: func.func @b_read_twice
// CHECK-NOT: kb.transpose
// CHECK: kb.fusion
// CHECK: mma = "wgmma_tf32"
// CHECK-LABEL: func.func @b_read_twice_odd
// CHECK-NOT: kb.transpose
// CHECK: kb.fusion
// CHECK: mma = "mma_sync_tf32"
func.func @b_read_twice(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = kb.fusion ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
  ^bb0(%x: tensor<1024x1024xf32>, %y: tensor<1024x1024xf32>):
    %1 = kb.matmul %x, %y precision(tf32) : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
    %2 = kb.add %1, %y : tensor<1024x1024xf32>
    kb.yield %2 : tensor<1024x1024xf32>
  } -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}
func.func @b_read_twice_odd(%a: tensor<1022x1022xf32>, %b: tensor<1022x1022xf32>) -> tensor<1022x1022xf32> {
  // expected-remark @+1 {{mma.sync, not wgmma: B is a fusion input that other ops of the fusion also read, so it cannot be transposed K-major in front of it}}
  %0 = kb.fusion ins(%a, %b : tensor<1022x1022xf32>, tensor<1022x1022xf32>) {
  ^bb0(%x: tensor<1022x1022xf32>, %y: tensor<1022x1022xf32>):
    %1 = kb.matmul %x, %y precision(tf32) : tensor<1022x1022xf32>, tensor<1022x1022xf32> -> tensor<1022x1022xf32>
    %2 = kb.add %1, %y : tensor<1022x1022xf32>
    kb.yield %2 : tensor<1022x1022xf32>
  } -> tensor<1022x1022xf32>
  return %0 : tensor<1022x1022xf32>
}

// -----

func.func @b_read_twice_forced(%a: tensor<64x64xf32>, %b: tensor<64x62xf32>) -> tensor<64x62xf32> {
  // expected-error @+1 {{config asks for mma "wgmma_tf32", which reads a row-major B only when N % 4 == 0 and the copies are TMA's, else K-major; B is a fusion input that other ops of the fusion also read, so it cannot be transposed in front of it}}
  %0 = kb.fusion ins(%a, %b : tensor<64x64xf32>, tensor<64x62xf32>) attributes {config = #kb.config<mma = "wgmma_tf32", copy = "tma">} {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x62xf32>):
    %1 = kb.matmul %x, %y precision(tf32) : tensor<64x64xf32>, tensor<64x62xf32> -> tensor<64x62xf32>
    %2 = kb.add %1, %y : tensor<64x62xf32>
    kb.yield %2 : tensor<64x62xf32>
  } -> tensor<64x62xf32>
  return %0 : tensor<64x62xf32>
}

// -----

// A config as kb-opt prints it (threads counting the producer warp) goes
// through the passes again unchanged; so does the form with a producer
// warpgroup (384 threads: 128 B^T rows with TMA may ask for it).
// CHECK-LABEL: func.func @round_trip
// CHECK: kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [128, 256, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">}
// CHECK: kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [128, 256, 32], threads = 384, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">}
func.func @round_trip(%a: tensor<4096x4096xf32>, %bt: tensor<2048x4096xf32>) -> tensor<4096x2048xf32> {
  %0 = kb.matmul %a, %bt precision(tf32) transpose_b {config = #kb.config<block = [128, 256, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<4096x4096xf32>, tensor<2048x4096xf32> -> tensor<4096x2048xf32>
  %1 = kb.matmul %a, %bt precision(tf32) transpose_b {config = #kb.config<block = [128, 256, 32], threads = 384, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<4096x4096xf32>, tensor<2048x4096xf32> -> tensor<4096x2048xf32>
  return %1 : tensor<4096x2048xf32>
}

// -----

// Other counts are refused: 320 for 128 B^T rows (neither a producer warp
// nor a warpgroup), 384 for 64 rows (a producer warpgroup only beside two
// consumer warpgroups).
func.func @bt_threads(%a: tensor<4096x4096xf32>, %bt: tensor<2048x4096xf32>) -> tensor<4096x2048xf32> {
  // expected-error @+1 {{config asks for 320 threads, but its tiles and TMA's producer warp take 288}}
  %0 = kb.matmul %a, %bt precision(tf32) transpose_b {config = #kb.config<block = [128, 256, 32], threads = 320, copy = "tma">} : tensor<4096x4096xf32>, tensor<2048x4096xf32> -> tensor<4096x2048xf32>
  return %0 : tensor<4096x2048xf32>
}

// -----

func.func @bt_threads_64(%a: tensor<4096x4096xf32>, %bt: tensor<2048x4096xf32>) -> tensor<4096x2048xf32> {
  // expected-error @+1 {{config asks for 384 threads, but its tiles and TMA's producer warp take 160}}
  %0 = kb.matmul %a, %bt precision(tf32) transpose_b {config = #kb.config<block = [64, 256, 32], threads = 384, copy = "tma">} : tensor<4096x4096xf32>, tensor<2048x4096xf32> -> tensor<4096x2048xf32>
  return %0 : tensor<4096x2048xf32>
}

// -----

// A row-major B's block is two consumer warpgroups and a producer
// warpgroup: a hand-set count for the K-major layout (288) is refused.
func.func @row_major_b_threads(%a: tensor<512x200xf32>, %b: tensor<200x256xf32>) -> tensor<512x256xf32> {
  // expected-error @+1 {{config asks for 288 threads, but its tiles and TMA's producer warpgroup take 384}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32", block = [256, 128, 32], threads = 288>} : tensor<512x200xf32>, tensor<200x256xf32> -> tensor<512x256xf32>
  return %0 : tensor<512x256xf32>
}

// -----

// A persistent grid is the wgmma kernel's: an ieee matmul (FFMA) with one
// is refused, not handed on to fail in the lowering.
func.func @grid_on_ieee(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  // expected-error @+1 {{config asks for grid = 132 (a persistent grid), which only the wgmma kernel has (mma = "wgmma_tf32", chip sm_90a, precision(tf32)); this matmul gets mma = "ffma"}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<grid = 132>} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// Clusters of two sharing B^T's tile are the wgmma kernel's too: an ieee
// matmul (FFMA) with cluster = 2 is refused here, not turned into a config
// the attribute's verifier refuses (kb-compile's fuzzer found the assert
// that did: fuzz/regressions/kb-compile/select_mma_cluster_on_ffma_assert.mlir).
func.func @cluster_on_ieee(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{config asks for cluster = 2 (blocks sharing B^T's tile), which only the wgmma kernel has (mma = "wgmma_tf32", chip sm_90a, precision(tf32)); this matmul gets mma = "ffma"}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<cluster = 2>} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// So is the TMA-store epilogue: store = "tma" on an ieee matmul (FFMA) is
// refused here too (kb-compile's fuzzer found the assert on sm_90's
// mma.sync: fuzz/regressions/kb-compile/select_mma_store_tma_on_mma_sync_assert.mlir).
func.func @store_tma_on_ieee(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{config asks for store = "tma", which only the wgmma kernel has (mma = "wgmma_tf32", chip sm_90a, precision(tf32)); this matmul gets mma = "ffma"}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<store = "tma">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// And a split summed in a cluster (reduce = "cluster") on an ieee matmul
// (found by reading the refusals above after adding the field: the assert
// build aborted in ConfigAttr::get; fuzz/regressions/kb-compile/
// select_mma_reduce_cluster_on_mma_sync_assert.mlir is the sm_90 form).
func.func @reduce_cluster_on_ieee(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{config asks for reduce = "cluster" (split-K summed in a cluster of two blocks), which only the wgmma kernel has (mma = "wgmma_tf32", chip sm_90a, precision(tf32)); this matmul gets mma = "ffma"}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<split = 2, reduce = "cluster">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// wgmma's default stages: four, and a fifth where it keeps the blocks an SM
// that shared memory allows and a stage is at most 32 KB: 128 x 128 tiles
// (160 KB at five, one block an SM as at four) take five; 256 x 64 (40 KB a
// stage), 64 x 128 (two blocks at four, one at five) and 128 x 256 (five do
// not fit) keep four. Hand-set stages are kept.
// CHECK-LABEL: func.func @wgmma_fifth_stage
// CHECK: block = [128, 128, 32], threads = 288, stages = 5,
// CHECK: block = [256, 64, 32], threads = 544, stages = 4,
// CHECK: block = [64, 128, 32], threads = 160, stages = 4,
// CHECK: block = [128, 256, 32], threads = 288, stages = 4,
// CHECK: block = [128, 128, 32], threads = 288, stages = 4,
func.func @wgmma_fifth_stage(%a: tensor<2048x2048xf32>) -> (tensor<2048x2048xf32>, tensor<2048x2048xf32>, tensor<2048x2048xf32>, tensor<2048x2048xf32>, tensor<2048x2048xf32>) {
  %0 = kb.matmul %a, %a precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [128, 128, 32]>} : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  %1 = kb.matmul %a, %a precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [256, 64, 32]>} : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  %2 = kb.matmul %a, %a precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [64, 128, 32]>} : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  %3 = kb.matmul %a, %a precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [128, 256, 32]>} : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  %4 = kb.matmul %a, %a precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [128, 128, 32], stages = 4>} : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  return %0, %1, %2, %3, %4 : tensor<2048x2048xf32>, tensor<2048x2048xf32>, tensor<2048x2048xf32>, tensor<2048x2048xf32>, tensor<2048x2048xf32>
}

// -----

// The fifth stage where the grid has no more blocks an SM than five stages
// allow (wgmmaDefaultStages): 64 x 128 tiles fit two blocks an SM at four
// stages and one at five, so a grid of 16 x 8 = 128 blocks (at most one an
// SM anyway) gets five and 2048 x 2048's 512 blocks keep four; 64 x 64 tiles
// (three an SM at four, two at five) get five in 16 x 16 = 256 blocks
// (two an SM); 128 x 64 keeps four even in a small grid (kb-tune measured
// it neutral there); a split counts its chunks' blocks (64 x 128 in 2
// chunks: 256 blocks, four stages).
// CHECK-LABEL: func.func @wgmma_fifth_stage_small_grid
// CHECK: block = [64, 128, 32], threads = 160, stages = 5,
// CHECK: block = [64, 128, 32], threads = 160, stages = 4,
// CHECK: block = [64, 64, 32], threads = 160, stages = 5,
// CHECK: block = [128, 64, 32], threads = 288, stages = 4,
// CHECK: block = [64, 128, 32], threads = 160, stages = 4,
func.func @wgmma_fifth_stage_small_grid(%a: tensor<1024x4096xf32>, %b: tensor<1024x4096xf32>, %c: tensor<2048x4096xf32>) -> (tensor<1024x1024xf32>, tensor<2048x2048xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [64, 128, 32]>} : tensor<1024x4096xf32>, tensor<1024x4096xf32> -> tensor<1024x1024xf32>
  %1 = kb.matmul %c, %c precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [64, 128, 32]>} : tensor<2048x4096xf32>, tensor<2048x4096xf32> -> tensor<2048x2048xf32>
  %2 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [64, 64, 32]>} : tensor<1024x4096xf32>, tensor<1024x4096xf32> -> tensor<1024x1024xf32>
  %3 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [128, 64, 32]>} : tensor<1024x4096xf32>, tensor<1024x4096xf32> -> tensor<1024x1024xf32>
  %4 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [64, 128, 32], split = 2>} : tensor<1024x4096xf32>, tensor<1024x4096xf32> -> tensor<1024x1024xf32>
  return %0, %1, %2, %3, %4 : tensor<1024x1024xf32>, tensor<2048x2048xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>
}

// -----

// The grid the fifth stage is weighed against counts the batch and a
// persistent grid: 64 x 128 tiles of 512 x 1024 are 64 blocks, 128 in a
// batch of 2 (five stages), 256 in a batch of 4 (four); a persistent grid
// of 132 blocks (five) or 264 (four).
// CHECK-LABEL: func.func @wgmma_fifth_stage_batch_and_grid
// CHECK: block = [64, 128, 32], threads = 160, stages = 5,
// CHECK: block = [64, 128, 32], threads = 160, stages = 4,
// CHECK: block = [64, 128, 32], threads = 160, stages = 5,{{.*}}grid = 132
// CHECK: block = [64, 128, 32], threads = 160, stages = 4,{{.*}}grid = 264
func.func @wgmma_fifth_stage_batch_and_grid(%a2: tensor<2x512x4096xf32>, %b2: tensor<2x1024x4096xf32>, %a4: tensor<4x512x4096xf32>, %b4: tensor<4x1024x4096xf32>, %a: tensor<4096x4096xf32>) -> (tensor<2x512x1024xf32>, tensor<4x512x1024xf32>, tensor<4096x4096xf32>, tensor<4096x4096xf32>) {
  %0 = kb.matmul %a2, %b2 precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [64, 128, 32]>} : tensor<2x512x4096xf32>, tensor<2x1024x4096xf32> -> tensor<2x512x1024xf32>
  %1 = kb.matmul %a4, %b4 precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [64, 128, 32]>} : tensor<4x512x4096xf32>, tensor<4x1024x4096xf32> -> tensor<4x512x1024xf32>
  %2 = kb.matmul %a, %a precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [64, 128, 32], grid = 132>} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %3 = kb.matmul %a, %a precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", block = [64, 128, 32], grid = 264>} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0, %1, %2, %3 : tensor<2x512x1024xf32>, tensor<4x512x1024xf32>, tensor<4096x4096xf32>, tensor<4096x4096xf32>
}

// -----

// Waves: 16 x 384 x 384 x 768 in 128 x 128 tiles is 144 blocks, one an SM:
// a second wave of 12; 256 x 128 tiles are 96 blocks, under 90% of the SMs
// but one wave of twice the work at the full rate: 256 x 128 (kb-tune's
// exhaustive run: 0.0267 ms against 0.0323). 32 x 256 x 256 x 1024 in 128 x
// 128 tiles is 128 blocks, one wave: 128 x 128 (its exhaustive best).
// CHECK-LABEL: func.func @wgmma_waves
// CHECK: block = [256, 128, 32], threads = 384, stages = 4,
// CHECK: block = [128, 128, 32], threads = 384, stages = 5,
func.func @wgmma_waves(%a: tensor<16x384x768xf32>, %b: tensor<16x768x384xf32>, %c: tensor<32x256x1024xf32>, %d: tensor<32x1024x256xf32>) -> (tensor<16x384x384xf32>, tensor<32x256x256xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<16x384x768xf32>, tensor<16x768x384xf32> -> tensor<16x384x384xf32>
  %1 = kb.matmul %c, %d precision(tf32) : tensor<32x256x1024xf32>, tensor<32x1024x256xf32> -> tensor<32x256x256xf32>
  return %0, %1 : tensor<16x384x384xf32>, tensor<32x256x256xf32>
}

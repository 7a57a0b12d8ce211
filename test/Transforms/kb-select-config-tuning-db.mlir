// kb-select-config (and kb-select-mma) with tuning-db=PATH: a kernel whose
// key (ops, shapes, precision, chip, kb version) has an entry in the kb-tune
// database takes the entry's fields as hand-set ones; everything else is
// decided as without a database.
// RUN: kb-opt %s --kb-select-mma="chip=sm_90a tuning-db=%S/Inputs/tuning-db.json" \
// RUN:   --kb-select-config="chip=sm_90a tuning-db=%S/Inputs/tuning-db.json" 2>&1 | FileCheck %s
// Without the database: kb's own choices.
// RUN: kb-opt %s --kb-select-mma="chip=sm_90a" --kb-select-config="chip=sm_90a" | FileCheck %s --check-prefix=NODB
// The key names the chip: on sm_90 no entry applies.
// RUN: kb-opt %s --kb-select-mma="chip=sm_90 tuning-db=%S/Inputs/tuning-db.json" \
// RUN:   --kb-select-config="chip=sm_90 tuning-db=%S/Inputs/tuning-db.json" | FileCheck %s --check-prefix=SM90
// Malformed databases are errors, never ignored.
// RUN: not kb-opt %s --kb-select-config="tuning-db=%S/Inputs/tuning-db-malformed.json" 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not kb-opt %s --kb-select-config="tuning-db=%S/Inputs/tuning-db-no-key.json" 2>&1 | FileCheck %s --check-prefix=NOKEY
// RUN: not kb-opt %s --kb-select-config="tuning-db=%S/Inputs/tuning-db-bad-entry.json" 2>&1 | FileCheck %s --check-prefix=BADENTRY
// RUN: not kb-opt %s --kb-select-config="tuning-db=%S/Inputs/no-such-db.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kb-opt %s --kb-select-config="tuning-db=%S/Inputs/lit.local.cfg" 2>&1 | FileCheck %s --check-prefix=NOTJSON

// CHECK-COUNT-2: warning: tuning database entry 'kb.matmul|b1 m128 n128 k128|tf32|sm_90a|kb 0.1.0' not used: its 'mma' differs from the one already set

// The entry's unit (mma.sync) is taken by kb-select-mma: no transpose for wgmma.
// CHECK-LABEL: func.func @tuned_mma_sync
// CHECK-NOT: kb.transpose
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [64, 128, 32], warp = [32, 32], stages = 3, mma = "mma_sync_tf32">
// NODB-LABEL: func.func @tuned_mma_sync
// NODB-NOT: kb.transpose
// NODB: mma = "wgmma_tf32"
// SM90-LABEL: func.func @tuned_mma_sync
// SM90: kb.matmul {{.*}}config = #kb.config<mma = "mma_sync_tf32">
func.func @tuned_mma_sync(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// CHECK-LABEL: func.func @tuned_wgmma
// CHECK-NOT: kb.transpose
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 64, 32], stages = 5, mma = "wgmma_tf32", copy = "tma">
func.func @tuned_wgmma(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<512x512xf32>, tensor<512x512xf32> -> tensor<512x512xf32>
  return %0 : tensor<512x512xf32>
}

// The key says how B is given: the B^T program of the same M, N, K takes
// the " bt" entry, not the row-major one above.
// CHECK-LABEL: func.func @tuned_wgmma_bt
// CHECK: kb.matmul {{.*}}transpose_b {config = #kb.config<block = [64, 128, 32], stages = 3, mma = "wgmma_tf32", copy = "tma">
func.func @tuned_wgmma_bt(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<512x512xf32>, tensor<512x512xf32> -> tensor<512x512xf32>
  return %0 : tensor<512x512xf32>
}

// A row-major B that kb-select-mma transposes for wgmma (N % 4 != 0) keeps
// the row-major key in both passes (no " bt", no warning).
// CHECK-LABEL: func.func @tuned_transposed_by_kb
// CHECK: kb.transpose
// CHECK: kb.matmul {{.*}}transpose_b {config = #kb.config<block = [64, 64, 32], stages = 3, mma = "wgmma_tf32">
func.func @tuned_transposed_by_kb(%a: tensor<256x256xf32>, %b: tensor<256x250xf32>) -> tensor<256x250xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<256x256xf32>, tensor<256x250xf32> -> tensor<256x250xf32>
  return %0 : tensor<256x250xf32>
}

// Split-K (kb-tile's field) is taken from the entry too.
// CHECK-LABEL: func.func @tuned_split
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [64, 64, 32], stages = 4, mma = "wgmma_tf32", copy = "tma", split = 8>
// NODB-LABEL: func.func @tuned_split
// NODB-NOT: split =
// NODB: return
func.func @tuned_split(%a: tensor<256x16384xf32>, %b: tensor<16384x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<256x16384xf32>, tensor<16384x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// CHECK-LABEL: func.func @tuned_softmax
// CHECK: kb.softmax {{.*}}config = #kb.config<{{.*}}threads = 128, vector = 2, strategy = "online">
// NODB-LABEL: func.func @tuned_softmax
// NODB: strategy = "registers"
func.func @tuned_softmax(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %0 = kb.softmax %x : tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}

// A hand-set field that disagrees with the entry: the entry is not used
// (@hand_set_wins below; kb-select-mma and kb-select-config both say so).
// CHECK-LABEL: func.func @hand_set_wins
// CHECK: kb.matmul {{.*}}config = #kb.config<mma = "mma_sync_tf32">
func.func @hand_set_wins(%a: tensor<128x128xf32>, %b: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "mma_sync_tf32">} : tensor<128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// No entry: kb's own choice.
// CHECK-LABEL: func.func @untuned
// CHECK: kb.softmax {{.*}}strategy = "registers"
func.func @untuned(%x: tensor<32x1024xf32>) -> tensor<32x1024xf32> {
  %0 = kb.softmax %x : tensor<32x1024xf32>
  return %0 : tensor<32x1024xf32>
}

// MALFORMED: error: kb-select-config: tuning database '{{.*}}tuning-db-malformed.json' is not JSON
// NOKEY: error: kb-select-config: tuning database '{{.*}}': entries[0] needs string fields "key" and "config"
// BADENTRY: error: 'kb.softmax' op tuning database entry 'kb.softmax|64x1024,->64x1024|-|sm_90a|kb 0.1.0' has a config that is not a #kb.config
// MISSING: error: kb-select-config: cannot read tuning database '{{.*}}no-such-db.json'
// NOTJSON: error: kb-select-config: tuning database '{{.*}}lit.local.cfg' is not JSON

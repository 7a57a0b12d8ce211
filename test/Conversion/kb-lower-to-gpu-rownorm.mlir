// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on the row kernels (RowNorm.cpp), configs written
// out: one block a row, every load of the row before the first reduction,
// two block reductions for layer_norm (mean, then the squared deviations
// held in registers: no second read of the row), rsqrt, one store each.

// CHECK: gpu.launch_func @k{{[0-9]+}}_layer_norm_module::@k{{[0-9]+}}_layer_norm blocks in (%c64, %c1, %c1{{.*}}) threads in (%c64{{.*}}, %c1{{.*}}, %c1{{.*}})
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_layer_norm
// CHECK-SAME: workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: scf.for
// CHECK-COUNT-4: vector.load {{.*}} : memref<65536xf32>, vector<4xf32>
// CHECK: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: arith.subf
// CHECK: gpu.barrier
// CHECK: math.rsqrt
// CHECK: vector.load {{.*}} : memref<1024xf32>, vector<4xf32>
// CHECK: vector.load {{.*}} : memref<1024xf32>, vector<4xf32>
// CHECK-NOT: vector.load {{.*}} : memref<65536xf32>
// CHECK: vector.store {{.*}} : memref<65536xf32>, vector<4xf32>
// CHECK: gpu.return
func.func @layer_norm(%x: tensor<64x1024xf32>, %w: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<64x1024xf32> {
  %0 = kb.layer_norm %x, %w, %b eps(1.0e-05) {config = #kb.config<threads = 64, vector = 4>} : tensor<64x1024xf32>, tensor<1024xf32>, tensor<1024xf32> -> tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}

// -----

// bf16: 16-byte loads of 8 values widened to f32, the product narrowed to
// bf16 at the store. One warp: the reduction is shuffles alone.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_rms_norm
// CHECK: vector.load {{.*}} : memref<65536xbf16>, vector<8xbf16>
// CHECK: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.shuffle xor
// CHECK-NOT: gpu.barrier
// CHECK: math.rsqrt
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store {{.*}} : memref<65536xbf16>, vector<8xbf16>
func.func @rms_norm(%x: tensor<64x1024xbf16>, %w: tensor<1024xbf16>) -> tensor<64x1024xbf16> {
  %0 = kb.rms_norm %x, %w eps(1.0e-06) {config = #kb.config<threads = 32, vector = 8>} : tensor<64x1024xbf16>, tensor<1024xbf16> -> tensor<64x1024xbf16>
  return %0 : tensor<64x1024xbf16>
}

// -----

// A row that does not fill the last chunk (100 = 2 x 32 + 36): the chunk
// past the end is loaded under a guard with the reduction's identity (here
// -inf for min, after the negation), and thread 0 stores the row's value.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_reduce
// CHECK: arith.constant dense<0x7F800000> : vector<1xf32>
// CHECK: scf.if
// CHECK: arith.negf
// CHECK: gpu.barrier
// CHECK: arith.negf
// CHECK: arith.cmpi eq
// CHECK: scf.if
// CHECK: memref.store
func.func @reduce_min(%x: tensor<8x100xf32>) -> tensor<8xf32> {
  %0 = kb.reduce %x min {config = #kb.config<threads = 64, vector = 1>} : tensor<8x100xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A residual add fused in front: the row is the add of two loads.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_fused_add_layer_norm
// CHECK: vector.load {{.*}} : memref<65536xf32>, vector<4xf32>
// CHECK: vector.load {{.*}} : memref<65536xf32>, vector<4xf32>
// CHECK: arith.addf
// CHECK: gpu.barrier
// CHECK: math.rsqrt
// CHECK: vector.store
func.func @fused(%x: tensor<64x1024xf32>, %r: tensor<64x1024xf32>, %w: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<64x1024xf32> {
  %0 = kb.fusion ins(%x, %r, %w, %b : tensor<64x1024xf32>, tensor<64x1024xf32>, tensor<1024xf32>, tensor<1024xf32>) attributes {config = #kb.config<threads = 64, vector = 4>} {
  ^bb0(%a: tensor<64x1024xf32>, %c: tensor<64x1024xf32>, %ww: tensor<1024xf32>, %bb: tensor<1024xf32>):
    %1 = kb.add %a, %c : tensor<64x1024xf32>
    %2 = kb.layer_norm %1, %ww, %bb eps(1.0e-05) : tensor<64x1024xf32>, tensor<1024xf32>, tensor<1024xf32> -> tensor<64x1024xf32>
    kb.yield %2 : tensor<64x1024xf32>
  } -> tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}

// -----

// A norm with an epilogue: the scale is applied to each lane before the
// bf16 store.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_fused_rms_norm_scale
// CHECK: math.rsqrt
// CHECK: arith.mulf
// CHECK: arith.mulf %{{.*}}, %cst
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store {{.*}} : memref<32768xbf16>, vector<8xbf16>
func.func @epilogue(%x: tensor<64x512xbf16>) -> tensor<64x512xbf16> {
  %0 = kb.fusion ins(%x : tensor<64x512xbf16>) attributes {config = #kb.config<threads = 64, vector = 8>} {
  ^bb0(%a: tensor<64x512xbf16>):
    %1 = kb.rms_norm %a eps(1.0e-06) : tensor<64x512xbf16> -> tensor<64x512xbf16>
    %2 = kb.scale %1 by 3.0 : tensor<64x512xbf16>
    kb.yield %2 : tensor<64x512xbf16>
  } -> tensor<64x512xbf16>
  return %0 : tensor<64x512xbf16>
}

// -----

// block = [2]: two rows a block of 64 threads, one warp a row (row = block
// x 2 + thread / 32, the lane indexes the columns): 8 blocks for 16 rows,
// each warp's four vectors of 8 bf16 loaded before its reduction, which is
// shuffles alone (no barrier, no workgroup buffer read); lane 0 of a
// kb.reduce's warp stores its row's value.
// CHECK: gpu.launch_func @k{{[0-9]+}}_rms_norm_module::@k{{[0-9]+}}_rms_norm blocks in (%c8, %c1, %c1{{.*}}) threads in (%c64{{.*}}, %c1{{.*}}, %c1{{.*}})
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_rms_norm
// CHECK: %[[BID:.+]] = gpu.block_id x
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[R2:.+]] = arith.muli %[[BID]], %c2
// CHECK: %[[WARP:.+]] = arith.divui %[[TID]], %c32
// CHECK: arith.addi %[[R2]], %[[WARP]]
// CHECK: arith.remui %[[TID]], %c32
// CHECK-COUNT-4: vector.load {{.*}} : memref<16384xbf16>, vector<8xbf16>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.shuffle xor
// CHECK-NOT: gpu.barrier
// CHECK: math.rsqrt
// CHECK: vector.store {{.*}} : memref<16384xbf16>, vector<8xbf16>
// CHECK: gpu.return
func.func @rms_norm_rows_a_block(%x: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<block = [2], threads = 64, vector = 8>} : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

// -----

// A bf16 row read as it is stays packed in registers between the passes:
// the first pass (the sum) widens each loaded vector with extf; after the
// mean's reduction the squared deviations re-widen the packed words by
// shifts and masks (lane 2i: word << 16, lane 2i + 1: word & 0xffff0000),
// and after the variance's the write re-widens them by prmt, so that no
// f32 lane is live across either reduction.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_layer_norm
// CHECK: %[[RAW:.+]] = vector.load {{.*}} : memref<16384xbf16>, vector<8xbf16>
// CHECK: arith.extf %[[RAW]] : vector<8xbf16> to vector<8xf32>
// CHECK: gpu.barrier
// CHECK: %[[W1:.+]] = vector.bitcast %[[RAW]] : vector<8xbf16> to vector<4xi32>
// CHECK: %[[E1:.+]] = vector.extract %[[W1]][0] : i32 from vector<4xi32>
// CHECK: arith.shli %[[E1]], %c16_i32 : i32
// CHECK: arith.andi %{{.*}}, %c-65536_i32 : i32
// CHECK: gpu.barrier
// CHECK-NOT: arith.extf {{.*}} : vector<8xbf16>
// CHECK: %[[W2:.+]] = vector.bitcast %[[RAW]] : vector<8xbf16> to vector<4xi32>
// CHECK: %[[E2:.+]] = vector.extract %[[W2]][0] : i32 from vector<4xi32>
// CHECK: nvvm.prmt <default> %c4164_i32, %[[E2]], %c0_i32
// CHECK: nvvm.prmt <default> %c12868_i32, %{{.*}}, %c0_i32
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store {{.*}} : memref<16384xbf16>, vector<8xbf16>
func.func @layer_norm_packed(%x: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  %0 = kb.layer_norm %x eps(1.0e-05) {config = #kb.config<threads = 64, vector = 8>} : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

// -----

// A prologue's row (here a bf16 residual add, computed in f32) is held in
// f32: nothing to re-widen.
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_fused_add_rms_norm
// CHECK: arith.addf
// CHECK: math.rsqrt
// CHECK-NOT: vector.bitcast
// CHECK-NOT: nvvm.prmt
// CHECK: gpu.return
func.func @prologue_not_packed(%x: tensor<16x1024xbf16>, %r: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  %0 = kb.fusion ins(%x, %r : tensor<16x1024xbf16>, tensor<16x1024xbf16>) attributes {config = #kb.config<threads = 64, vector = 8>} {
  ^bb0(%a: tensor<16x1024xbf16>, %c: tensor<16x1024xbf16>):
    %1 = kb.add %a, %c : tensor<16x1024xbf16>
    %2 = kb.rms_norm %1 eps(1.0e-06) : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
    kb.yield %2 : tensor<16x1024xbf16>
  } -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

// -----

// grid = 4 with block = [2]: a persistent grid of 4 blocks whose 8 warps
// take rows w, w + 8, ...: the first row's loads before the loop, then each
// iteration loads the next row (if there is one) before it reduces and
// stores the current one, carried in the loop's iter_args (packed bf16).
// CHECK: gpu.launch_func @k{{[0-9]+}}_rms_norm_module::@k{{[0-9]+}}_rms_norm blocks in (%c4, %c1, %c1{{.*}}) threads in (%c64{{.*}}, %c1{{.*}}, %c1{{.*}})
// CHECK-LABEL: gpu.func @k{{[0-9]+}}_rms_norm
// CHECK-COUNT-4: vector.load {{.*}} : memref<16384xbf16>, vector<8xbf16>
// CHECK: scf.for %[[ROW:.+]] = %{{.*}} to %c16 step %c8 iter_args({{.*}}) -> (vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// CHECK: %[[NEXT:.+]] = arith.addi %[[ROW]], %c8
// CHECK: %[[MORE:.+]] = arith.cmpi ult, %[[NEXT]], %c16
// CHECK: scf.if %[[MORE]] -> (vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// CHECK-COUNT-4: vector.load {{.*}} : memref<16384xbf16>, vector<8xbf16>
// CHECK: } else {
// CHECK: gpu.shuffle xor
// CHECK-NOT: gpu.barrier
// CHECK: math.rsqrt
// CHECK: vector.store {{.*}} : memref<16384xbf16>, vector<8xbf16>
// CHECK: scf.yield
func.func @rms_norm_persistent(%x: tensor<16x1024xbf16>) -> tensor<16x1024xbf16> {
  %0 = kb.rms_norm %x eps(1.0e-06) {config = #kb.config<block = [2], grid = 4, threads = 64, vector = 8>} : tensor<16x1024xbf16> -> tensor<16x1024xbf16>
  return %0 : tensor<16x1024xbf16>
}

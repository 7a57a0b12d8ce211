// RUN: kb-opt %s --kb-select-config=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// Column reductions (kb.reduce over a non-last axis, ColumnReduce.cpp): the
// vector as for rows but of the columns after the axis; 32 column threads,
// halved down to 8 while the grid has fewer than two blocks a
// multiprocessor (132 on sm_90); the reduced axis split over block = [S]
// slices of a 512-thread block. Whole-tensor reductions (WholeReduce.cpp):
// 512 threads, grid = one block a 512 vectors, at most 4 x 132.
// CHECK-LABEL: func.func @column_configs
// CHECK: kb.reduce %{{.*}} sum axis(0) {config = #kb.config<block = [64], threads = 512, vector = 4>} : tensor<8192x8192xf32>
// CHECK: kb.reduce %{{.*}} max axis(1) {config = #kb.config<block = [16], threads = 512, vector = 4>} : tensor<64x4096x4096xf32>
// CHECK: kb.reduce %{{.*}} mean axis(0) keepdim {config = #kb.config<block = [64], threads = 512, vector = 1>} : tensor<1000x1001xf32>
// CHECK: kb.reduce %{{.*}} min axis(0) {config = #kb.config<block = [64], threads = 512, vector = 8>} : tensor<4096x1000xbf16>
// CHECK: kb.reduce %{{.*}} sum axis(0) {config = #kb.config<block = [4], threads = 32, vector = 4>} : tensor<3x4096xf32>
// CHECK: kb.reduce %{{.*}} sum axis(0) {config = #kb.config<block = [16], threads = 32, vector = 4>} : tensor<1x8xf32>
func.func @column_configs(%a: tensor<8192x8192xf32>, %b: tensor<64x4096x4096xf32>, %c: tensor<1000x1001xf32>, %d: tensor<4096x1000xbf16>, %e: tensor<3x4096xf32>, %f: tensor<1x8xf32>)
    -> (tensor<8192xf32>, tensor<64x4096xf32>, tensor<1x1001xf32>, tensor<1000xbf16>, tensor<4096xf32>, tensor<8xf32>) {
  %0 = kb.reduce %a sum axis(0) : tensor<8192x8192xf32> -> tensor<8192xf32>
  %1 = kb.reduce %b max axis(1) : tensor<64x4096x4096xf32> -> tensor<64x4096xf32>
  %2 = kb.reduce %c mean axis(0) keepdim : tensor<1000x1001xf32> -> tensor<1x1001xf32>
  %3 = kb.reduce %d min axis(0) : tensor<4096x1000xbf16> -> tensor<1000xbf16>
  %4 = kb.reduce %e sum axis(0) : tensor<3x4096xf32> -> tensor<4096xf32>
  %5 = kb.reduce %f sum axis(0) : tensor<1x8xf32> -> tensor<8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<8192xf32>, tensor<64x4096xf32>, tensor<1x1001xf32>, tensor<1000xbf16>, tensor<4096xf32>, tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @whole_configs
// CHECK: kb.reduce %{{.*}} sum all {config = #kb.config<threads = 512, vector = 4, grid = 528>} : tensor<16384x16384xf32>
// CHECK: kb.reduce %{{.*}} max all {config = #kb.config<threads = 512, vector = 4, grid = 489>} : tensor<1000x1001xf32>
// CHECK: kb.reduce %{{.*}} mean all keepdim {config = #kb.config<threads = 512, vector = 1, grid = 1>} : tensor<7x3xf32>
func.func @whole_configs(%a: tensor<16384x16384xf32>, %b: tensor<1000x1001xf32>, %c: tensor<7x3xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1x1xf32>) {
  %0 = kb.reduce %a sum all : tensor<16384x16384xf32> -> tensor<1xf32>
  %1 = kb.reduce %b max all : tensor<1000x1001xf32> -> tensor<1xf32>
  %2 = kb.reduce %c mean all keepdim : tensor<7x3xf32> -> tensor<1x1xf32>
  return %0, %1, %2 : tensor<1xf32>, tensor<1xf32>, tensor<1x1xf32>
}

// -----

func.func @column_strategy(%x: tensor<64x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{column reduction config takes threads, vector and block = [slices] only}}
  %0 = kb.reduce %x sum axis(0) {config = #kb.config<grid = 4>} : tensor<64x64xf32> -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @column_threads(%x: tensor<64x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{column reduction config needs threads (96, at most 1024) a multiple of block[0] (64, the slices of the reduced axis)}}
  %0 = kb.reduce %x sum axis(0) {config = #kb.config<block = [64], threads = 96>} : tensor<64x64xf32> -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @whole_block(%x: tensor<64x64xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{whole-tensor reduction config takes threads, vector and grid only}}
  %0 = kb.reduce %x sum all {config = #kb.config<block = [4]>} : tensor<64x64xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

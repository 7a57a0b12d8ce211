// RUN: kb-opt %s --kb-select-mma=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// kb-select-mma alone on sm_90 (no wgmma), 16-bit matmuls: mma.sync
// m16n8k16 in the operands' type ("mma_sync_bf16", "mma_sync_f16"), with
// the operands the 16-bit kernels read: a row-major B as it is where N and
// K are multiples of 8 (16-byte rows), else B^T by a kb.transpose in
// front; A's rows padded where K % 8 != 0. The wgmma-only fields and a
// wgmma unit are refused with their location.

// CHECK-LABEL: func.func @bf16_row_major_b
// CHECK: kb.matmul %{{.*}}, %{{.*}} {config = #kb.config<mma = "mma_sync_bf16">} : tensor<256x512xbf16>, tensor<512x384xbf16> -> tensor<256x384xbf16>
func.func @bf16_row_major_b(%a: tensor<256x512xbf16>, %b: tensor<512x384xbf16>) -> tensor<256x384xbf16> {
  %0 = kb.matmul %a, %b : tensor<256x512xbf16>, tensor<512x384xbf16> -> tensor<256x384xbf16>
  return %0 : tensor<256x384xbf16>
}

// -----

// CHECK-LABEL: func.func @f16_transposed_b_batched
// CHECK: kb.matmul %{{.*}}, %{{.*}} transpose_b {config = #kb.config<mma = "mma_sync_f16">} : tensor<4x128x256xf16>, tensor<4x192x256xf16> -> tensor<4x128x192xf32>
func.func @f16_transposed_b_batched(%a: tensor<4x128x256xf16>, %b: tensor<4x192x256xf16>) -> tensor<4x128x192xf32> {
  %0 = kb.matmul %a, %b transpose_b : tensor<4x128x256xf16>, tensor<4x192x256xf16> -> tensor<4x128x192xf32>
  return %0 : tensor<4x128x192xf32>
}

// -----

// N % 8 != 0: B^T in front (16-byte rows of K), K % 64 != 0 pads B^T's rows.
// CHECK-LABEL: func.func @bf16_odd_n
// CHECK: %[[BT:.+]] = kb.transpose %{{.*}} pad(64) : tensor<520x100xbf16> -> tensor<100x576xbf16>
// CHECK: kb.matmul %{{.*}}, %[[BT]] transpose_b padded_b {config = #kb.config<mma = "mma_sync_bf16">}
func.func @bf16_odd_n(%a: tensor<64x520xbf16>, %b: tensor<520x100xbf16>) -> tensor<64x100xbf16> {
  %0 = kb.matmul %a, %b : tensor<64x520xbf16>, tensor<520x100xbf16> -> tensor<64x100xbf16>
  return %0 : tensor<64x100xbf16>
}

// -----

// K % 8 != 0: A's rows padded (and B^T's, made by the transpose).
// CHECK-LABEL: func.func @f16_odd_k
// CHECK-DAG: kb.pad %{{.*}} multiple(64) : tensor<96x100xf16> -> tensor<96x128xf16>
// CHECK: kb.matmul {{.*}} {config = #kb.config<mma = "mma_sync_f16">} : tensor<96x128xf16>, tensor<{{.*}}xf16> -> tensor<96x64xf16>
func.func @f16_odd_k(%a: tensor<96x100xf16>, %b: tensor<100x64xf16>) -> tensor<96x64xf16> {
  %0 = kb.matmul %a, %b : tensor<96x100xf16>, tensor<100x64xf16> -> tensor<96x64xf16>
  return %0 : tensor<96x64xf16>
}

// -----

// A hand-set mma.sync unit of the operands' type is kept.
// CHECK-LABEL: func.func @handset
// CHECK: mma = "mma_sync_bf16"
func.func @handset(%a: tensor<128x128xbf16>, %b: tensor<128x128xbf16>) -> tensor<128x128xbf16> {
  %0 = kb.matmul %a, %b {config = #kb.config<mma = "mma_sync_bf16">} : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

func.func @wgmma_on_sm_90(%a: tensor<128x128xbf16>, %b: tensor<128x128xbf16>) -> tensor<128x128xbf16> {
  // expected-error @+1 {{config asks for mma "wgmma_bf16", which needs chip sm_90a; the target is sm_90 (mma = "mma_sync_bf16" runs there)}}
  %0 = kb.matmul %a, %b {config = #kb.config<mma = "wgmma_bf16">} : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

func.func @wrong_type(%a: tensor<128x128xf16>, %b: tensor<128x128xf16>) -> tensor<128x128xf16> {
  // expected-error @+1 {{config asks for mma "mma_sync_bf16", but a 'f16' matmul computes on "wgmma_f16" (sm_90a) or "mma_sync_f16"}}
  %0 = kb.matmul %a, %b {config = #kb.config<mma = "mma_sync_bf16">} : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf16>
  return %0 : tensor<128x128xf16>
}

// -----

func.func @stream_k(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  // expected-error @+1 {{config asks for grid = 8 (a persistent grid), which only the wgmma kernel has (chip sm_90a); this matmul gets mma = "mma_sync_bf16"}}
  %0 = kb.matmul %a, %b {config = #kb.config<grid = 8, reduce = "stream">} : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xbf16>
  return %0 : tensor<512x512xbf16>
}

// -----

func.func @tma_copy(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  // expected-error @+1 {{config asks for copy = "tma", which only the wgmma kernel has (chip sm_90a); this matmul gets mma = "mma_sync_bf16"}}
  %0 = kb.matmul %a, %b {config = #kb.config<copy = "tma">} : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xbf16>
  return %0 : tensor<512x512xbf16>
}

// -----

func.func @operands_ba(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  // expected-error @+1 {{config asks for operands = "ba", which only the wgmma kernel has (chip sm_90a); this matmul gets mma = "mma_sync_bf16"}}
  %0 = kb.matmul %a, %b {config = #kb.config<operands = "ba">} : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xbf16>
  return %0 : tensor<512x512xbf16>
}

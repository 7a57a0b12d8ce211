//===- KBAttrs.td - kb enums and the #kb.config attribute -*- tablegen -*-===//
//
// The precision of a matmul, the GELU approximation, and #kb.config: the
// per-op decisions that kb's passes take and the lowering reads. Nothing
// else hides a choice.
//
//===----------------------------------------------------------------------===//

#ifndef KB_ATTRS_TD
#define KB_ATTRS_TD

include "kb/Dialect/KB/IR/KBDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def KB_PrecisionIEEE : I32EnumAttrCase<"ieee", 0>;
def KB_PrecisionTF32 : I32EnumAttrCase<"tf32", 1>;
def KB_PrecisionTF32x3 : I32EnumAttrCase<"tf32x3", 2>;
// The operands' own 16-bit type (f16, bf16) on the tensor cores with f32
// accumulation: the only arithmetic a 16-bit matmul has. Written by leaving
// the precision keyword out.
def KB_PrecisionNative : I32EnumAttrCase<"native", 3>;
def KB_Precision : I32EnumAttr<"Precision", "matmul arithmetic precision",
    [KB_PrecisionIEEE, KB_PrecisionTF32, KB_PrecisionTF32x3,
     KB_PrecisionNative]> {
  let cppNamespace = "::mlir::kb";
  let genSpecializedAttr = 0;
}
def KB_PrecisionAttr : EnumAttr<KB_Dialect, KB_Precision, "precision">;

def KB_GeluTanh : I32EnumAttrCase<"tanh", 0>;
def KB_GeluErf : I32EnumAttrCase<"erf", 1>;
def KB_GeluApprox : I32EnumAttr<"GeluApprox", "GELU approximation",
    [KB_GeluTanh, KB_GeluErf]> {
  let cppNamespace = "::mlir::kb";
  let genSpecializedAttr = 0;
}
def KB_GeluApproxAttr : EnumAttr<KB_Dialect, KB_GeluApprox, "gelu_approx">;

// The gate of a kb.gated_matmul: gate(A B1^T) * (A B2^T). silu is SwiGLU
// (Llama's MLP), gelu_tanh and gelu_erf are GeGLU's two GELUs.
def KB_GateSilu : I32EnumAttrCase<"silu", 0>;
def KB_GateGeluTanh : I32EnumAttrCase<"gelu_tanh", 1>;
def KB_GateGeluErf : I32EnumAttrCase<"gelu_erf", 2>;
def KB_Gate : I32EnumAttr<"Gate", "gated matmul's gate",
    [KB_GateSilu, KB_GateGeluTanh, KB_GateGeluErf]> {
  let cppNamespace = "::mlir::kb";
  let genSpecializedAttr = 0;
}
def KB_GateAttr : EnumAttr<KB_Dialect, KB_Gate, "gate">;

// What kb.reduce computes over a row.
def KB_ReductionSum : I32EnumAttrCase<"sum", 0>;
def KB_ReductionMax : I32EnumAttrCase<"max", 1>;
def KB_ReductionMin : I32EnumAttrCase<"min", 2>;
def KB_ReductionMean : I32EnumAttrCase<"mean", 3>;
def KB_ReductionKind : I32EnumAttr<"ReductionKind", "row reduction",
    [KB_ReductionSum, KB_ReductionMax, KB_ReductionMin, KB_ReductionMean]> {
  let cppNamespace = "::mlir::kb";
  let genSpecializedAttr = 0;
}
def KB_ReductionKindAttr : EnumAttr<KB_Dialect, KB_ReductionKind, "reduction">;

// #kb.config's enumerated fields: the arithmetic unit of a matmul's inner
// tile, the softmax strategy and how a matmul stages its operand tiles.
def KB_MmaFFMA : I32EnumAttrCase<"ffma", 0>;
def KB_MmaSyncTF32 : I32EnumAttrCase<"mma_sync_tf32", 1>;
def KB_MmaSyncTF32x3 : I32EnumAttrCase<"mma_sync_tf32x3", 2>;
def KB_MmaWgmmaTF32 : I32EnumAttrCase<"wgmma_tf32", 3>;
def KB_MmaGemv : I32EnumAttrCase<"gemv", 4>;
// wgmma with 16-bit operands (m64nNk16, f32 accumulators), sm_90a.
def KB_MmaWgmmaF16 : I32EnumAttrCase<"wgmma_f16", 5>;
def KB_MmaWgmmaBF16 : I32EnumAttrCase<"wgmma_bf16", 6>;
// mma.sync m16n8k16 with 16-bit operands (f32 accumulators), sm_80 and sm_90.
def KB_MmaSyncF16 : I32EnumAttrCase<"mma_sync_f16", 7>;
def KB_MmaSyncBF16 : I32EnumAttrCase<"mma_sync_bf16", 8>;
def KB_MmaUnit : I32EnumAttr<"MmaUnit", "matmul arithmetic unit",
    [KB_MmaFFMA, KB_MmaSyncTF32, KB_MmaSyncTF32x3, KB_MmaWgmmaTF32,
     KB_MmaGemv, KB_MmaWgmmaF16, KB_MmaWgmmaBF16, KB_MmaSyncF16,
     KB_MmaSyncBF16]> {
  let cppNamespace = "::mlir::kb";
  let genSpecializedAttr = 0;
}

def KB_StrategyRegisters : I32EnumAttrCase<"registers", 0>;
def KB_StrategySplit : I32EnumAttrCase<"split", 1>;
def KB_StrategySplitShared : I32EnumAttrCase<"split_shared", 2>;
def KB_StrategySplitGlobal : I32EnumAttrCase<"split_global", 3>;
def KB_StrategyOnline : I32EnumAttrCase<"online", 4>;
// The row kernels (norms, row reductions): a row over a cluster's registers.
def KB_StrategyCluster : I32EnumAttrCase<"cluster", 5>;
def KB_SoftmaxStrategy : I32EnumAttr<"SoftmaxStrategy", "softmax strategy",
    [KB_StrategyRegisters, KB_StrategySplit, KB_StrategySplitShared,
     KB_StrategySplitGlobal, KB_StrategyOnline, KB_StrategyCluster]> {
  let cppNamespace = "::mlir::kb";
  let genSpecializedAttr = 0;
}

def KB_CopyRegisters : I32EnumAttrCase<"registers", 0>;
def KB_CopyCpAsync : I32EnumAttrCase<"cp_async", 1>;
def KB_CopyTma : I32EnumAttrCase<"tma", 2>;
def KB_CopyKind : I32EnumAttr<"CopyKind", "how a matmul stages its operand tiles",
    [KB_CopyRegisters, KB_CopyCpAsync, KB_CopyTma]> {
  let cppNamespace = "::mlir::kb";
  let genSpecializedAttr = 0;
}

def KB_StoreDirect : I32EnumAttrCase<"direct", 0>;
def KB_StoreTma : I32EnumAttrCase<"tma", 1>;
def KB_StoreKind : I32EnumAttr<"StoreKind", "how a matmul stores its output tile",
    [KB_StoreDirect, KB_StoreTma]> {
  let cppNamespace = "::mlir::kb";
  let genSpecializedAttr = 0;
}

def KB_ReduceKernel : I32EnumAttrCase<"kernel", 0>;
def KB_ReduceCluster : I32EnumAttrCase<"cluster", 1>;
def KB_ReduceStream : I32EnumAttrCase<"stream", 2>;
def KB_ReduceKind : I32EnumAttr<"ReduceKind",
    "how a split-K matmul sums its partial products",
    [KB_ReduceKernel, KB_ReduceCluster, KB_ReduceStream]> {
  let cppNamespace = "::mlir::kb";
  let genSpecializedAttr = 0;
}

// How the wgmma attention kernel's two consumer warpgroups order their
// tensor-core work: `serial` (each on its own), `pingpong` (named barriers
// alternate their GEMM phases so that one's softmax overlaps the other's
// GEMMs) or `overlap` (each warpgroup's softmax of key block j runs under
// its own P V of block j - 1).
def KB_ScheduleSerial : I32EnumAttrCase<"serial", 0>;
def KB_SchedulePingpong : I32EnumAttrCase<"pingpong", 1>;
def KB_ScheduleOverlap : I32EnumAttrCase<"overlap", 2>;
def KB_ScheduleKind : I32EnumAttr<"ScheduleKind",
    "how the consumer warpgroups of the wgmma attention kernel order their "
    "tensor-core work",
    [KB_ScheduleSerial, KB_SchedulePingpong, KB_ScheduleOverlap]> {
  let cppNamespace = "::mlir::kb";
  let genSpecializedAttr = 0;
}

// The order of a 16-bit wgmma matmul's operands (#kb.config `operands`):
// `ab` (as written: A is wgmma's A operand) or `ba` (swapped: the kernel
// computes C^T = B^T A^T, a row-major B's tile read MN-major as wgmma's A
// operand, the A tile as its B operand).
def KB_OperandsAb : I32EnumAttrCase<"ab", 0>;
def KB_OperandsBa : I32EnumAttrCase<"ba", 1>;
def KB_OperandOrder : I32EnumAttr<"OperandOrder",
    "the order of a 16-bit wgmma matmul's operands",
    [KB_OperandsAb, KB_OperandsBa]> {
  let cppNamespace = "::mlir::kb";
  let genSpecializedAttr = 0;
}

// An optional enumerated #kb.config field, written as a quoted string
// (`mma = "ffma"`); an unknown value is a parse error, located at the
// string, that lists the valid ones.
class KB_ConfigEnumParameter<string enumName, string fieldName>
    : OptionalParameter<"::std::optional<::mlir::kb::" # enumName # ">"> {
  let parser = "::mlir::kb::parseConfigEnum<::mlir::kb::" # enumName #
               ">($_parser, \"" # fieldName # "\")";
  let printer = "::mlir::kb::printConfigEnum($_printer, *$_self)";
}

// An optional list of sizes, written in brackets: `[128, 128, 8]`.
class KB_SizesParameter : OptionalArrayRefParameter<"int64_t"> {
  let parser = "::mlir::kb::parseSizes($_parser)";
  let printer = "::mlir::kb::printSizes($_printer, $_self)";
}

// An optional count (threads, vector, stages, cluster, grid): a positive
// integer when written; 0 means "not set", so `threads = 0` is refused by the
// parser, as is a keyword such as `true`.
class KB_CountParameter<string fieldName> : OptionalParameter<"int64_t"> {
  let parser = "::mlir::kb::parseCount($_parser, \"" # fieldName # "\")";
}

def KB_ConfigAttr : AttrDef<KB_Dialect, "Config"> {
  let mnemonic = "config";
  let summary = "per-op kernel decisions taken by kb's passes";
  let description = [{
    Every field is optional; a pass fills the ones it decides.

    - `block`: the output tile of one thread block. Matmul: [BM, BN, BK];
      elementwise: [elements per block]; softmax: [rows per block], or
      for `split_shared` / `split_global` rows per cluster or group of
      blocks (handled one after the other); row kernels (no strategy):
      [rows per block], one warp a row, `threads` = 32 x that.
    - `warp`: a warp's tile of the block tile (matmul on tensor cores: [WM, WN]).
    - `thread`: a thread's register tile (matmul: [TM, TN]; gemv over a
      row-major B also [M, TN, R]: R rows of each k tile a thread, the
      block's threads k groups that add their sums in shared memory; TN =
      8 for a 16-bit B: 16-byte loads of the aligned chunks, realigned by
      a warp shuffle where N % 8 != 0).
    - `threads`: threads per block.
    - `vector`: elements per global load/store (1, 2 or 4).
    - `stages`: shared-memory pipeline depth (1: no pipelining); for
      `gemv`, which stages nothing, the k tiles of weight loads in flight in
      registers (1 or 2; 2 issues tile k + 1's loads before tile k's FMAs).
    - `pad`: elements of the operand type added to each shared-memory row
      of the A and B tiles ([padA, padB]) against bank conflicts (f32 words
      for an f32 matmul).
    - `mma`: the arithmetic unit of the inner tile: `ffma`, `mma_sync_tf32`,
      `mma_sync_tf32x3`, `wgmma_tf32`, `gemv` (fp32 FMAs streaming the
      weight from global memory, for at most 16 rows or columns), and for
      16-bit operands `wgmma_f16`, `wgmma_bf16` (sm_90a) or `mma_sync_f16`,
      `mma_sync_bf16` (m16n8k16, sm_80 and sm_90).
    - `strategy`: the softmax strategy: `registers` (the row in registers:
      one read, one write), `split` (a row too wide for one block is split
      over the blocks of a thread-block cluster, each holding its part in
      registers; the partial max and sum are exchanged through distributed
      shared memory: still one read, one write), `split_shared` (the same
      over a cluster's shared memory), `split_global` (the same over
      ordinary blocks, which exchange their partials through a workspace in
      global memory) or `online` (a tiled loop: reads the row twice).
      The row kernels (`kb.layer_norm`, `kb.rms_norm`, `kb.reduce` over the
      last axis) take none (the row in one block's registers), `online`
      (the row read in loops) or `cluster` (sm_90: a row split over the
      registers of a cluster of `cluster` = 2, 4 or 8 blocks, the partial
      sums exchanged through distributed shared memory: one read).
    - `cluster`: thread blocks per cluster (softmax `split`, `split_shared`,
      row kernels' `cluster`: the blocks that share one row), 1 to 16; for `split_global` the blocks
      per row (not a hardware cluster), 1 to 64.
    - `grid`: a persistent grid of this many blocks. Softmax
      `split_global`: each block takes one part of a row after another
      (from tickets) until none is left, instead of one block per part.
      Matmul (`wgmma_tf32` with `copy = "tma"`): block g computes the output
      tiles g, g + grid, g + 2 grid, ... (over every batch or split), its
      producer copying the next tile's k tiles while the consumers store
      this one; kb-tile sets it to the SMs where a tile has few k tiles.
      Row kernels (with `block = [R]`, by hand only): block g's warps take
      rows g R + w, then G R further each time, each loading its next row
      before it reduces and stores this one.
      Absent: one block per part or tile.
    - `copy`: how a matmul moves its operand tiles into shared memory:
      `registers` (global loads into registers, then stores to shared
      memory: FFMA with at most 2 stages, mma.sync with 1), `cp_async`
      (asynchronous copies issued by every thread) or, for wgmma_tf32, `tma`
      (lane 0 of a producer warp after the consumer warpgroups issues one
      tensor-memory-accelerator copy per tile, which completes on an
      mbarrier; `threads` counts that warp; the tensor map, encoded by
      kb-run, supplies the swizzle and zero-fills what lies outside the
      matrix).
    - `raster`: matmul only: the order in which the grid walks the output
      tiles. Absent (or 1): row by row of block tiles. `raster = G`: groups
      of G block rows, walked column by column within a group, so that the
      blocks running at once share their B tiles in L2 instead of each wave
      reading all of B (Triton's GROUP_M; kb-tile decides it from the bytes
      a wave reads either way).
    - `split`: matmul only (not batched): split-K. The K tiles are cut into
      `split` chunks; the matmul kernel computes each chunk's partial
      product into a workspace (one output tile and chunk per block), and a
      second kernel sums the partials in chunk order (the same bits run to
      run) through the fused epilogue. kb-tile decides it when the output
      tiles leave most multiprocessors idle. The chunks are ceil(K tiles /
      split) K tiles each, the last one shorter; none may be empty. Absent
      (or 1): no split.
    - `store`: matmul only: how the kernel writes its output tile. Absent
      (or `direct`): from the registers with global stores. `tma`
      (`wgmma_tf32` with `copy = "tma"` and B transposed, not split, not
      batched): each consumer warpgroup writes its 64 rows, 32 columns at a
      time, through the fused epilogue into shared memory, and one of its
      threads stores each 64 x 32 box with a TMA tensor store through C's
      tensor map (encoded by kb-run; it clips what lies past M and N).
    - `reduce`: matmul only: how the partial products of K's parts are
      summed. `kernel` (the default with `split`): by kb.split_sum's
      kernel. `cluster` (`split = 2`, wgmma with TMA): inside the matmul
      kernel, by the two blocks of a cluster. `stream` (wgmma with TMA, a
      persistent `grid = G`, not split, not batched, no cluster, no TMA
      store, at most 4 consumer warpgroups): stream-K. Whole rounds of G output tiles run one a block; the
      R tiles left over are split in G / R chunks of their k tiles, one a
      block, so that the last round's blocks share its work; chunk 0's
      block adds the others' partials (stored in a workspace, announced by
      flags there) in chunk order: the same bits run to run.
    - `operands`: matmul only, the 16-bit wgmma kernel (`mma =
      "wgmma_bf16"` or `"wgmma_f16"`) with a row-major B. Absent (or `ab`):
      A is wgmma's A operand, one consumer warpgroup per 64 rows, B's tile
      read MN-major as its B operand. `ba`: the operands swapped, C^T = B^T
      A^T: one consumer warpgroup per 64 columns (BN a multiple of 64, B's
      tile in 128-byte boxes read MN-major as wgmma's A operand, its
      transpose bit set), the A tile K-major as wgmma's B operand (BM a
      multiple of 8 up to 256: the narrow side), the accumulators stored
      transposed; a producer warpgroup; not with a persistent `grid`, a
      `cluster`, `store = "tma"`, `reduce = "cluster"` or `"stream"`.
    - `schedule`: attention only, the wgmma kernel (`mma = "wgmma_bf16"` or
      `"wgmma_f16"`): how its two consumer warpgroups share the tensor
      cores. Absent (or `serial`): each runs its key loop on its own.
      `pingpong` (FlashAttention-3's inter-warpgroup schedule): two named
      barriers make the warpgroups take turns at their GEMMs (P V of block
      j, then S of block j + 1), so that one's softmax runs while the
      other's GEMMs do. `overlap` (FlashAttention-3's intra-warpgroup
      overlap): a warpgroup issues S of block j and P V of block j - 1
      together and runs block j's softmax while P V does (3 stages by
      default: it holds two). kb-select-config never sets it.

    Example: `#kb.config<block = [128, 128, 8], thread = [8, 8], threads = 256, stages = 1, mma = "ffma">`
  }];
  let parameters = (ins
    KB_SizesParameter<>:$block,
    KB_SizesParameter<>:$warp,
    KB_SizesParameter<>:$thread,
    KB_CountParameter<"threads">:$threads,
    KB_CountParameter<"vector">:$vector,
    KB_CountParameter<"stages">:$stages,
    KB_SizesParameter<>:$pad,
    KB_ConfigEnumParameter<"MmaUnit", "mma">:$mma,
    KB_ConfigEnumParameter<"SoftmaxStrategy", "strategy">:$strategy,
    KB_CountParameter<"cluster">:$cluster,
    KB_CountParameter<"grid">:$grid,
    KB_ConfigEnumParameter<"CopyKind", "copy">:$copy,
    KB_CountParameter<"raster">:$raster,
    KB_CountParameter<"split">:$split,
    KB_ConfigEnumParameter<"StoreKind", "store">:$store,
    KB_ConfigEnumParameter<"ReduceKind", "reduce">:$reduce,
    KB_ConfigEnumParameter<"ScheduleKind", "schedule">:$schedule,
    KB_ConfigEnumParameter<"OperandOrder", "operands">:$operands
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // KB_ATTRS_TD

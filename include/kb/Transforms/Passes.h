//===- Passes.h - kb's decision passes --------------------------*- C++ -*-===//
//
// Declarations and registration of kb-fuse-elementwise, kb-fuse-attention,
// kb-select-config, kb-tile, kb-promote-shared-memory and kb-select-mma.
//
//===----------------------------------------------------------------------===//

#ifndef KB_TRANSFORMS_PASSES_H
#define KB_TRANSFORMS_PASSES_H

#include "kb/Dialect/KB/IR/KBDialect.h"
#include "kb/Transforms/SplitChunks.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kb {

#define GEN_PASS_DECL
#include "kb/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kb/Transforms/Passes.h.inc"

/// kb-fuse-attention's rewrite (FuseAttention.cpp): at a kb.matmul that
/// reads a kb.softmax, the chain q k^T -> [scale] -> [mask, causal_mask] ->
/// softmax -> [convert] -> matmul by v becomes one kb.attention; where the
/// chain does not fit, a remark at the matmul says why. Meant for a driver
/// that visits each op once (walkAndApplyPatterns), so each remark is
/// emitted once.
void populateFuseAttentionPatterns(RewritePatternSet &patterns);

/// What kb's passes know about a target chip: the one source of chip facts
/// for every decision pass (filled in by getTargetModel, TargetModel.cpp).
struct TargetModel {
  std::string chip;
  int64_t smCount = 0;
  int64_t maxThreadsPerBlock = 0;
  int64_t maxSharedPerBlock = 0; // opt-in limit
  int64_t sharedPerSM = 0;
  /// Shared memory the driver reserves for each block.
  int64_t reservedSharedPerBlock = 0;
  int64_t registersPerSM = 0;
  int64_t maxRegistersPerThread = 0;
  int64_t maxThreadsPerSM = 0;
  bool hasWgmma = false; // sm_90a only
  /// Thread-block clusters and distributed shared memory (sm_90, sm_90a).
  bool hasClusters = false;
  /// What kb's own kernels reach (measured on the H200, docs/performance.md
  /// and docs/shapes.md), for choices between them: the device-to-device
  /// copy bandwidth, and kb's wgmma and mma.sync TF32 matmuls at 4096^3.
  double copyGBs = 0, wgmmaTf32Tflops = 0, mmaSyncTf32Tflops = 0,
         ffmaTflops = 0;
  /// kb's mma.sync where K % 4 != 0 (its tiles staged through registers in
  /// one stage); 0: not measured, the aligned rate stands in.
  double mmaSyncTf32UnalignedTflops = 0;
  /// Blocks that run at once in clusters of 4 at one block per SM (a
  /// cluster lives in one GPC, so fewer than the SMs): what kb-run's
  /// cuOccupancyMaxActiveClusters reports for kb's wgmma matmuls; 0: none.
  int64_t clusterOf4Blocks = 0;
};
/// The model of `chip`, or failure for a chip kb does not know.
FailureOr<TargetModel> getTargetModel(StringRef chip);

/// Shared memory a matmul config stages per block, in bytes (the layout of
/// the B tile depends on whether B is transposed; a staged wgmma epilogue,
/// on N: -1, N unknown, counts no staging; and on C's type: a 16-bit C,
/// `cF32` false, is not staged).
int64_t matmulSharedBytes(ConfigAttr config, bool transposeB = false,
                          int64_t n = -1, bool cF32 = true);

/// The fused attention kernel (kb.attention, lib/Transforms/
/// SelectAttentionConfig.cpp): each row of a K [BKV][D] or V [BKV][Dv] tile
/// in shared memory is padded by 16 bytes (4 f32, 8 16-bit elements), so
/// that the fragment loads of a warp hit 32 different banks.
inline int64_t attentionRowPad(int64_t elemBytes) { return 16 / elemBytes; }
/// Whether an attention config runs the wgmma kernel (`mma` wgmma_bf16 or
/// wgmma_f16; lib/Conversion/KBToGPU/AttentionWgmma.cpp), not mma.sync.
bool isAttentionWgmma(ConfigAttr config);
/// The wgmma kernel's block: W = BQ / 64 consumer warpgroups of 64 query
/// rows each (W = 2, BQ = 128, by default; W = 3, BQ = 192, at D = Dv = 64)
/// and one producer warp; with schedule = "overlap" a producer warpgroup,
/// whose registers the consumers take (setmaxnreg: ptxas caps 288 threads
/// at 168 registers, too few for O, S and P in flight at D = 128).
constexpr int64_t kAttentionWgmmaRows = 128, kAttentionWgmmaThreads = 288,
                  kAttentionWgmmaOverlapThreads = 384,
                  kAttentionWgmmaGroupRows = 64,
                  kAttentionWgmmaMaxWarpgroups = 3;
/// The consumer warpgroups of a wgmma block of `bq` query rows.
inline int64_t attentionWgmmaWarpgroups(int64_t bq) {
  return bq / kAttentionWgmmaGroupRows;
}
/// The wgmma kernel's threads: 128 a consumer warpgroup, plus a producer
/// warpgroup with schedule = "overlap", else a producer warp.
inline int64_t attentionWgmmaThreads(std::optional<ScheduleKind> schedule,
                                     int64_t bq = kAttentionWgmmaRows) {
  int64_t consumers = 128 * attentionWgmmaWarpgroups(bq);
  return consumers + (schedule == ScheduleKind::overlap ? 128 : 32);
}
/// Shared memory a kb.attention config stages per block, in bytes. mma.sync:
/// `stages` ring buffers of a K tile and a V tile of BKV padded rows each.
/// wgmma: the Q tile (BQ x D) and `stages` K and V tiles (BKV x D, BKV x
/// Dv), unpadded (128-byte swizzled), plus 1024 bytes to align them and
/// 2 x stages + 1 mbarriers of 8 bytes.
int64_t attentionSharedBytes(ConfigAttr config, int64_t d, int64_t dv,
                             int64_t elemBytes);
/// Why the attention kernel cannot run `config` (block = [BQ, BKV], stages,
/// threads) for head dims d, dv, `elemBytes`-byte elements and an additive
/// mask or none (`hasMask`: three wgmma warpgroups take none), or "" when
/// it can; with `model`, also whether its shared memory fits the chip.
/// kb-select-config refuses a hand-written config with it and the lowering
/// checks it again (without a chip).
std::string attentionConfigProblem(ConfigAttr config, int64_t d, int64_t dv,
                                   int64_t elemBytes, bool hasMask,
                                   const TargetModel *model);
/// kb-select-config's rule for a kb.attention: fills the fields `f` leaves
/// unset (block, stages, threads, and mma for f32) and refuses what the
/// kernel cannot run, with a located one-line error.
LogicalResult selectAttentionConfig(Operation *op, ConfigFields &f,
                                    const TargetModel &model);

/// Whether the mma.sync kernel can copy its tiles by cp.async: 16-byte
/// chunks need rows 16-byte aligned in global memory (K, and N unless B is
/// transposed, multiples of 4; BK too) and the tiles' chunks to split evenly
/// among the threads. kb-promote-shared-memory decides `copy` with it; the
/// lowering refuses a config it does not hold for. `elemBytes` 2 (the
/// 16-bit kernel): chunks of 8 elements, so multiples of 8.
bool mmaSyncCopiesFit(int64_t n, int64_t k, bool transposeB, int64_t bm,
                      int64_t bn, int64_t bk, int64_t threads,
                      int64_t elemBytes = 4);
/// The same for the FFMA kernel (A by 4-byte copies into its transposed
/// slots, B in chunks): the A and B tiles split evenly among the threads.
bool ffmaCopiesFit(int64_t bm, int64_t bn, int64_t bk, int64_t threads);

/// The widest vector (4, 2 or 1 f32) that divides a last dimension: the
/// elementwise kernels' default width.
int64_t widestVector(int64_t lastDim);
/// kb-select-config's elementwise defaults for the fields `f` leaves unset:
/// 256 threads, the widest vector (kb-split-k gives its sum the same).
void fillElementwiseDefaults(ConfigFields &f, int64_t lastDim);

/// Split-K's chunks: splitChunkTiles, splitLeavesNoChunkEmpty
/// (kb/Transforms/SplitChunks.h, shared with kb-tune).

/// Split-K (#kb.config `split`, written by kb-tile): how many K chunks a
/// matmul of this shape and block tile should be cut into, 1 for none. The
/// model is in Tile.cpp; kb-tune overrides it by hand-setting `split`.
int64_t chooseSplitK(int64_t m, int64_t n, int64_t k, int64_t bm, int64_t bn,
                     int64_t bk, int64_t batch, int64_t sms,
                     int64_t residentBlocks, double unitTflops, double copyGBs);

/// A wgmma matmul of batch 1 whose output tiles do not cover the SMs (a
/// long K over a small result, a few rows against a wide weight): the tile
/// and split-K chosen together by the model in Tile.cpp ("Few output
/// tiles"). `rowB`: B row-major (the warpgroups split the columns). Returns
/// {BM, BN, S}.
struct FewTilesChoice {
  int64_t bm, bn, split;
  double seconds;
};
/// The stages a wgmma tile will get (wgmmaDefaultStages) for a grid of
/// `blocks`: the model counts the loads they keep in flight.
using WgmmaStagesFn =
    llvm::function_ref<int64_t(int64_t bm, int64_t bn, int64_t blocks)>;
/// `skipBm` x `skipBn`: a tile not to consider (0 x 0: none).
FewTilesChoice chooseFewTiles(int64_t m, int64_t n, int64_t k, bool rowB,
                              int64_t sms, double unitTflops, double copyGBs,
                              WgmmaStagesFn stagesFor, int64_t skipBm = 0,
                              int64_t skipBn = 0);
/// The model's time for one such (BM, BN, S) with `stages` stages, for
/// comparing it against another choice.
double fewTilesSeconds(int64_t m, int64_t n, int64_t k, int64_t bm, int64_t bn,
                       int64_t split, int64_t sms, double unitTflops,
                       double copyGBs, int64_t stages);

/// The stages kb-promote-shared-memory gives a wgmma matmul whose config
/// leaves them open: 4; 3 where 4 do not fit a block; 5 where a stage is at
/// most 32 KB and the fifth costs no block an SM that the grid would use,
/// that is where min(blocks an SM by shared memory, ceil(blocks / SMs)) is
/// the same at five as at four, except tiles of more than 64 rows on at
/// most 64 columns (128 x 64 was neutral in kb-tune's measurements). `blocks`: the grid (tiles x batch x split, or the
/// persistent grid); `n`: N (a staged epilogue's bytes depend on it);
/// `tmaStore`: store = "tma" (its C buffer counts).
int64_t wgmmaDefaultStages(int64_t bm, int64_t bn, int64_t bk, bool transposeB,
                           bool tma, bool persistent, int64_t n,
                           int64_t blocks, const TargetModel &model,
                           bool tmaStore = false);

/// The gemv kernel (`mma = "gemv"`, MatmulGemv.cpp): fp32 FMAs for a matmul
/// with at most kGemvMaxFew rows or columns, streaming the large operand
/// (the "weight") from global memory. Its form says which operand that is:
/// - WeightB: M <= 16 and B transposed (an nn.Linear weight, N x K with K
///   contiguous): each warp owns `warp[1]` rows of B, its lanes read them
///   in 16-byte vectors along K and a shuffle reduction ends the sum;
/// - WeightA: N <= 16 (C^T = B^T A^T: the same kernel with A's rows as the
///   weight and B's N columns as the few);
/// - Columns: M <= 16 and B row-major (K x N): each thread owns `thread[1]`
///   consecutive columns and walks K down them (with `thread[2]` = R, the
///   block's threads are k groups taking R rows of each k tile each).
enum class GemvForm { WeightB, WeightA, Columns };
constexpr int64_t kGemvMaxFew = 16;
/// The gemv kernel's default `stages` (k tiles of weight loads in flight in
/// registers; 2: tile kt + 1's loads issued before tile kt's FMAs) for
/// `few` rows or columns: 2 up to 3 of them, 1 from 4 (runs 14-15 on the
/// H200: two stages 4-16% faster at 1-3 rows or columns, 11% slower at
/// 4 x 28672 x 8192).
int64_t gemvDefaultStages(int64_t few);
/// The most weight floats one gemv thread loads a k tile (the lowering
/// unrolls them: BK = 2^20 took minutes); the defaults load 16-32.
constexpr int64_t kGemvMaxTileFloats = 256;
/// The rows (or columns) of the few operand: N for WeightA, else M.
inline int64_t gemvFew(GemvForm form, int64_t m, int64_t n) {
  return form == GemvForm::WeightA ? n : m;
}
/// Threads of a gemv block over a row-major B (Columns): BN / TN for
/// thread = [M, TN], times BK / R k groups for thread = [M, TN, R]; 0 when
/// the sizes do not divide.
int64_t gemvColumnThreads(int64_t bn, int64_t bk, ArrayRef<int64_t> thread);
/// Shared memory of a gemv block (bytes): a row-major B's k groups
/// (thread = [M, TN, R]: BK / R of them) add their sums there, BM x BN
/// floats a group; 0 for one group or a warp tile.
int64_t gemvSharedBytes(int64_t bm, int64_t bn, int64_t bk,
                        ArrayRef<int64_t> thread);
/// Whether a gemv over a row-major 16-bit B may take thread TN = 8 (one
/// 16-byte load of 8 elements a row, realigned in registers by a warp
/// shuffle where N % 8 != 0; MatmulGemv.cpp) with BN columns a block and R
/// rows a thread (BK without k groups): a row segment's BN / 8 threads
/// must be consecutive lanes of whole warps (BN / 8 dividing 32 or a
/// multiple of it), and R a multiple of 8, so that each thread's rows
/// start at a multiple of 8 and row i's shift, (i N) mod 8, is a constant.
bool gemvRealignFits(int64_t bn, int64_t r);
/// The form of an M x N x K matmul, or nullopt when neither M nor N is at
/// most kGemvMaxFew.
std::optional<GemvForm> gemvForm(int64_t m, int64_t n, bool transB);
/// Floats per load of the weight (4: 16-byte vectors, or 1): 4 when every
/// row of the weight and of the few operand starts on 16 bytes. `ldb` is
/// B's row length as stored (K, or more with padded_b, when transposed).
int64_t gemvVector(GemvForm form, int64_t n, int64_t k, int64_t ldb,
                   bool transB);
/// Split-K for the gemv kernel (kb-tile writes it as `split`): the K
/// chunks that keep enough weight bytes in flight on every SM, by the
/// model in Tile.cpp. `units` is the number of warps (WeightA, WeightB) or
/// threads (Columns) of the unsplit grid, `inFlight` the weight bytes each
/// has in flight per k tile, `weightBytes` what the matmul streams,
/// `partialBytes` M x N x 4 (what each chunk adds, written and read once).
int64_t chooseGemvSplit(int64_t kTiles, int64_t units, int64_t inFlight,
                        double weightBytes, double partialBytes, int64_t sms,
                        double copyGBs);

/// A kb-tune database (docs/kb-tune.md): the tuned #kb.config text of each
/// kernel key.
struct TuningDb {
  llvm::StringMap<std::string> configs;
};
/// The database key of a kernel op: its ops, shapes, a matmul's precision,
/// the chip and kb's version, e.g.
/// "kb.matmul|b1 m2048 n2048 k2048|tf32|sm_90a|kb 0.1.0". kb-tune writes
/// entries under the key kb-select-config looks up.
std::string tuningKey(Operation *op, StringRef chip);
/// Reads the database at `path`; failure with `error` set when it cannot be
/// read or is not a kb-tune database.
FailureOr<TuningDb> loadTuningDb(StringRef path, std::string &error);
/// Gives `op` the fields of its entry in `db`, if any, as hand-set fields;
/// a field already set that disagrees leaves the op as it is, with a
/// warning. Fails (with an error on `op`) when the entry's config does not
/// parse.
LogicalResult applyTuningEntry(Operation *op, const TuningDb &db,
                               StringRef chip);

} // namespace mlir::kb

#endif // KB_TRANSFORMS_PASSES_H

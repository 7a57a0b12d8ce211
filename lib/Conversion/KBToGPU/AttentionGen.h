//===- AttentionGen.h - shared pieces of the fused attention kernel -*- C++ -*-===//
//
// The problem shape of a kb.attention and the emitter its three files share:
// Attention.cpp (checks, grid and the key/value loop), AttentionPipeline.cpp
// (the cp.async ring of K/V tiles and the mma.sync fragments read from it)
// and AttentionSoftmax.cpp (masking, the online softmax in registers and the
// epilogue that normalises and stores O and the log-sum-exp).
//
// Fragment layout (mma.sync m16n8k8 tf32 / m16n8k16 f16, bf16): each warp
// owns 16 query rows; lane = 4 g + t holds rows g and g + 8, and in each
// 8-column fragment of S or O the columns 2t and 2t + 1.
//
//===----------------------------------------------------------------------===//

#ifndef KB_CONVERSION_KBTOGPU_ATTENTIONGEN_H
#define KB_CONVERSION_KBTOGPU_ATTENTIONGEN_H

#include "KernelGen.h"
#include "kb/Transforms/Passes.h"

namespace mlir::kb {

struct AttentionShape {
  /// 3 ([BH, S, D]) or 4 ([B, H, S, D]); `heads` is BH for rank 3.
  int64_t rank = 3, batch = 1, heads = 1;
  int64_t sq = 0, sk = 0, d = 0, dv = 0;
  bool causal = false, hasMask = false, maskFull = false, lse = false;
  /// q, k, v and the output are [B, S, H, D] (`bthd`, rank 4): a row of
  /// head h at sequence position s is row s H + h of the [B, S H, D] view.
  bool bthd = false;
  float scale = 1.0f;
  /// The element type of q, k, v and the output (f32, f16 or bf16).
  Type elem;
  int64_t elemBytes() const { return elem.getIntOrFloatBitWidth() / 8; }
  bool isF32() const { return elem.isF32(); }
  static AttentionShape of(AttentionOp op);
};

/// One mma operand fragment: 4 (A) or 2 (B) registers, i32 for tf32 and
/// bf16, vector<2xf16> for f16.
using Frag = SmallVector<Value, 4>;

struct AttentionEmitter {
  OpBuilder &b;
  Location loc;
  Operation *op;
  AttentionShape shape;
  /// Kernel arguments.
  Value q, k, v, mask, out, lse;
  /// Tiles: BQ query rows a block (16 a warp), BKV keys a step.
  int64_t bq = 0, bkv = 0, stages = 0, threads = 0;
  /// Shared-memory row strides (elements) of the K and V tiles.
  int64_t ldk = 0, ldv = 0;
  /// Thread coordinates: thread id, warp, g = lane / 4, t = lane % 4.
  Value tid, warp, g, t;
  /// The block's batch and head (block ids z, y) and first query row.
  Value bz, by, q0;

  Value add(Value x, int64_t c);
  Value add(Value x, Value y);
  Value mul(Value x, int64_t c);
  Value div(Value x, int64_t c);
  Value rem(Value x, int64_t c);
  Value minIdx(Value x, int64_t c);
  /// Index list into q, k, v or out ([b, h, row, col], [bh, row, col], or
  /// with bthd [b, row, h, col]).
  SmallVector<Value> index(Value row, Value col);
  /// Index list into the mask: [b, h, row, col] (or [bh, row, col]) for a
  /// full mask, [row, col] for an [Sq, Sk] one.
  SmallVector<Value> maskIndex(Value row, Value col);
  /// Index list into lse ([b, h, row] or [bh, row]).
  SmallVector<Value> lseIndex(Value row);
  /// The four global query rows of the thread's fragments: row g, g + 8 of
  /// the warp (index 0 and 1).
  Value queryRow(int64_t half);
  /// Sets tid, warp (uniform), g, t, q0, by and bz (Attention.cpp).
  void setUpThreads();
  /// The count of key blocks this block visits: all ceil(Sk / BKV), or with
  /// causal those up to its last query row's last visible key.
  Value numKeyBlocks();

  //===--------------------------------------------------------------------===//
  // AttentionPipeline.cpp
  //===--------------------------------------------------------------------===//

  /// Bytes of one ring stage (a K and a V tile), as attentionSharedBytes.
  int64_t stageBytes() const;
  /// The K and V tile views of ring stage `stage`.
  std::pair<Value, Value> stageViews(Value smem, Value stage);
  /// Issues the cp.async copies of key block `kvBlock` into `kt`/`vt`:
  /// 16-byte chunks, rows past Sk zero-filled.
  void issueTileCopies(Value kvBlock, Value kt, Value vt);
  /// The thread's A fragments of Q (rows queryRow(0/1), clamped into Sq),
  /// one per k step of D (8 columns for tf32, 16 for 16-bit).
  SmallVector<Frag> loadQueryFragments();
  /// S[16 x BKV] of the warp: BKV / 8 fragments of 4 f32 (rows g, g + 8;
  /// keys 8j + 2t, + 1), from the Q fragments and the K tile.
  SmallVector<Value> scores(ArrayRef<Frag> qf, Value kt);
  /// O += P V: `p` as `scores` returned it (probabilities), `acc` the Dv / 8
  /// accumulator fragments of 4 f32.
  SmallVector<Value> accumulate(ArrayRef<Value> p, Value vt,
                                ArrayRef<Value> acc);
  /// One mma.sync of the operand type: acc (4 f32) += a x b.
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bf,
                         ArrayRef<Value> acc);

  //===--------------------------------------------------------------------===//
  // AttentionSoftmax.cpp
  //===--------------------------------------------------------------------===//

  /// Whether the softmax runs on the raw Q K^T scores (no additive mask and
  /// scale > 0, so that the row max commutes with the scale): maskScores
  /// leaves them unscaled and softmaxStep scales inside its exponents.
  bool rawScores() const { return !shape.hasMask && shape.scale > 0; }
  /// Natural-log units per unit of the scores maskScores returns (and of
  /// RowState::max): the scale for raw scores, else 1.
  float scoreUnit() const { return rawScores() ? shape.scale : 1.0f; }
  /// The running state of the thread's two rows (max in score units).
  struct RowState {
    Value max[2], sum[2];
  };
  /// Scales the scores of key block kv0 (unless rawScores) and adds the
  /// mask (one fma); where a key is past Sk or (causal) after the query,
  /// -inf. Masking runs only in blocks that need it (a branch uniform over
  /// the warp).
  SmallVector<Value> maskScores(ArrayRef<Value> s, Value kv0);
  /// The online softmax step: the new row maxima, the probabilities
  /// exp(c (x - max)) in place of the scores (c = scoreUnit; one fma and
  /// one ex2.approx.ftz each), the thread's partial row sums updated, and in
  /// `alpha` each row's exp(c (old max - new max)), by which `rescale`
  /// multiplies the accumulators.
  RowState softmaxStep(SmallVectorImpl<Value> &x, const RowState &state,
                       Value alpha[2]);
  /// acc (the Dv / 8 fragments of 4 f32 of O) times its row's alpha.
  void rescale(SmallVectorImpl<Value> &acc, const Value alpha[2]);
  /// Normalises the accumulators by the row sums (0 where a row's sum is 0)
  /// and stores O, and (with lse) the rows' log-sum-exp, inside Sq.
  void storeOutputs(ArrayRef<Value> acc, const RowState &state);
};

/// The wgmma kernel (AttentionWgmma.cpp, sm_90a, 16-bit): `e` holds the
/// kernel's arguments and `cfg`'s block and stages; `maps` the tensor
/// maps of q, k and v.
LogicalResult buildAttentionWgmma(AttentionEmitter &e, ConfigAttr cfg,
                                  ArrayRef<Value> maps, LaunchInfo &info);

} // namespace mlir::kb

#endif // KB_CONVERSION_KBTOGPU_ATTENTIONGEN_H

//===- MatmulGemv.cpp - the gemv kernel: few rows against a weight --------===//
//
// mma = "gemv": a matmul with at most 16 rows (or columns) is bound by the
// bytes of its other operand, the weight; this kernel streams the weight
// from global memory straight into registers and multiplies it in fp32 FMAs
// against the few rows, which L1 and L2 keep (no operand is staged in
// shared memory). Its form (gemvForm, TargetModel.cpp) says which operand is the
// weight:
// - WeightB (M <= 16, B transposed: an nn.Linear weight N x K) and WeightA
//   (N <= 16: C^T = B^T A^T, A's rows are the weight): each warp owns
//   `warp`'s weight rows; its lanes read them in 16-byte vectors along K
//   (consecutive lanes, consecutive vectors: 512 coalesced bytes a row),
//   U vectors a row per k tile, all issued before the FMAs that use them,
//   each multiplied against the same K positions of every few row; a warp
//   shuffle reduction ends each sum, and lane 0 stores the warp's C tile.
// - Columns (M <= 16, B row-major K x N): each thread owns `thread[1]`
//   consecutive columns (one 16-byte vector of a B row) and walks the
//   block's K, BK rows a k tile, against A's values (the same address for
//   every thread: broadcast loads); with thread = [M, TN, R] the block's
//   threads are k groups of BN / TN, each taking R rows of every k tile,
//   whose sums meet in shared memory (the first group adds them in group
//   order and stores).
// stages = 2: tile k + 1's weight loads go out before tile k's FMAs.
// K is split across blocks by kb-split-k where the weight's rows are too
// few to keep enough bytes in flight (kb-tile's `split`). Edges: a weight
// row past the matrix reads the last row and is not stored; the k tile
// that holds the end of K (when K is not a multiple of BK) is emitted once
// after the loop, its loads outside K clamped to index 0 and zeroed by a
// select; rows whose length is not a multiple of 4 are read one float at a
// time.
// Columns with thread TN = 8 (16-bit B): one 16-byte load of the aligned
// chunk under a thread's 8 columns of each row, realigned in registers by
// a warp shuffle where N % 8 != 0 (see `columns`).
// 16-bit operands (f16, bf16): the same tiles and loads counted in elements,
// 2 bytes each (a lane's 4 elements one 8-byte load), widened to f32 where
// they arrive: the FMAs, reductions and shared-memory sums are the f32
// kernel's, and C is rounded once, at its store.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"
#include "MatmulGen.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::kb;

namespace {

struct GemvEmitter {
  MatmulEmitter &e;
  OpBuilder &b;
  Location loc;

  /// `v` floats of the 1-D `mem` at `idx` (a 16-byte vector load when
  /// v = 4, which the caller keeps 16-byte aligned); where `in` is false,
  /// zeros, read from index 0. `offset`: floats past `idx`, folded into a
  /// streamed, unguarded load's address (`streamed`); the callers give one
  /// only there (plain loads keep their own index, whose constant offsets
  /// LLVM folds itself).
  SmallVector<Value> load(Value mem, Value idx, int64_t v, Value in,
                          int64_t offset = 0) {
    bool isStreamed = (v == 4 || v == 1) && mem == streamMem;
    assert((!offset || (isStreamed && !in)) &&
           "a constant offset only on a streamed, unguarded load");
    if (in)
      idx = arith::SelectOp::create(b, loc, in, idx, cidx(b, loc, 0));
    SmallVector<Value> xs;
    // A 16-bit operand: the same loads of v elements (2v bytes), widened
    // to f32 as they arrive.
    Type elem = cast<MemRefType>(mem.getType()).getElementType();
    bool half = !elem.isF32();
    if (isStreamed) {
      xs = streamed(idx, v, offset);
    } else if (v == 1) {
      Value x = memref::LoadOp::create(b, loc, mem, ValueRange{idx});
      if (half)
        x = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
      xs.push_back(x);
    } else {
      auto vt = VectorType::get({v}, elem);
      Value x = vector::LoadOp::create(b, loc, vt, mem, ValueRange{idx}, false,
                                       llvm::MaybeAlign(elemBytes(mem) * v));
      if (half)
        x = arith::ExtFOp::create(b, loc, VectorType::get({v}, b.getF32Type()),
                                  x);
      for (int64_t l = 0; l < v; ++l)
        xs.push_back(
            vector::ExtractOp::create(b, loc, x, ArrayRef<int64_t>{l}));
    }
    if (in)
      for (Value &x : xs)
        x = arith::SelectOp::create(b, loc, in, x, cf32(b, loc, 0.0f));
    return xs;
  }

  /// The largest weight read through `streamed`. What the policy saves
  /// is the write-back of another kernel's dirty lines, at most L2's 50 MB
  /// (about 4 us); on the largest weights it cost 3-5% (same call,
  /// bench/results/2026-12-02-gemv-stream: 64 MB 0.0262 -> 0.0224 ms, 235 MB
  /// 0.0652 -> 0.0630, but 940 MB 0.2469 -> 0.2543 and 1 GB split 8 0.2789
  /// -> 0.2932).
  static constexpr double kStreamMaxBytes = 256.0 * (1 << 20);

  /// Whether a weight of `bytes` read `v` floats a load goes through
  /// `streamed`. 16-byte loads: up to kStreamMaxBytes. One-float loads
  /// (rows or columns not 16-byte aligned: K or N % 4 != 0) only from 32 to
  /// 128 MiB: old / new time (bench/results/2026-12-04-gemv-columns, call
  /// 7) 1.15 and 1.19 on the suite's two 64 MB programs, but 1.085, 1.001
  /// and 0.995 at 180-235 MB, 0.964 at 268 MB and 0.895 on a 4 MB weight
  /// (the bounds sit between those points). Inside the window out of
  /// sample (call 8): 1.092-1.109 on three, 0.941 on one whose kernel
  /// spilled, before a tile's loads shared one address (`streamed`; call
  /// 9: 1.07-1.38 more on one-float B^T). Measured before that change, the
  /// window may now be too narrow: the weights over 128 MiB were not
  /// measured with it.
  /// Bytes of one element of `mem`: 4 (f32) or 2 (f16, bf16).
  static int64_t elemBytes(Value mem) {
    return cast<MemRefType>(mem.getType()).getElementTypeBitWidth() / 8;
  }

  static bool streams(double bytes, int64_t v) {
    if (v == 4)
      return bytes <= kStreamMaxBytes;
    return v == 1 && bytes >= 32.0 * (1 << 20) && bytes <= 128.0 * (1 << 20);
  }

  /// The weight `load` streams (its 16-byte loads through `streamed`), its
  /// L2 policy (createpolicy evict_first) and base address, set by
  /// `streamFrom`; null: plain loads.
  Value streamMem, policy, streamBase;

  /// Has `load` read the weight `mem` through `streamed` from here on: its lines are
  /// read once, and marked first to go, so that they, not the dirty lines
  /// another kernel left in L2, make room for the next ones. Without it the
  /// 64 MB B^T gemvs wrote 23-25 MB of the L2 flush's dirty lines back to
  /// DRAM while they read (ncu, bench/results/2026-12-02-gemv-writeback),
  /// cuBLASLt 0.5-4.5 MB.
  void streamFrom(Value mem) {
    streamMem = mem;
    policy = evictFirstPolicy(b, loc);
    // The first element's global address: the aligned pointer plus the
    // memref's offset, converted once from the generic window
    // (cvta.to.global) for ld.global.
    Value raw = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem);
    Value offset =
        memref::ExtractStridedMetadataOp::create(b, loc, mem).getOffset();
    Value first = arith::IndexCastUIOp::create(
        b, loc, b.getI64Type(), e.add(raw, e.mul(offset, elemBytes(mem))));
    streamBase = LLVM::InlineAsmOp::create(
                     b, loc, TypeRange{b.getI64Type()}, ValueRange{first},
                     "cvta.to.global.u64 $0, $1;", "=l,l",
                     /*has_side_effects=*/false, /*is_align_stack=*/false,
                     LLVM::tailcallkind::TailCallKind::None,
                     LLVM::AsmDialectAttr(), ArrayAttr())
                     .getResult(0);
  }

  /// `v` (4 or 1) floats of the weight at `idx` + `offset` (16-byte
  /// aligned when v = 4, inside the weight: `load` has selected an index
  /// past K to 0), through the read-only path with the evict-first policy
  /// (`ld.global.nc.L2::cache_hint.v4.f32` or `.f32`, which MLIR's
  /// vector.load and memref.load cannot say). The constant `offset` goes
  /// into the instruction's address ([base+bytes]), so that the loads of a
  /// tile share one address register, as memref.load's folded offsets do
  /// (each its own 64-bit address spilled 8 bytes in a one-float kernel:
  /// bench/results/2026-12-04-gemv-columns).
  SmallVector<Value> streamed(Value idx, int64_t v, int64_t offset = 0) {
    int64_t eb = elemBytes(streamMem);
    if (eb == 2)
      return streamed16(idx, v, offset);
    std::string at = offset ? "[$" + std::to_string(v) + "+" +
                                  std::to_string(4 * offset) + "]"
                            : "[$" + std::to_string(v) + "]";
    Value off = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), idx);
    Value addr = arith::AddIOp::create(
        b, loc, streamBase,
        arith::MulIOp::create(
            b, loc, off,
            arith::ConstantIntOp::create(b, loc, b.getI64Type(), 4)));
    Type f32 = b.getF32Type();
    // No side effects: LLVM may schedule it as a load (every address is
    // inside the weight: rows clamped, K positions selected to 0).
    if (v == 1)
      return {LLVM::InlineAsmOp::create(
                  b, loc, TypeRange{f32}, ValueRange{addr, policy},
                  "ld.global.nc.L2::cache_hint.f32 $0, " + at + ", $2;",
                  "=f,l,l",
                  /*has_side_effects=*/false, /*is_align_stack=*/false,
                  LLVM::tailcallkind::TailCallKind::None,
                  LLVM::AsmDialectAttr(), ArrayAttr())
                  .getResult(0)};
    auto st = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                               {f32, f32, f32, f32});
    Value x = LLVM::InlineAsmOp::create(
                  b, loc, TypeRange{st}, ValueRange{addr, policy},
                  "ld.global.nc.L2::cache_hint.v4.f32 {$0, $1, $2, $3}, " +
                      at + ", $5;",
                  "=f,=f,=f,=f,l,l", /*has_side_effects=*/false,
                  /*is_align_stack=*/false,
                  LLVM::tailcallkind::TailCallKind::None,
                  LLVM::AsmDialectAttr(), ArrayAttr())
                  .getResult(0);
    SmallVector<Value> xs;
    for (int64_t l = 0; l < 4; ++l)
      xs.push_back(LLVM::ExtractValueOp::create(b, loc, x, l));
    return xs;
  }

  /// `streamed` for a 16-bit weight: v (4 or 1) elements, 8 bytes as two
  /// 32-bit words (`.v2.b32`, each two elements, the lower address in the
  /// low half) or 2 bytes (`.b16`), widened to f32.
  SmallVector<Value> streamed16(Value idx, int64_t v, int64_t offset) {
    Type elem = cast<MemRefType>(streamMem.getType()).getElementType();
    int64_t words = v == 4 ? 2 : 1;
    std::string at = offset ? "[$" + std::to_string(words) + "+" +
                                  std::to_string(2 * offset) + "]"
                            : "[$" + std::to_string(words) + "]";
    Value off = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), idx);
    Value addr = arith::AddIOp::create(
        b, loc, streamBase,
        arith::MulIOp::create(
            b, loc, off,
            arith::ConstantIntOp::create(b, loc, b.getI64Type(), 2)));
    Type f32 = b.getF32Type();
    auto asmOp = [&](Type result, StringRef text, StringRef constraints) {
      return LLVM::InlineAsmOp::create(b, loc, TypeRange{result},
                                       ValueRange{addr, policy}, text,
                                       constraints, /*has_side_effects=*/false,
                                       /*is_align_stack=*/false,
                                       LLVM::tailcallkind::TailCallKind::None,
                                       LLVM::AsmDialectAttr(), ArrayAttr())
          .getResult(0);
    };
    if (v == 1) {
      Value h = asmOp(b.getI16Type(),
                      "ld.global.nc.L2::cache_hint.b16 $0, " + at + ", $2;",
                      "=h,l,l");
      Value x = arith::BitcastOp::create(b, loc, elem, h);
      return {arith::ExtFOp::create(b, loc, f32, x).getResult()};
    }
    auto st = LLVM::LLVMStructType::getLiteral(
        b.getContext(), {b.getI32Type(), b.getI32Type()});
    Value x = asmOp(
        st, "ld.global.nc.L2::cache_hint.v2.b32 {$0, $1}, " + at + ", $3;",
        "=r,=r,l,l");
    SmallVector<Value> xs;
    Value sixteen = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 16);
    for (int64_t w = 0; w < 2; ++w) {
      Value word = LLVM::ExtractValueOp::create(b, loc, x, w);
      for (int64_t l = 0; l < 2; ++l) {
        Value bits =
            l ? arith::ShRUIOp::create(b, loc, word, sixteen).getResult()
              : word;
        Value h = arith::TruncIOp::create(b, loc, b.getI16Type(), bits);
        Value x = arith::BitcastOp::create(b, loc, elem, h);
        xs.push_back(arith::ExtFOp::create(b, loc, f32, x).getResult());
      }
    }
    return xs;
  }

  Value lt(Value x, int64_t bound) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                                 cidx(b, loc, bound));
  }

  /// The weight loads of local k tile `kt` (guarded: the tile that holds
  /// the end of K), as a flat list of floats.
  using LoadTile = function_ref<SmallVector<Value>(Value kt, bool guarded)>;
  /// The FMAs of local k tile `kt` on its loaded weight values `w`.
  using UseTile = function_ref<void(Value kt, bool guarded, ArrayRef<Value> w,
                                    SmallVector<Value> &acc)>;

  /// Marks a short k loop (at most `maxTiles` k tiles a block) not to
  /// be unrolled (`.pragma "nounroll"` in the PTX). Unrolled whole, such a
  /// loop becomes straight-line code in which ptxas schedules each weight
  /// load just before the FMAs that use it, to save registers: about four
  /// loads in flight instead of eight (one stage) or sixteen (two). Run
  /// 14's SASS of skinny 1x4096x4096 (4 k tiles): 36 registers, loads
  /// among the FMAs, 0.0278 ms; with the pragma 96 registers, 0.0262 (run
  /// 15). Longer loops are left to LLVM, whose partial unrolling paid
  /// (run 15 with the pragma everywhere: matvec 1x4096x4096 0.0266 ->
  /// 0.0283 ms, 2x4096x4096 0.0266 -> 0.0293). (Named `loop_annotation`:
  /// scf-to-cf copies it to the latch branch and cf-to-llvm sets it as
  /// llvm.br's property of that name.) Over a row-major B (Columns) up to
  /// 8 k tiles: matvec 1x4096x4096 in chunks of 8 went 0.0322 -> 0.0270 ms
  /// with the pragma (run 15), where skinny 2x4096x4096 (8 k tiles of a
  /// warp) went 0.0266 -> 0.0293.
  static constexpr int64_t kNoUnrollTiles = 4, kNoUnrollColumnTiles = 8;
  /// Whether kLoop emits each block's last k tile guarded (after the loop)
  /// even where BK divides K: the realigned loads (`columns`, TN = 8) read
  /// partial chunks at the buffer's end only there.
  bool guardLastTile = false;
  void noUnroll(scf::ForOp loop, int64_t maxTiles) {
    if (e.kTilesPerBlock() > maxTiles)
      return;
    MLIRContext *ctx = b.getContext();
    auto unroll = LLVM::LoopUnrollAttr::get(ctx, b.getBoolAttr(true), {}, {},
                                            {}, {}, {}, {});
    loop->setAttr("loop_annotation",
                  LLVM::LoopAnnotationAttr::get(ctx, {}, {}, {}, unroll, {}, {},
                                                {}, {}, {}, {}, {}, {}, {}, {},
                                                {}));
  }

  /// Emits the k loop over local k tiles 0..n-1, the last one (when K is
  /// not a multiple of BK) guarded and after the loop. With `stages` = 2
  /// the weight loads of tile kt + 1 are issued before the FMAs of tile kt
  /// (their values carried by the loop: two tiles of loads in flight while
  /// a thread waits, instead of one); 1: each tile's loads, then its FMAs.
  /// Returns the accumulators.
  SmallVector<Value> kLoop(int64_t accs, int64_t stages,
                           int64_t noUnrollMaxTiles, LoadTile load,
                           UseTile use) {
    int64_t kTiles = e.kTilesPerBlock();
    bool guardK = e.shape.k % e.bk != 0 || guardLastTile;
    int64_t plain = guardK ? kTiles - 1 : kTiles;
    SmallVector<Value> init(accs, cf32(b, loc, 0.0f));
    auto tail = [&](SmallVector<Value> &acc) {
      if (!guardK)
        return;
      Value kt = cidx(b, loc, kTiles - 1);
      use(kt, true, load(kt, true), acc);
    };
    if (stages <= 1 || plain == 0) {
      auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0),
                                     cidx(b, loc, plain), cidx(b, loc, 1), init);
      noUnroll(loop, noUnrollMaxTiles);
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(loop.getBody());
        SmallVector<Value> acc(loop.getRegionIterArgs().begin(),
                               loop.getRegionIterArgs().end());
        Value kt = loop.getInductionVar();
        use(kt, false, load(kt, false), acc);
        scf::YieldOp::create(b, loc, acc);
      }
      SmallVector<Value> acc(loop.getResults().begin(),
                             loop.getResults().end());
      tail(acc);
      return acc;
    }
    // Two stages: tile 0's loads ahead of the loop; iteration kt issues
    // tile kt + 1's, then uses tile kt's; the last plain tile (and the
    // guarded one, whose loads go out first) after it.
    SmallVector<Value> first = load(cidx(b, loc, 0), false);
    int64_t nw = first.size();
    SmallVector<Value> carried(init);
    carried.append(first.begin(), first.end());
    auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0),
                                   cidx(b, loc, plain - 1), cidx(b, loc, 1),
                                   carried);
    noUnroll(loop, noUnrollMaxTiles);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      auto args = loop.getRegionIterArgs();
      SmallVector<Value> acc(args.begin(), args.begin() + accs);
      SmallVector<Value> cur(args.begin() + accs, args.end());
      Value kt = loop.getInductionVar();
      SmallVector<Value> next = load(e.add(kt, 1), false);
      use(kt, false, cur, acc);
      acc.append(next.begin(), next.end());
      scf::YieldOp::create(b, loc, acc);
    }
    auto results = loop.getResults();
    SmallVector<Value> acc(results.begin(), results.begin() + accs);
    SmallVector<Value> cur(results.begin() + accs, results.begin() + accs + nw);
    // The guarded tile's loads go out before the last plain tile's FMAs.
    Value ktLast = cidx(b, loc, kTiles - 1);
    SmallVector<Value> last = guardK ? load(ktLast, true) : SmallVector<Value>();
    use(cidx(b, loc, plain - 1), false, cur, acc);
    if (guardK)
      use(ktLast, true, last, acc);
    return acc;
  }

  LogicalResult rows(GemvForm form, int64_t v, int64_t ldb, int64_t stages);
  LogicalResult columns(int64_t v, int64_t stages);

  /// `words` (1, 2 or 4) 32-bit words of global memory at the byte address
  /// `addr` + `offset` (16-byte aligned for 4, 8 for 2) through the
  /// read-only path (`ld.global.nc`, with the evict-first `policy` where
  /// set); with `pred` (an i32), only where it is nonzero, else zeros.
  SmallVector<Value> loadWords(Value addr, int64_t words, int64_t offset,
                               Value pred = {}) {
    std::string outs, cons;
    for (int64_t w = 0; w < words; ++w) {
      outs += (w ? ", $" : "$") + std::to_string(w);
      cons += "=r,";
    }
    int64_t op = words;
    std::string at = "[$" + std::to_string(op++) +
                     (offset ? "+" + std::to_string(offset) : "") + "]";
    cons += "l";
    SmallVector<Value> ins{addr};
    std::string hint;
    if (policy) {
      hint = ", $" + std::to_string(op++);
      cons += ",l";
      ins.push_back(policy);
    }
    std::string shape = words == 1 ? "" : ".v" + std::to_string(words);
    std::string ld = "ld.global.nc" +
                     std::string(policy ? ".L2::cache_hint" : "") + shape +
                     ".b32 " + (words == 1 ? outs : "{" + outs + "}") + ", " +
                     at + hint + ";";
    std::string text = ld;
    if (pred) {
      std::string zero;
      for (int64_t w = 0; w < words; ++w)
        zero += "mov.b32 $" + std::to_string(w) + ", 0; ";
      text = "{ .reg .pred p; setp.ne.b32 p, $" + std::to_string(op++) +
             ", 0; " + zero + "@p " + ld + " }";
      cons += ",r";
      ins.push_back(pred);
    }
    Type i32 = b.getI32Type();
    SmallVector<Type> types(words, i32);
    Type result = words == 1
                      ? i32
                      : Type(LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                              types));
    Value x = LLVM::InlineAsmOp::create(
                  b, loc, TypeRange{result}, ins, text, cons,
                  /*has_side_effects=*/false, /*is_align_stack=*/false,
                  LLVM::tailcallkind::TailCallKind::None,
                  LLVM::AsmDialectAttr(), ArrayAttr())
                  .getResult(0);
    if (words == 1)
      return {x};
    SmallVector<Value> xs;
    for (int64_t w = 0; w < words; ++w)
      xs.push_back(LLVM::ExtractValueOp::create(b, loc, x, w));
    return xs;
  }

  /// The global address (i64) of the first element of the 1-D `mem`.
  Value globalBase(Value mem) {
    Value raw = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem);
    Value offset =
        memref::ExtractStridedMetadataOp::create(b, loc, mem).getOffset();
    Value first = arith::IndexCastUIOp::create(
        b, loc, b.getI64Type(), e.add(raw, e.mul(offset, elemBytes(mem))));
    return LLVM::InlineAsmOp::create(
               b, loc, TypeRange{b.getI64Type()}, ValueRange{first},
               "cvta.to.global.u64 $0, $1;", "=l,l",
               /*has_side_effects=*/false, /*is_align_stack=*/false,
               LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
               ArrayAttr())
        .getResult(0);
  }
};

LogicalResult GemvEmitter::rows(GemvForm form, int64_t v, int64_t ldb,
                                int64_t stages) {
  MatmulShape &s = e.shape;
  auto warpTile = e.config.getWarp();
  bool weightB = form == GemvForm::WeightB;
  int64_t few = weightB ? s.m : s.n, wide = weightB ? s.n : s.m;
  int64_t fewBlock = weightB ? e.bm : e.bn, wideBlock = weightB ? e.bn : e.bm;
  if (warpTile.size() != 2 || fewBlock != few ||
      warpTile[weightB ? 0 : 1] != few ||
      wideBlock % warpTile[weightB ? 1 : 0] || e.bk % (32 * v))
    return e.op->emitOpError() << "gemv: block and warp tiles do not fit the "
                                  "shape: run kb-tile";
  int64_t r = warpTile[weightB ? 1 : 0];
  if (e.threads != wideBlock / r * 32)
    return e.op->emitOpError()
           << "gemv: " << e.threads << " threads, but the warp tiles take "
           << wideBlock / r * 32;
  int64_t u = e.bk / (32 * v);
  if (u * v * r > kGemvMaxTileFloats)
    return e.op->emitOpError()
           << "gemv: a lane would load " << u * v * r
           << " weight floats a k tile (BK = " << e.bk << ", " << r
           << " rows a warp); at most " << kGemvMaxTileFloats;
  Value af = flatten(b, loc, e.a), bf = flatten(b, loc, e.bmem);
  MatmulEmitter::BlockTile t = e.blockTile();
  Value warp = e.div(e.tid, 32), lane = e.rem(e.tid, 32);
  Value r0 = e.add(weightB ? t.col0 : t.row0, e.mul(warp, r));
  // The weight: B (rows of ldb floats) or A (rows of K); the few: A's rows,
  // B^T's rows (B transposed, or a K x 1 column), or B's columns (one
  // float at a time, N apart).
  Value wMem = weightB ? bf : af, fMem = weightB ? af : bf;
  int64_t wPitch = weightB ? ldb : s.k;
  bool fewRows = weightB || s.transB || s.n == 1;
  int64_t fPitch = weightB ? s.k : s.transB ? ldb : 0;
  if (streams(double(elemBytes(wMem)) * wide * wPitch, v))
    streamFrom(wMem);
  SmallVector<Value> wBase;
  for (int64_t j = 0; j < r; ++j) {
    Value row = e.add(r0, j);
    if (wide % wideBlock)
      row = arith::MinUIOp::create(b, loc, row, cidx(b, loc, wide - 1));
    wBase.push_back(e.mul(row, wPitch));
  }
  // The K positions of a lane in k tile kt, and where guarded whether each
  // lies inside K.
  auto positions = [&](Value kt, bool guarded) {
    Value k0 = e.kAt(kt);
    SmallVector<Value> ks, in;
    for (int64_t q = 0; q < u; ++q) {
      Value kq = e.add(k0, e.mul(e.add(lane, q * 32), v));
      ks.push_back(kq);
      in.push_back(guarded ? lt(kq, s.k) : Value());
    }
    return std::make_pair(ks, in);
  };
  // Every weight load of the tile first: r x u independent 16-byte loads
  // in flight per lane (w[(q * r + j) * v + l]).
  auto loadTile = [&](Value kt, bool guarded) {
    auto [ks, in] = positions(kt, guarded);
    SmallVector<Value> w;
    // Streamed and unguarded, load q is load 0's index plus q * 32 * v
    // (one address register a row, the rest folded offsets).
    bool fold = !guarded && wMem == streamMem;
    for (int64_t q = 0; q < u; ++q)
      for (int64_t j = 0; j < r; ++j) {
        SmallVector<Value> x =
            fold ? load(wMem, e.add(wBase[j], ks[0]), v, Value(), q * 32 * v)
                 : load(wMem, e.add(wBase[j], ks[q]), v, in[q]);
        w.append(x.begin(), x.end());
      }
    return w;
  };
  auto useTile = [&](Value kt, bool guarded, ArrayRef<Value> w,
                     SmallVector<Value> &acc) {
    auto [ks, in] = positions(kt, guarded);
    for (int64_t q = 0; q < u; ++q)
      for (int64_t f = 0; f < few; ++f) {
        SmallVector<Value> x;
        if (fewRows) {
          x = load(fMem, e.add(e.mul(cidx(b, loc, f), fPitch), ks[q]), v,
                   in[q]);
        } else {
          for (int64_t l = 0; l < v; ++l)
            x.push_back(load(fMem, e.add(e.mul(e.add(ks[q], l), s.n), f), 1,
                             in[q])[0]);
        }
        for (int64_t j = 0; j < r; ++j)
          for (int64_t l = 0; l < v; ++l)
            acc[f * r + j] = math::FmaOp::create(
                b, loc, w[(q * r + j) * v + l], x[l], acc[f * r + j]);
      }
  };
  SmallVector<Value> acc =
      kLoop(few * r, stages, kNoUnrollTiles, loadTile, useTile);
  // Each sum over the warp's lanes (shuffles); lane 0 stores the tile.
  for (Value &x : acc)
    x = gpu::SubgroupReduceOp::create(b, loc, x, gpu::AllReduceOperation::ADD,
                                      /*uniform=*/true);
  Value lane0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                      cidx(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, lane0, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  for (int64_t f = 0; f < few; ++f)
    for (int64_t j = 0; j < r; ++j) {
      Value w = e.add(r0, j), fc = cidx(b, loc, f);
      e.storeC(t.batch, weightB ? fc : w, weightB ? w : fc, acc[f * r + j]);
    }
  e.flushStores();
  return success();
}

LogicalResult GemvEmitter::columns(int64_t v, int64_t stages) {
  MatmulShape &s = e.shape;
  auto thr = e.config.getThread();
  int64_t threads = gemvColumnThreads(e.bn, e.bk, thr);
  bool realign = thr.size() >= 2 && thr[1] == 8;
  if (threads == 0 || e.threads != threads || e.bm != s.m || thr[0] != s.m ||
      !(thr[1] == 1 || thr[1] == v || realign))
    return e.op->emitOpError() << "gemv: block and thread tiles do not fit "
                                  "the shape: run kb-tile";
  int64_t tn = thr[1], m = s.m;
  if (realign) {
    // kb-tile's rules (gemvRealignFits) for the realigned loads.
    int64_t cols = e.bn / 8, rr = thr.size() == 3 ? thr[2] : e.bk;
    if (elemBytes(e.bmem) != 2 || !gemvRealignFits(e.bn, rr))
      return e.op->emitOpError()
             << "gemv: thread TN = 8 (realigned 16-byte loads) needs a "
                "16-bit B, BN / 8 dividing 32 or a multiple of it and R a "
                "multiple of 8; BN = "
             << e.bn << ", R = " << rr << ", cols = " << cols;
  }
  // The block's threads: `cols` of them across its columns, times `groups`
  // k groups (BK / R with thread = [M, TN, R], else 1), each taking r
  // consecutive rows of every k tile; the groups' sums meet in shared
  // memory at the end.
  int64_t cols = e.bn / tn, groups = threads / cols, r = e.bk / groups;
  if (r * tn > kGemvMaxTileFloats)
    return e.op->emitOpError()
           << "gemv: a thread would load " << r * tn
           << " weight floats a k tile (" << r << " rows of " << tn
           << "); at most " << kGemvMaxTileFloats;
  Value af = flatten(b, loc, e.a), bf = flatten(b, loc, e.bmem);
  // The weight read once, evict-first, as `rows` reads it (realigned: as
  // 16-byte loads).
  if (streams(double(elemBytes(bf)) * s.k * s.n, realign ? 4 : tn))
    streamFrom(bf);
  MatmulEmitter::BlockTile t = e.blockTile();
  Value c = groups > 1 ? e.rem(e.tid, cols) : e.tid;
  Value g = groups > 1 ? e.div(e.tid, cols) : cidx(b, loc, 0);
  Value n0 = e.add(t.col0, e.mul(c, tn));
  Value nLoad = n0;
  if (s.n % e.bn && !realign)
    nLoad = arith::MinUIOp::create(b, loc, n0, cidx(b, loc, s.n - tn));
  // A's values: vectors of 4 k when rows allow and they are few
  // (registers), else one element each. One row (M = 1) is aligned for
  // any K (k offsets are multiples of 4); with K % 4 != 0 the tile holding
  // K's end still reads one element at a time (a vector would cross it).
  bool aVectors = m <= 4 && (s.k % 4 == 0 || m == 1) && r % 4 == 0;
  auto positions = [&](Value kt, bool guarded) {
    Value k0 = e.kAt(kt);
    if (groups > 1)
      k0 = e.add(k0, e.mul(g, r));
    SmallVector<Value> ks, in;
    for (int64_t i = 0; i < r; ++i) {
      ks.push_back(e.add(k0, i));
      in.push_back(guarded ? lt(ks.back(), s.k) : Value());
    }
    return std::make_pair(ks, in);
  };
  // r rows of the thread's columns (w[i * tn + l]), every load first.
  auto loadTile = [&](Value kt, bool guarded) {
    auto [ks, in] = positions(kt, guarded);
    SmallVector<Value> w;
    // Streamed and unguarded, row i is row 0's index plus i * N (folded
    // offsets).
    bool fold = !guarded && bf == streamMem;
    for (int64_t i = 0; i < r; ++i) {
      SmallVector<Value> x =
          fold ? load(bf, e.add(e.mul(ks[0], s.n), nLoad), tn, Value(),
                      i * s.n)
               : load(bf, e.add(e.mul(ks[i], s.n), nLoad), tn, in[i]);
      w.append(x.begin(), x.end());
    }
    return w;
  };
  auto fmaTile = [&](Value kt, bool guarded, ArrayRef<Value> w,
                     SmallVector<Value> &acc) {
    auto [ks, in] = positions(kt, guarded);
    bool vec = aVectors && (!guarded || s.k % 4 == 0);
    for (int64_t mi = 0; mi < m; ++mi) {
      SmallVector<Value> av;
      for (int64_t i = 0; i < r; i += vec ? 4 : 1) {
        SmallVector<Value> x = load(af, e.add(cidx(b, loc, mi * s.k), ks[i]),
                                    vec ? 4 : 1, in[i]);
        av.append(x.begin(), x.end());
      }
      for (int64_t i = 0; i < r; ++i)
        for (int64_t l = 0; l < tn; ++l)
          acc[mi * tn + l] = math::FmaOp::create(b, loc, av[i], w[i * tn + l],
                                                 acc[mi * tn + l]);
    }
  };
  auto useTile = [&](Value kt, bool guarded, ArrayRef<Value> w,
                     SmallVector<Value> &acc) { fmaTile(kt, guarded, w, acc); };
  // Realigned (TN = 8, 16-bit B): row k's first column n0 of a thread
  // sits at flat element k N + n0, which is s = (k N) mod 8 past a 16-byte
  // boundary (n0 is a multiple of 8). Each thread loads the aligned chunk
  // [k N + n0 - s, + 8) in one 16-byte load; its 8 columns are that
  // chunk's last 8 - s elements and the first s of the next chunk, which
  // its right neighbour (lane + 1, the next 8 columns of the same rows)
  // loaded: a shuffle down by one of the words that hold them. The last
  // thread of a row segment (c = BN / 8 - 1, or lane 31) loads that next
  // chunk itself (predicated on it, only the words it needs). Rows of a
  // thread start at a multiple of 8 (BK and R are), so row i's s is
  // (i N) mod 8: a constant, and each column a constant word and half.
  int64_t T = s.k * s.n;
  auto shiftOf = [&](int64_t i) { return (i * s.n) % 8; };
  // Words of the next chunk that row i needs (elements s .. s + 7 end in
  // word (s + 7) / 2 of the two chunks' eight).
  auto needOf = [&](int64_t i) {
    return std::max<int64_t>(0, (shiftOf(i) + 7) / 2 - 3);
  };
  Value rBase, isTail;
  bool guardAll = false;
  if (realign) {
    guardLastTile = true;
    rBase = streamMem == bf ? streamBase : globalBase(bf);
    Value lane = e.rem(e.tid, 32);
    isTail = arith::OrIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c,
                              cidx(b, loc, cols - 1)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                              cidx(b, loc, 31)));
    isTail = arith::ExtUIOp::create(b, loc, b.getI32Type(), isTail);
    // The unguarded tiles end before the last k tile: their rows stop at
    // kMax, and their loads (the next chunk's included) inside the buffer
    // unless N is small against BN; then every tile is guarded.
    int64_t kMax = (llvm::divideCeil(s.k, e.bk) - 1) * e.bk - 1;
    int64_t n0Max = llvm::divideCeil(s.n, e.bn) * e.bn - 8;
    guardAll = kMax * s.n + n0Max + 16 > T;
  }
  auto byteAddr = [&](Value flat) {
    Value off = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), flat);
    return arith::AddIOp::create(
        b, loc, rBase,
        arith::MulIOp::create(
            b, loc, off,
            arith::ConstantIntOp::create(b, loc, b.getI64Type(), 2)));
  };
  auto inside = [&](Value flat, int64_t end, Value rowIn) {
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                     e.add(flat, end), cidx(b, loc, T));
    return arith::AndIOp::create(b, loc, ok, rowIn).getResult();
  };
  // The buffer's last chunk, [aP, T) with aP = T rounded down to 8, when
  // T % 8 != 0: the one chunk that is partly inside (an aligned chunk that
  // runs past T is it or lies wholly past T). Its T - aP elements at
  // constant addresses (the same for every thread): 8-byte and 4-byte
  // loads and an element, zero-padded to four words.
  int64_t aP = T / 8 * 8;
  auto partialWords = [&]() {
    Type i32 = b.getI32Type();
    Value zero = arith::ConstantIntOp::create(b, loc, i32, 0);
    SmallVector<Value> words(4, zero);
    int64_t full = (T - aP) / 2, at = 0;
    Value base = byteAddr(cidx(b, loc, aP));
    for (int64_t width : {2, 1})
      if (full - at >= width) {
        SmallVector<Value> x = loadWords(base, width, 4 * at);
        for (int64_t w = 0; w < width; ++w)
          words[at + w] = x[w];
        at += width;
      }
    if ((T - aP) % 2) {
      Value x = memref::LoadOp::create(b, loc, bf, ValueRange{cidx(b, loc, T - 1)});
      Value bits = arith::BitcastOp::create(b, loc, b.getI16Type(), x);
      words[at] = arith::ExtUIOp::create(b, loc, i32, bits);
    }
    return words;
  };
  auto selectWords = [&](Value cond, ArrayRef<Value> x, ArrayRef<Value> y) {
    SmallVector<Value> out;
    for (auto [xi, yi] : llvm::zip(x, y))
      out.push_back(arith::SelectOp::create(b, loc, cond, xi, yi));
    return out;
  };
  // r rows of 4 words (the thread's chunk), each followed by the needOf(i)
  // words of the next chunk (zeros but on a segment's last thread).
  auto loadRealigned = [&](Value kt, bool guarded) {
    guarded = guarded || guardAll;
    auto [ks, in] = positions(kt, guarded);
    SmallVector<Value> w;
    Value flat0 = e.add(e.mul(ks[0], s.n), n0);
    Value addr0 = guarded ? Value() : byteAddr(flat0);
    Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
    SmallVector<Value> partial;
    for (int64_t i = 0; i < r; ++i) {
      int64_t need = needOf(i), words = need > 2 ? 4 : need;
      if (!guarded) {
        // One address a tile: row i is i N - s elements past row 0's chunk.
        int64_t off = 2 * (i * s.n - shiftOf(i));
        SmallVector<Value> x = loadWords(addr0, 4, off);
        w.append(x.begin(), x.end());
        if (need) {
          SmallVector<Value> y = loadWords(addr0, words, off + 16, isTail);
          w.append(y.begin(), y.begin() + need);
        }
        continue;
      }
      // Guarded: a chunk past K or the buffer's end is not loaded (zeros);
      // the one partly inside the buffer comes from partialWords.
      Value flat = e.add(e.add(e.mul(ks[i], s.n), n0), -shiftOf(i));
      Value ok = inside(flat, 8, in[i]);
      Value addr = byteAddr(
          arith::SelectOp::create(b, loc, ok, flat, cidx(b, loc, 0)));
      SmallVector<Value> x = selectWords(
          ok, loadWords(addr, 4, 0), SmallVector<Value>(4, zero));
      SmallVector<Value> y;
      Value okNext;
      if (need) {
        okNext = inside(flat, 16, in[i]);
        Value addrNext = byteAddr(arith::SelectOp::create(
            b, loc, okNext, e.add(flat, 8), cidx(b, loc, 0)));
        Value pred = arith::AndIOp::create(
            b, loc, isTail,
            arith::ExtUIOp::create(b, loc, b.getI32Type(), okNext));
        y = loadWords(addrNext, words, 0, pred);
        y.resize(need);
      }
      if (T % 8) {
        // The buffer's partial last chunk where it is this row's (K's
        // last row), or the next chunk.
        if (partial.empty())
          partial = partialWords();
        auto isPartial = [&](Value at) {
          Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           at, cidx(b, loc, aP));
          return arith::AndIOp::create(b, loc, eq, in[i]).getResult();
        };
        x = selectWords(isPartial(flat), partial, x);
        if (need) {
          SmallVector<Value> z(partial.begin(), partial.begin() + need);
          y = selectWords(isPartial(e.add(flat, 8)), z, y);
        }
      }
      w.append(x.begin(), x.end());
      w.append(y.begin(), y.end());
    }
    return w;
  };
  // The words to f32 columns: the neighbour's words by shuffle (the
  // segment's last thread keeps its own load), then column l of row i is
  // element s + l of the two chunks: a constant word and half.
  auto useRealigned = [&](Value kt, bool guarded, ArrayRef<Value> w,
                          SmallVector<Value> &acc) {
    guarded = guarded || guardAll;
    Type elem = cast<MemRefType>(bf.getType()).getElementType();
    Type i32 = b.getI32Type();
    Value sixteen = arith::ConstantIntOp::create(b, loc, i32, 16);
    Value tail = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, isTail,
        arith::ConstantIntOp::create(b, loc, i32, 0));
    SmallVector<Value> cols8;
    size_t at = 0;
    for (int64_t i = 0; i < r; ++i) {
      int64_t need = needOf(i);
      SmallVector<Value> words(w.begin() + at, w.begin() + at + 4);
      at += 4;
      for (int64_t j = 0; j < need; ++j) {
        Value down =
            gpu::ShuffleOp::create(b, loc, words[j], 1, 32,
                                   gpu::ShuffleMode::DOWN)
                .getShuffleResult();
        words.push_back(
            arith::SelectOp::create(b, loc, tail, w[at + j], down));
      }
      at += need;
      for (int64_t l = 0; l < 8; ++l) {
        int64_t el = shiftOf(i) + l;
        Value bits = words[el / 2];
        if (el % 2)
          bits = arith::ShRUIOp::create(b, loc, bits, sixteen);
        Value h = arith::TruncIOp::create(b, loc, b.getI16Type(), bits);
        Value x = arith::BitcastOp::create(b, loc, elem, h);
        cols8.push_back(arith::ExtFOp::create(b, loc, b.getF32Type(), x));
      }
    }
    fmaTile(kt, guarded, cols8, acc);
  };
  SmallVector<Value> acc =
      realign ? kLoop(m * tn, stages, kNoUnrollColumnTiles, loadRealigned,
                      useRealigned)
              : kLoop(m * tn, stages, kNoUnrollColumnTiles, loadTile, useTile);
  OpBuilder::InsertionGuard guard(b);
  if (groups > 1) {
    // Every group's sums into shared memory (red[(g * M + mi) * BN + col]),
    // then the first group adds them up in group order (the same bits run
    // to run) and stores.
    auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                         gpu::AddressSpace::Workgroup);
    Value red = memref::ViewOp::create(
        b, loc, MemRefType::get({groups * m * e.bn}, b.getF32Type(), nullptr,
                                wg),
        e.dynamicSharedMemory(), cidx(b, loc, 0), ValueRange{});
    auto at = [&](Value grp, int64_t mi) {
      return e.add(e.mul(e.add(e.mul(grp, m), mi), e.bn), e.mul(c, tn));
    };
    auto vt = VectorType::get({tn}, b.getF32Type());
    // Realigned, with a warp holding 32 / cols groups: those add their sums
    // first by shuffles (butterfly over the lanes cols apart), and the
    // warps' sums meet in shared memory (slot = warp), as groups do
    // otherwise (TN * 32 / cols floats a thread would be too many to load
    // in the first group: 1024 at BN = 32).
    int64_t slots = groups;
    Value slot = g;
    if (realign && cols < 32) {
      for (Value &x : acc)
        for (int64_t off = cols; off < 32; off *= 2)
          x = arith::AddFOp::create(
              b, loc, x,
              gpu::ShuffleOp::create(b, loc, x, off, 32,
                                     gpu::ShuffleMode::XOR)
                  .getShuffleResult());
      slots = threads / 32;
      slot = e.div(e.tid, 32);
      Value writer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           e.rem(e.tid, 32),
                                           cidx(b, loc, cols));
      auto ifWrite = scf::IfOp::create(b, loc, writer, false);
      b.setInsertionPointToStart(ifWrite.thenBlock());
    }
    for (int64_t mi = 0; mi < m; ++mi) {
      SmallVector<Value> xs(acc.begin() + mi * tn, acc.begin() + (mi + 1) * tn);
      Value vec = vector::FromElementsOp::create(b, loc, vt, xs);
      vector::StoreOp::create(b, loc, vec, red, ValueRange{at(slot, mi)}, false,
                              llvm::MaybeAlign(4 * tn));
    }
    if (realign && cols < 32)
      b.setInsertionPointAfter(b.getInsertionBlock()->getParentOp());
    gpu::BarrierOp::create(b, loc);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, g,
                                        cidx(b, loc, 0));
    auto ifOp = scf::IfOp::create(b, loc, first, false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t mi = 0; mi < m; ++mi)
      for (int64_t grp = 0; grp < slots; ++grp) {
        Value x = vector::LoadOp::create(b, loc, vt, red,
                                         ValueRange{at(cidx(b, loc, grp), mi)},
                                         false, llvm::MaybeAlign(4 * tn));
        for (int64_t l = 0; l < tn; ++l) {
          Value xl = vector::ExtractOp::create(b, loc, x, ArrayRef<int64_t>{l});
          acc[mi * tn + l] =
              grp == 0 ? xl
                       : arith::AddFOp::create(b, loc, acc[mi * tn + l], xl);
        }
      }
  }
  for (int64_t mi = 0; mi < m; ++mi) {
    Value row = cidx(b, loc, mi);
    if (tn == 8) {
      // C's rows are not 16-byte aligned (N % 8 != 0): one element at a
      // time.
      for (int64_t l = 0; l < 8; ++l)
        e.storeC(t.batch, row, e.add(n0, l), acc[mi * 8 + l]);
    } else if (tn == 4) {
      SmallVector<Value> xs;
      for (int64_t l = 0; l < 4; ++l)
        xs.push_back(e.epilogue(acc[mi * 4 + l], t.batch, row, e.add(n0, l)));
      e.storeVector(t.batch, row, n0, xs);
    } else {
      e.storeC(t.batch, row, n0, acc[mi]);
    }
  }
  e.flushStores();
  return success();
}

} // namespace

LogicalResult mlir::kb::buildGemv(MatmulEmitter &e, LaunchInfo &info) {
  MatmulShape &s = e.shape;
  std::optional<GemvForm> form =
      s.batched ? std::nullopt : gemvForm(s.m, s.n, s.transB);
  if (!form)
    return e.op->emitOpError()
           << "mma \"gemv\" computes matmuls of batch 1 with at most "
           << kGemvMaxFew << " rows or columns";
  // Its k loop guards only the tile that holds the end of K, after the
  // loop: each split's chunk must be whole k tiles of K.
  if (s.splits > 1 && e.kTilesPerBlock() * s.splits != llvm::divideCeil(s.k, e.bk))
    return e.op->emitOpError()
           << "gemv: split = " << s.splits << " must divide the "
           << llvm::divideCeil(s.k, e.bk) << " k tiles";
  // A row-major B's k groups meet in shared memory (gemvSharedBytes).
  if (failed(e.setSharedBytes(
          info, gemvSharedBytes(e.bm, e.bn, e.bk, e.config.getThread()))))
    return failure();
  int64_t ldb = cast<MemRefType>(e.bmem.getType()).getShape().back();
  int64_t v = gemvVector(*form, s.n, s.k, ldb, s.transB);
  // stages: k tiles of weight loads in flight (1 or 2; kb-promote-shared-
  // memory checks it).
  int64_t stages = std::max<int64_t>(e.config.getStages(), 1);
  if (stages > 2)
    return e.op->emitOpError() << "gemv: stages = " << stages
                               << ": the register pipeline has 1 or 2";
  GemvEmitter g{e, e.b, e.loc};
  return *form == GemvForm::Columns ? g.columns(v, stages)
                                    : g.rows(*form, v, ldb, stages);
}

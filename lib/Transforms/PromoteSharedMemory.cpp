//===- PromoteSharedMemory.cpp - stage matmul tiles in shared memory ------===//
//
// kb-promote-shared-memory: each block stages its A and B operand tiles in
// shared memory, `stages` deep, each row padded by `pad` words so that the
// fragment loads of a warp fall in distinct banks. The total is checked
// against the chip's per-block limit: a tile that needs more shared memory
// than the device has is an error here, not a launch failure on the GPU.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBPROMOTESHAREDMEMORY
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

struct PromoteSharedMemoryPass
    : public kb::impl::KBPromoteSharedMemoryBase<PromoteSharedMemoryPass> {
  using Base::Base;
  void runOnOperation() override {
    auto model = getTargetModel(chip);
    if (failed(model)) {
      getOperation().emitError() << "kb-promote-shared-memory: unknown chip '"
                                 << chip << "'";
      return signalPassFailure();
    }
    for (Operation &op : getOperation().getBody().getOps()) {
      if (getKernelKind(&op) != KernelKind::Matmul)
        continue;
      ConfigFields f = ConfigFields::from(getConfig(&op));
      if (f.block.size() != 3) {
        op.emitOpError() << "kb-promote-shared-memory needs block tiles: run "
                            "kb-tile first";
        return signalPassFailure();
      }
      bool tensorCores = isMmaSync(f.mma);
      bool wgmma = f.mma == MmaUnit::wgmma_tf32;
      bool transposeB = getKernelMatmul(&op).getTransposeB();
      if (f.copy == CopyKind::tma && !wgmma) {
        op.emitOpError() << "copy = \"tma\" is only for mma = \"wgmma_tf32\" "
                            "(sm_90a, precision(tf32)), not \""
                         << nameOf(f.mma) << "\"";
        return signalPassFailure();
      }
      if (wgmma) {
        // wgmma reads 128-byte swizzled rows: no padding. Four stages (the
        // copies run two tiles ahead while one wgmma group is in flight),
        // three when four do not fit.
        if (!f.pad.empty() && (f.pad[0] || f.pad[1])) {
          op.emitOpError() << "wgmma tiles are swizzled, not padded: pad must "
                              "be [0, 0]";
          return signalPassFailure();
        }
        f.pad = {0, 0};
        // TMA unless the config asks for cp.async: a producer warp after
        // the consumer warpgroups issues each tile's copy (MatmulWgmma.cpp),
        // the tensor map swizzles it and zero-fills what lies past M, N or K
        // (K % 4 == 0, which wgmma_tf32 already needs, makes every row pitch
        // the multiple of 16 bytes a tensor map needs).
        if (!f.copy)
          f.copy = CopyKind::tma;
        if (f.copy == CopyKind::tma)
          f.threads = wgmmaThreads(f.block[0], /*tma=*/true);
        if (!f.stages) {
          f.stages = 4;
          if (matmulSharedBytes(f.get(&getContext()), transposeB) >
              model->maxSharedPerBlock)
            f.stages = 3;
        }
        if (f.stages < 3) {
          op.emitOpError() << "wgmma needs at least 3 stages (copies two tiles "
                              "ahead of the one in flight); got "
                           << f.stages;
          return signalPassFailure();
        }
      } else if (f.pad.empty()) {
        if (tensorCores)
          // Row strides of BK + 4 and BN + 8 words (mod 32: 4 and 8) spread
          // the m16n8k8 fragment loads of a warp (rows g = lane / 4, columns
          // t = lane % 4) over all 32 banks.
          f.pad = {4, 8};
        else
          // A is stored transposed (As[k][m]); 4 words of padding put the
          // k-columns that a warp's transposing stores touch in distinct
          // banks. B rows are read as 16-byte vectors and need none.
          f.pad = {4, 0};
      }
      if (!f.stages) {
        // FFMA: four cp.async stages (A transposed by 4-byte copies, B in
        // 16-byte chunks) when B is row-major and they fit in half of the
        // SM's shared memory: 0.92-0.94x cuBLAS at 4096^3 against 0.85x
        // for the register-prefetched double buffer, whose loads ptxas sank
        // to the end of the loop (2026-11-30 runs 2-3). A transposed B
        // would need 4-byte copies for B too (batched 512x384x256: 11%
        // slower): there, two buffers through registers. mma.sync:
        // cp.async stages, as many (3 at most, 2 at least) as fit in half
        // of the SM's shared memory, so that two blocks can share an SM
        // when registers allow (128x256x32 tiles: 2 stages, 104 KB; 3
        // would take 156 KB).
        f.stages = 2;
        if (!tensorCores && !transposeB) {
          // 4 stages, or 3 where 4 do not fit (BK = 32: 100 KB for 3).
          for (int64_t n : {4, 3}) {
            ConfigFields deeper = f;
            deeper.stages = n;
            if (matmulSharedBytes(deeper.get(&getContext()), transposeB) <=
                model->sharedPerSM / 2) {
              f.stages = n;
              break;
            }
          }
        }
        if (tensorCores) {
          ConfigFields three = f;
          three.stages = 3;
          if (matmulSharedBytes(three.get(&getContext()), transposeB) <=
              model->sharedPerSM / 2)
            f.stages = 3;
        }
      }
      ConfigAttr attr = f.get(&getContext());
      int64_t bytes = matmulSharedBytes(attr, transposeB);
      if (bytes > model->maxSharedPerBlock) {
        op.emitOpError() << "config needs " << bytes
                         << " bytes of shared memory per block (block = ["
                         << f.block[0] << ", " << f.block[1] << ", "
                         << f.block[2] << "], stages = " << f.stages
                         << "); " << model->chip << " allows at most "
                         << model->maxSharedPerBlock;
        return signalPassFailure();
      }
      setConfig(&op, attr);
    }
  }
};

} // namespace

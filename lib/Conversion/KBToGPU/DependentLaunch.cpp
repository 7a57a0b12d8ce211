//===- DependentLaunch.cpp - programmatic dependent launch ----------------===//
//
// kb-dependent-launch: in each host function kb-lower-to-gpu made, the
// kernels after the first start with griddepcontrol.wait and their launches
// are marked kb.dependent_launch (kb-run launches them with Hopper's
// programmatic stream serialization); the kernels before the last start with
// griddepcontrol.launch_dependents. The wait comes first in the kernel,
// before any load, so whatever the kernel reads of the kernels before it is
// complete and visible; launch_dependents at the start only lets the next
// grid be scheduled early, where it waits.
//
// Where the next grid's blocks are placed is decided when they are
// scheduled: with the signal at the start, on the SMs that have room then.
// A grid of one block an SM that leaves a few SMs idle (a 128-block wgmma
// split on 132 SMs, whose blocks take each SM's registers) sends the next
// grid's blocks to those few: in run 13 the split sum behind longk
// 256x256x262144 ran 3.8% slower with the signal, half its 256 blocks on 4
// SMs. The signal is left out where the blocks that fit on the idle SMs are
// a share of the next grid more than kMaxCrowding times the idle SMs' share
// of the SMs (longk 256^2: 50% on 3% of the SMs, 16.5x; skinny 128 rows and
// odd 1000x700x1500, which gained with it: 2.1x and 1.5x).
//
//===----------------------------------------------------------------------===//

#include "kb/Conversion/Passes.h"
#include "kb/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBDEPENDENTLAUNCH
#include "kb/Conversion/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

constexpr double kMaxCrowding = 4;

/// The product of a launch's grid or block sizes; 0 where one is not a
/// constant (kb-lower-to-gpu's are).
int64_t product(gpu::KernelDim3 d) {
  int64_t p = 1;
  for (Value v : {d.x, d.y, d.z})
    p *= getConstantIntValue(v).value_or(0);
  return p;
}
int64_t blocksOf(gpu::LaunchFuncOp l) {
  return product(l.getGridSizeOperandValues());
}
int64_t threadsOf(gpu::LaunchFuncOp l) {
  return product(l.getBlockSizeOperandValues());
}

/// Whether `next`'s blocks, scheduled while `l` runs, would crowd onto the
/// SMs `l` leaves idle (at most one block of `l` an SM assumed, and none of
/// `next` beside it: the wgmma grids take an SM's registers).
bool crowds(gpu::LaunchFuncOp l, gpu::LaunchFuncOp next,
            const TargetModel &model) {
  int64_t idle = model.smCount - blocksOf(l);
  int64_t nextBlocks = blocksOf(next), nextThreads = threadsOf(next);
  if (idle <= 0 || nextBlocks <= 0 || nextThreads <= 0)
    return false;
  int64_t perSM = std::min<int64_t>(32, model.maxThreadsPerSM / nextThreads);
  double placed =
      double(std::min(nextBlocks, idle * perSM)) / double(nextBlocks);
  return placed / (double(idle) / double(model.smCount)) > kMaxCrowding;
}

struct DependentLaunchPass
    : public kb::impl::KBDependentLaunchBase<DependentLaunchPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<TargetModel> model = getTargetModel(chip);
    if (failed(model)) {
      module.emitError() << "kb-dependent-launch: unknown chip '" << chip
                         << "'";
      return signalPassFailure();
    }
    // Each kernel's launches, to refuse one launched twice (its wait would
    // then also run where it is the first kernel, harmless, but its
    // launch_dependents would be wrong to rely on).
    llvm::DenseMap<Operation *, int> launchesOf;
    module.walk([&](gpu::LaunchFuncOp l) {
      if (auto f = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
              l, l.getKernel()))
        ++launchesOf[f];
    });
    WalkResult r = module.walk([&](func::FuncOp host) -> WalkResult {
      SmallVector<gpu::LaunchFuncOp> launches;
      for (Block &b : host.getBody())
        for (auto l : b.getOps<gpu::LaunchFuncOp>())
          launches.push_back(l);
      for (auto [i, l] : llvm::enumerate(launches)) {
        auto f = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
            l, l.getKernel());
        if (!f) {
          l.emitOpError() << "kb-dependent-launch: no gpu.func "
                          << l.getKernel();
          return WalkResult::interrupt();
        }
        if (launchesOf[f] != 1) {
          l.emitOpError() << "kb-dependent-launch: kernel " << l.getKernel()
                          << " is launched " << launchesOf[f]
                          << " times; each kernel of a kb program is "
                             "launched once";
          return WalkResult::interrupt();
        }
        if (f.getBody().empty())
          continue;
        OpBuilder b = OpBuilder::atBlockBegin(&f.getBody().front());
        // launch_dependents first: the wait does not delay the signal.
        if (i + 1 < launches.size() && !crowds(l, launches[i + 1], *model))
          NVVM::GriddepcontrolOp::create(
              b, f.getLoc(), NVVM::GridDepActionKind::launch_dependents);
        if (i > 0) {
          // Inline PTX with a memory clobber rather than nvvm.griddepcontrol
          // wait: LLVM declares that intrinsic as touching no memory
          // (IntrNoMem, with side effects), so nothing in LLVM's IR would
          // forbid moving a load of the earlier kernels' results above it.
          LLVM::InlineAsmOp::create(
              b, f.getLoc(), TypeRange{}, ValueRange{}, "griddepcontrol.wait;",
              "~{memory}", /*has_side_effects=*/true, /*is_align_stack=*/false,
              LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
              ArrayAttr());
          l->setAttr("kb.dependent_launch", b.getUnitAttr());
        }
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

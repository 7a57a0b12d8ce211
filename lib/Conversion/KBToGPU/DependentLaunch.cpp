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
//===----------------------------------------------------------------------===//

#include "kb/Conversion/Passes.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBDEPENDENTLAUNCH
#include "kb/Conversion/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

struct DependentLaunchPass
    : public kb::impl::KBDependentLaunchBase<DependentLaunchPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
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
        if (i + 1 < launches.size())
          NVVM::GriddepcontrolOp::create(
              b, f.getLoc(), NVVM::GridDepActionKind::launch_dependents);
        if (i > 0) {
          NVVM::GriddepcontrolOp::create(b, f.getLoc(),
                                         NVVM::GridDepActionKind::wait);
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

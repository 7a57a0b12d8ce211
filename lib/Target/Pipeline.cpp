//===- Pipeline.cpp - the kb-compile pipeline -----------------------------===//
//
// `kb-compile`: fusion, the decision passes, kb-lower-to-gpu, upstream's NVVM
// lowering of each kernel module, PTX through gpu-module-to-binary, and the
// bundle. The order is the one place where kb's pipeline is assembled; the
// options reach each pass as values. Also what kb-opt (and any tool that
// embeds kb, include/kb/Target/Pipeline.h) registers: the dialects and the
// passes kb needs, and nothing else.
//
//===----------------------------------------------------------------------===//

#include "kb/Target/Pipeline.h"
#include "kb/Conversion/Passes.h"
#include "kb/Dialect/KB/IR/KBDialect.h"
#include "kb/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/AllExtensions.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace mlir;

namespace {
/// kb-compile's options as pipeline text (`--kb-compile="chip=..."`),
/// copied into a kb::CompileOptions.
struct CompileTextOptions : public PassPipelineOptions<CompileTextOptions> {
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target chip: sm_90a (the default: Hopper's wgmma "
                     "and TMA; runs on H100/H200 only), sm_90 "
                     "(mma.sync; also runs on later chips) or sm_80"),
      llvm::cl::init(kb::CompileOptions().chip)};
  Option<std::string> output{
      *this, "output",
      llvm::cl::desc("Bundle folder to write; empty: stop after PTX")};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Run kb-fuse-attention and kb-fuse-elementwise first"),
                    llvm::cl::init(kb::CompileOptions().fuse)};
  Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit holding nvvm/libdevice (default: CUDA_ROOT, "
                     "CUDA_HOME, CUDA_PATH, then /usr/local/cuda)")};
  Option<std::string> tuningDb{
      *this, "tuning-db",
      llvm::cl::desc("A kb-tune database whose entries give kernels their "
                     "#kb.config (docs/kb-tune.md); read by kb-select-config")};
  Option<std::string> ptxas{*this, "ptxas",
                            llvm::cl::desc("ptxas path, 'auto' or 'none'"),
                            llvm::cl::init(kb::CompileOptions().ptxas)};
};

/// The option names of kb-compile (CompileTextOptions).
constexpr const char *kCompileOptionNames[] = {
    "chip", "output", "fuse", "cuda-path", "tuning-db", "ptxas"};

/// The first key of `text` (`key=value ...`, a value quoted or in braces,
/// as MLIR's pass options parser splits them) that is not a kb-compile
/// option, or "" when every key is one.
std::string findUnknownOption(StringRef text) {
  while (true) {
    text = text.ltrim();
    if (text.empty())
      return "";
    size_t end = text.find_first_of("= ");
    StringRef key = text.take_front(end);
    text = text.drop_front(key.size());
    if (!llvm::is_contained(kCompileOptionNames, key))
      return key.str();
    if (!text.consume_front("="))
      continue;
    if (!text.empty() && (text[0] == '\'' || text[0] == '"')) {
      size_t close = text.find(text[0], 1);
      text = close == StringRef::npos ? "" : text.drop_front(close + 1);
    } else if (!text.empty() && text[0] == '{') {
      unsigned depth = 0;
      size_t i = 0;
      for (; i < text.size(); ++i)
        if (text[i] == '{')
          ++depth;
        else if (text[i] == '}' && --depth == 0)
          break;
      text = text.drop_front(std::min(i + 1, text.size()));
    } else {
      text = text.drop_front(std::min(text.find(' '), text.size()));
    }
  }
}

/// The one-line refusal of a misspelt option: the valid ones, and the
/// nearest.
std::string unknownOptionMessage(StringRef key) {
  std::string msg = "kb-compile has no option '" + key.str() + "'";
  StringRef nearest;
  unsigned best = 3;
  for (StringRef name : kCompileOptionNames)
    if (unsigned d = key.edit_distance(name); d < best)
      best = d, nearest = name;
  if (!nearest.empty())
    msg += " (did you mean '" + nearest.str() + "'?)";
  msg += "; its options are";
  for (StringRef name : kCompileOptionNames)
    msg += " " + name.str() + "=";
  msg += " (docs/user-guide.md)";
  return msg;
}

/// Whether `dir` is a CUDA toolkit with libdevice (what gpu-module-to-binary
/// links for math functions).
bool hasLibdevice(StringRef dir) {
  SmallString<256> p(dir);
  llvm::sys::path::append(p, "nvvm", "libdevice", "libdevice.10.bc");
  return llvm::sys::fs::is_regular_file(p);
}

/// The toolkit whose libdevice gets linked for math functions (exp, erf...):
/// `given` (cuda-path), else the first of CUDA_ROOT, CUDA_HOME, CUDA_PATH and
/// /usr/local/cuda that holds libdevice; empty if none does (kb-emit-bundle
/// then refuses PTX that calls an unresolved function).
std::string findCudaToolkit(const std::string &given) {
  if (!given.empty())
    return given;
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v && hasLibdevice(v))
      return v;
  if (hasLibdevice("/usr/local/cuda"))
    return "/usr/local/cuda";
  return "";
}

} // namespace

/// Adds the kb-compile passes to `pm`. Every option reaches its pass as a
/// value (an options struct), never as pipeline text: a path with a space,
/// a quote or a brace is just a path.
LogicalResult mlir::kb::buildCompilePipeline(
    OpPassManager &pm, const CompileOptions &o,
    function_ref<LogicalResult(const Twine &)> errorHandlerOrNull) {
  auto errorHandler = [&](const Twine &message) -> LogicalResult {
    if (errorHandlerOrNull)
      return errorHandlerOrNull(message);
    llvm::errs() << "error: " << message << "\n";
    return failure();
  };
  std::string chip = o.chip;
  if (failed(kb::getTargetModel(chip)))
    return errorHandler("kb-compile: unknown chip '" + chip +
                        "' (known: sm_80, sm_90, sm_90a)");
  if (o.ptxas.empty())
    return errorHandler("kb-compile: option 'ptxas' is empty (give a path, "
                        "'auto' or 'none')");
  // A missing libdevice is only a diagnostic in gpu-module-to-binary (the
  // exit status stays 0): refused here instead.
  if (!o.cudaPath.empty() && !hasLibdevice(o.cudaPath))
    return errorHandler("kb-compile: cuda-path '" + o.cudaPath +
                        "' has no nvvm/libdevice/libdevice.10.bc (not a CUDA "
                        "toolkit)");
  std::string toolkit = findCudaToolkit(o.cudaPath);

  OpPassManager &fpm = pm.nest<func::FuncOp>();
  // kb-fuse-attention first: it takes whole matmul -> softmax -> matmul
  // chains, which kb-fuse-elementwise would otherwise split into epilogues.
  if (o.fuse) {
    fpm.addPass(kb::createKBFuseAttention());
    fpm.addPass(kb::createKBFuseElementwise());
  }
  // kb-select-mma first: it may put a kb.transpose or kb.pad in front of a
  // matmul, which kb-select-config then configures.
  fpm.addPass(kb::createKBSelectMma(kb::KBSelectMmaOptions{chip, o.tuningDb}));
  fpm.addPass(
      kb::createKBSelectConfig(kb::KBSelectConfigOptions{chip, o.tuningDb}));
  fpm.addPass(kb::createKBTile(kb::KBTileOptions{chip}));
  fpm.addPass(
      kb::createKBPromoteSharedMemory(kb::KBPromoteSharedMemoryOptions{chip}));
  fpm.addPass(kb::createKBSplitK());
  pm.addPass(kb::createKBLowerToGPU());
  // Programmatic dependent launch needs sm_90 (griddepcontrol).
  if (StringRef(chip).starts_with("sm_90"))
    pm.addPass(kb::createKBDependentLaunch(kb::KBDependentLaunchOptions{chip}));

  OpPassManager &gpm = pm.nest<gpu::GPUModuleOp>();
  gpm.addPass(createConvertNVGPUToNVVMPass());
  gpm.addPass(memref::createExpandStridedMetadataPass());
  gpm.addPass(createLowerAffinePass());
  gpm.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions toNvvm;
  toNvvm.useBarePtrCallConv = true;
  gpm.addPass(createConvertGpuOpsToNVVMOps(toNvvm));
  gpm.addPass(createConvertNVVMToLLVMPass());
  gpm.addPass(createCanonicalizerPass());
  gpm.addPass(createCSEPass());
  gpm.addPass(createReconcileUnrealizedCastsPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = chip;
  target.features = "+ptx80";
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  if (!o.output.empty()) {
    kb::KBEmitBundleOptions bundle;
    bundle.output = o.output;
    bundle.chip = chip;
    bundle.ptxas = o.ptxas;
    pm.addPass(kb::createKBEmitBundle(bundle));
  }
  return success();
}

void mlir::kb::registerCompileDialects(DialectRegistry &registry) {
  registry.insert<
      KBDialect, func::FuncDialect, arith::ArithDialect, math::MathDialect,
      tensor::TensorDialect, memref::MemRefDialect, scf::SCFDialect,
      cf::ControlFlowDialect, affine::AffineDialect, vector::VectorDialect,
      gpu::GPUDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect,
      LLVM::LLVMDialect, index::IndexDialect, ub::UBDialect, DLTIDialect>();
  // What convert-gpu-to-nvvm collects its patterns from (each loaded
  // dialect's ConvertToLLVMPatternInterface).
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  builtin::registerCastOpInterfaceExternalModels(registry);
  func::registerAllExtensions(registry);
  // nvvm-attach-target's #nvvm.target and gpu-module-to-binary's
  // translation of each kernel module to LLVM IR.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void mlir::kb::registerCompilePasses() {
  registerKBTransformsPasses();
  registerKBConversionPasses();
  registerKBCompilePipeline();
  // `fuse-elementwise`, the name the README and the examples use, as a
  // pipeline of the one pass (so it is in --help and in --pass-pipeline,
  // inside func.func(...) or directly on the module).
  PassPipelineRegistration<>(
      "fuse-elementwise", "The same as kb-fuse-elementwise",
      [](OpPassManager &pm) {
        if (pm.getOpName() == func::FuncOp::getOperationName())
          pm.addPass(createKBFuseElementwise());
        else
          pm.addNestedPass<func::FuncOp>(createKBFuseElementwise());
      });
  PassPipelineRegistration<>(
      "fuse-attention", "The same as kb-fuse-attention",
      [](OpPassManager &pm) {
        if (pm.getOpName() == func::FuncOp::getOperationName())
          pm.addPass(createKBFuseAttention());
        else
          pm.addNestedPass<func::FuncOp>(createKBFuseAttention());
      });
  // The upstream passes kb-compile runs, so that its steps can be run one at
  // a time (test/Tools/kb-opt-options.test does).
  registerPass([] { return createCanonicalizerPass(); });
  registerPass([] { return createCSEPass(); });
  registerPass([] { return createConvertNVGPUToNVVMPass(); });
  registerPass([] { return memref::createExpandStridedMetadataPass(); });
  registerPass([] { return createLowerAffinePass(); });
  registerPass([] { return createSCFToControlFlowPass(); });
  registerPass([] { return createConvertGpuOpsToNVVMOps(); });
  registerPass([] { return createConvertNVVMToLLVMPass(); });
  registerPass([] { return createReconcileUnrealizedCastsPass(); });
  registerPass([] { return createGpuNVVMAttachTarget(); });
  registerPass([] { return createGpuModuleToBinaryPass(); });
}

void mlir::kb::registerKBCompilePipeline() {
  // registerPassPipeline rather than PassPipelineRegistration: the builder
  // can refuse an option with a message instead of aborting.
  registerPassPipeline(
      "kb-compile",
      "Compile a kb program to PTX kernels and a bundle for kb-run "
      "(fusion, config, tiling, shared memory, mma, NVVM, PTX)",
      [](OpPassManager &pm, StringRef optionsStr,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        // MLIR's own refusal of an unknown key is "no such option" with
        // no list of the options there are.
        if (std::string key = findUnknownOption(optionsStr); !key.empty())
          return errorHandler(unknownOptionMessage(key));
        CompileTextOptions text;
        if (failed(text.parseFromString(optionsStr)))
          return failure();
        CompileOptions options;
        options.chip = text.chip;
        options.output = text.output;
        options.fuse = text.fuse;
        options.cudaPath = text.cudaPath;
        options.ptxas = text.ptxas;
        options.tuningDb = text.tuningDb;
        return buildCompilePipeline(pm, options, errorHandler);
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(CompileTextOptions());
      });
}

//===- TuningDb.cpp - kb-tune's database, as kb-select-config reads it ----===//
//
// The key of a kernel (what kb-tune tuned it for: its ops, shapes, a
// matmul's precision, the chip, kb's version), the database's reader, and
// the step of kb-select-config that gives a kernel its entry's fields. The
// format is docs/kb-tune.md's; kb-tune writes it (tools/kb-tune).
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"
#include "kb/Version.h"

#include "mlir/AsmParser/AsmParser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::kb;

namespace {
std::string shapeText(Type t) {
  std::string s;
  auto type = dyn_cast<ShapedType>(t);
  if (!type)
    return "?";
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    s += (i ? "x" : "") + std::to_string(d);
  // 16-bit tensors name their type (f32 keys stay as they were): a bf16
  // entry is not an f16 program's, nor an f32 one's.
  Type e = type.getElementType();
  if (e.isBF16() || e.isF16()) {
    std::string name;
    llvm::raw_string_ostream os(name);
    e.print(os);
    s += "x" + name;
  }
  return s;
}
} // namespace

std::string mlir::kb::tuningKey(Operation *op, StringRef chip) {
  std::string ops, shapes, precision = "-";
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    for (Operation &inner : fusion.getBody().front().without_terminator())
      ops += (ops.empty() ? "" : "+") + inner.getName().getStringRef().str();
  } else {
    ops = op->getName().getStringRef().str();
  }
  if (MatmulOp mm = getKernelMatmul(op)) {
    // M, N, K and the batch: unchanged by the kb.transpose and kb.pad
    // kb-select-mma may put in front of B and A (which change the matmul's
    // operand types).
    auto out = mm.getResult().getType().getShape();
    int64_t batch = out.size() == 3 ? out[0] : 1;
    int64_t k = getMatmulLogicalK(mm);
    shapes = "b" + std::to_string(batch) + " m" +
             std::to_string(out[out.size() - 2]) + " n" +
             std::to_string(out.back()) + " k" + std::to_string(k);
    // B as the program gives it: " bt" for B^T (transpose_b in the source,
    // possibly behind kb-select-mma's kb.pad), nothing for a row-major B,
    // also once kb-select-mma has put a kb.transpose in front of it (the key
    // is the same before and after that pass). The best tile differs
    // between the two layouts.
    if (mm.getTransposeB()) {
      Value bIn = mm.getRhs();
      if (auto arg = dyn_cast<BlockArgument>(bIn))
        if (auto fusion = dyn_cast<FusionOp>(op))
          bIn = fusion.getInputs()[arg.getArgNumber()];
      if (!bIn.getDefiningOp<TransposeOp>())
        shapes += " bt";
    }
    precision = stringifyPrecision(mm.getPrecision()).str();
  } else {
    for (Value v : op->getOperands())
      shapes += shapeText(v.getType()) + ",";
    shapes += "->" + shapeText(op->getResult(0).getType());
  }
  return ops + "|" + shapes + "|" + precision + "|" + chip.str() + "|kb " +
         KB_VERSION;
}

FailureOr<TuningDb> mlir::kb::loadTuningDb(StringRef path, std::string &error) {
  // A device or a FIFO would be read forever or wait for a writer.
  llvm::sys::fs::file_status st;
  if (!llvm::sys::fs::status(path, st) && !llvm::sys::fs::is_regular_file(st)) {
    error = "tuning database '" + path.str() + "' is not a regular file";
    return failure();
  }
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    error = "cannot read tuning database '" + path.str() +
            "': " + buf.getError().message();
    return failure();
  }
  llvm::Expected<llvm::json::Value> v = llvm::json::parse((*buf)->getBuffer());
  if (!v) {
    error = "tuning database '" + path.str() +
            "' is not JSON: " + llvm::toString(v.takeError());
    return failure();
  }
  const llvm::json::Object *root = v->getAsObject();
  if (!root || root->getString("kind") != "kb-tuning-db") {
    error = "tuning database '" + path.str() +
            "' is not a kb-tune database (no \"kind\": \"kb-tuning-db\")";
    return failure();
  }
  if (root->getInteger("schema") != 1) {
    error = "tuning database '" + path.str() + "': schema must be 1";
    return failure();
  }
  const llvm::json::Array *entries = root->getArray("entries");
  if (!entries) {
    error = "tuning database '" + path.str() + "': \"entries\" is not a list";
    return failure();
  }
  TuningDb db;
  for (auto [i, e] : llvm::enumerate(*entries)) {
    const llvm::json::Object *o = e.getAsObject();
    auto key = o ? o->getString("key") : std::nullopt;
    auto config = o ? o->getString("config") : std::nullopt;
    if (!key || !config) {
      error = "tuning database '" + path.str() + "': entries[" +
              std::to_string(i) +
              "] needs string fields \"key\" and \"config\"";
      return failure();
    }
    db.configs[*key] = config->str();
  }
  return db;
}

LogicalResult mlir::kb::applyTuningEntry(Operation *op, const TuningDb &db,
                                         StringRef chip) {
  std::string key = tuningKey(op, chip);
  auto it = db.configs.find(key);
  if (it == db.configs.end())
    return success();
  auto attr = dyn_cast_or_null<ConfigAttr>(
      parseAttribute(it->second, op->getContext()));
  if (!attr)
    return op->emitOpError()
           << "tuning database entry '" << key
           << "' has a config that is not a #kb.config: " << it->second;
  ConfigFields cur = ConfigFields::from(getConfig(op));
  ConfigFields tuned = ConfigFields::from(attr);
  std::string conflict;
  // One line per #kb.config field: a set field in the entry is taken unless
  // the op already has another value there.
  auto merge = [&](auto &have, const auto &want, auto unset, StringRef name) {
    if (want == unset || !conflict.empty())
      return;
    if (have != unset && have != want)
      conflict = name.str();
    else
      have = want;
  };
  using Sizes = SmallVector<int64_t>;
  merge(cur.block, tuned.block, Sizes(), "block");
  merge(cur.warp, tuned.warp, Sizes(), "warp");
  merge(cur.thread, tuned.thread, Sizes(), "thread");
  merge(cur.pad, tuned.pad, Sizes(), "pad");
  merge(cur.threads, tuned.threads, int64_t(0), "threads");
  merge(cur.vector, tuned.vector, int64_t(0), "vector");
  merge(cur.stages, tuned.stages, int64_t(0), "stages");
  merge(cur.cluster, tuned.cluster, int64_t(0), "cluster");
  merge(cur.grid, tuned.grid, int64_t(0), "grid");
  merge(cur.raster, tuned.raster, int64_t(0), "raster");
  merge(cur.split, tuned.split, int64_t(0), "split");
  merge(cur.mma, tuned.mma, std::optional<MmaUnit>(), "mma");
  merge(cur.strategy, tuned.strategy, std::optional<SoftmaxStrategy>(),
        "strategy");
  merge(cur.copy, tuned.copy, std::optional<CopyKind>(), "copy");
  merge(cur.store, tuned.store, std::optional<StoreKind>(), "store");
  merge(cur.reduce, tuned.reduce, std::optional<ReduceKind>(), "reduce");
  merge(cur.operands, tuned.operands, std::optional<OperandOrder>(),
        "operands");
  if (!conflict.empty()) {
    op->emitWarning() << "tuning database entry '" << key << "' not used: its '"
                      << conflict << "' differs from the one already set";
    return success();
  }
  setConfig(op, cur.get(op->getContext()));
  return success();
}

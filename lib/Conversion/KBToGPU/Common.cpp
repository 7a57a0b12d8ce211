//===- Common.cpp - IR-building helpers shared by kb's kernel generators --===//
//
// Constants, Philox4x32-10, the scalar form of each elementwise op and the
// block-wide reduction (warp shuffles through gpu.subgroup_reduce, then one
// shared-memory exchange between warps).
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kb;

Value mlir::kb::cidx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

void mlir::kb::pinValues(OpBuilder &b, Location loc, ValueRange floats) {
  // f32 values in "f" registers; 16-bit ones (f16, bf16) as their bits in
  // "h" registers.
  std::string constraints;
  SmallVector<Value> operands;
  for (auto [i, v] : llvm::enumerate(floats)) {
    bool half = v.getType().getIntOrFloatBitWidth() == 16;
    constraints += std::string(i ? "," : "") + (half ? "h" : "f");
    operands.push_back(half ? arith::BitcastOp::create(b, loc, b.getI16Type(),
                                                       v)
                                  .getResult()
                            : v);
  }
  LLVM::InlineAsmOp::create(b, loc, TypeRange{}, operands, "", constraints,
                            /*has_side_effects=*/true,
                            /*is_align_stack=*/false,
                            LLVM::tailcallkind::TailCallKind::None,
                            LLVM::AsmDialectAttr(), ArrayAttr());
}

Value mlir::kb::cf32(OpBuilder &b, Location loc, float v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value mlir::kb::ci32(OpBuilder &b, Location loc, uint32_t v) {
  return arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
}

Value mlir::kb::evictFirstPolicy(OpBuilder &b, Location loc) {
  return LLVM::InlineAsmOp::create(
             b, loc, TypeRange{b.getI64Type()}, ValueRange{},
             "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l",
             /*has_side_effects=*/false, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
             ArrayAttr())
      .getResult(0);
}

std::array<Value, 4> mlir::kb::emitPhilox(OpBuilder &b, Location loc, Value lo,
                                          Value hi, uint64_t seed) {
  // Random123's Philox4x32 with 10 rounds. The key is a compile-time
  // constant, so its per-round bumps fold into constants.
  const uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  const uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
  uint32_t k0 = static_cast<uint32_t>(seed);
  uint32_t k1 = static_cast<uint32_t>(seed >> 32);
  Value zero = ci32(b, loc, 0);
  std::array<Value, 4> c = {lo, hi, zero, zero};
  Value cm0 = ci32(b, loc, m0), cm1 = ci32(b, loc, m1);
  for (int round = 0; round < 10; ++round) {
    auto p0 = arith::MulUIExtendedOp::create(b, loc, cm0, c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, cm1, c[2]);
    Value x1 = arith::XOrIOp::create(b, loc, p1.getHigh(), c[1]);
    x1 = arith::XOrIOp::create(b, loc, x1, ci32(b, loc, k0));
    Value x3 = arith::XOrIOp::create(b, loc, p0.getHigh(), c[3]);
    x3 = arith::XOrIOp::create(b, loc, x3, ci32(b, loc, k1));
    c = {x1, p1.getLow(), x3, p0.getLow()};
    k0 += w0;
    k1 += w1;
  }
  return c;
}

uint32_t mlir::kb::dropoutThreshold(float p) {
  // Keep iff the top 24 bits, as a fraction of 2^24, are >= p.
  double t = std::ceil(static_cast<double>(p) * 16777216.0);
  return static_cast<uint32_t>(std::min(t, 16777216.0));
}

ElementwiseChain ElementwiseChain::of(Operation *op) {
  ElementwiseChain chain;
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    Block &body = fusion.getBody().front();
    chain.inputs.assign(body.getArguments().begin(), body.getArguments().end());
    for (Operation &inner : body.without_terminator())
      chain.ops.push_back(&inner);
    chain.result = body.getTerminator()->getOperand(0);
    return chain;
  }
  chain.inputs.assign(op->getOperands().begin(), op->getOperands().end());
  chain.ops.push_back(op);
  chain.result = op->getResult(0);
  return chain;
}

ElementwiseChain ElementwiseChain::after(FusionOp fusion, Operation *anchor) {
  ElementwiseChain chain;
  Block &body = fusion.getBody().front();
  chain.inputs.push_back(anchor->getResult(0));
  chain.inputs.append(body.getArguments().begin(), body.getArguments().end());
  bool seen = false;
  for (Operation &inner : body.without_terminator()) {
    if (&inner == anchor) {
      seen = true;
      continue;
    }
    if (seen)
      chain.ops.push_back(&inner);
  }
  chain.result = body.getTerminator()->getOperand(0);
  return chain;
}

bool mlir::kb::chainHasDropout(const ElementwiseChain &chain) {
  return llvm::any_of(chain.ops,
                      [](Operation *op) { return isa<DropoutOp>(op); });
}

static Value selectWord(OpBuilder &b, Location loc,
                        const std::array<Value, 4> &w, Value lane) {
  // lane is an i32 in [0, 4).
  Value r = w[3];
  for (int i = 2; i >= 0; --i) {
    Value is = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                     ci32(b, loc, i));
    r = arith::SelectOp::create(b, loc, is, w[i], r);
  }
  return r;
}

/// x^c: an integer c with |c| <= kMaxIntPow by square and multiply (1 / x^|c|
/// for a negative one), any other by powf (libdevice's __nv_powf, never the
/// fast form: its error grows with |c log2 x|).
static constexpr int kMaxIntPow = 32;
static Value emitPow(OpBuilder &b, Location loc, Value x, float c) {
  if (c == std::trunc(c) && std::fabs(c) <= kMaxIntPow) {
    int n = static_cast<int>(std::fabs(c));
    Value acc, sq = x;
    for (; n; n >>= 1) {
      if (n & 1)
        acc = acc ? arith::MulFOp::create(b, loc, acc, sq).getResult() : sq;
      if (n > 1)
        sq = arith::MulFOp::create(b, loc, sq, sq);
    }
    if (!acc)
      return cf32(b, loc, 1.0f);
    if (c < 0)
      return arith::DivFOp::create(b, loc, cf32(b, loc, 1.0f), acc);
    return acc;
  }
  return math::PowFOp::create(b, loc, x, cf32(b, loc, c));
}

Value mlir::kb::emitChainScalar(OpBuilder &b, Location loc,
                                const ElementwiseChain &chain,
                                DenseMap<Value, Value> values, Value flatIndex,
                                const std::array<Value, 4> *philox, int lane,
                                bool fast) {
  auto get = [&](Value v) { return values.lookup(v); };
  auto fm = arith::FastMathFlagsAttr::get(b.getContext(),
                                          fast ? arith::FastMathFlags::afn |
                                                     arith::FastMathFlags::arcp
                                               : arith::FastMathFlags::none);
  auto exp = [&](Value x) {
    return math::ExpOp::create(b, loc, x, fm).getResult();
  };
  auto div = [&](Value x, Value y) {
    return arith::DivFOp::create(b, loc, x, y, fm).getResult();
  };
  for (Operation *op : chain.ops) {
    Value r =
        llvm::TypeSwitch<Operation *, Value>(op)
            .Case([&](AddOp o) {
              return arith::AddFOp::create(b, loc, get(o.getLhs()),
                                           get(o.getRhs()));
            })
            .Case([&](SubOp o) {
              return arith::SubFOp::create(b, loc, get(o.getLhs()),
                                           get(o.getRhs()));
            })
            .Case([&](MulOp o) {
              return arith::MulFOp::create(b, loc, get(o.getLhs()),
                                           get(o.getRhs()));
            })
            .Case([&](DivOp o) {
              return arith::DivFOp::create(b, loc, get(o.getLhs()),
                                           get(o.getRhs()));
            })
            // The partials were added as they were loaded (Elementwise.cpp).
            .Case([&](SplitSumOp o) { return get(o.getInput()); })
            // Values stay f32 in registers: a convert to a 16-bit type
            // rounds there (to nearest even) and widens back; one to f32
            // changes nothing (the 16-bit value widened exactly).
            .Case([&](ConvertOp o) -> Value {
              Value x = get(o.getInput());
              Type to = o.getResult().getType().getElementType();
              if (to.isF32())
                return x;
              Value r = arith::TruncFOp::create(b, loc, to, x);
              return arith::ExtFOp::create(b, loc, b.getF32Type(), r)
                  .getResult();
            })
            .Case([&](BiasAddOp o) {
              return arith::AddFOp::create(b, loc, get(o.getInput()),
                                           get(o.getBias()));
            })
            .Case([&](ScaleOp o) {
              return arith::MulFOp::create(
                  b, loc, get(o.getInput()),
                  cf32(b, loc, o.getFactor().convertToFloat()));
            })
            .Case([&](ReluOp o) {
              return arith::MaximumFOp::create(b, loc, get(o.getInput()),
                                               cf32(b, loc, 0.0f));
            })
            .Case([&](TanhOp o) {
              return math::TanhOp::create(b, loc, get(o.getInput()));
            })
            .Case([&](ExpOp o) { return exp(get(o.getInput())); })
            .Case([&](SigmoidOp o) {
              Value neg = arith::NegFOp::create(b, loc, get(o.getInput()));
              Value den =
                  arith::AddFOp::create(b, loc, cf32(b, loc, 1.0f), exp(neg));
              return div(cf32(b, loc, 1.0f), den);
            })
            .Case([&](SiluOp o) {
              // x / (1 + exp(-x)): sigmoid's form, the numerator x.
              Value x = get(o.getInput());
              Value neg = arith::NegFOp::create(b, loc, x);
              Value den =
                  arith::AddFOp::create(b, loc, cf32(b, loc, 1.0f), exp(neg));
              return div(x, den);
            })
            .Case([&](AddScalarOp o) {
              return arith::AddFOp::create(
                  b, loc, get(o.getInput()),
                  cf32(b, loc, o.getValue().convertToFloat()));
            })
            .Case([&](LeakyReluOp o) {
              Value x = get(o.getInput());
              Value neg = arith::MulFOp::create(
                  b, loc, x, cf32(b, loc, o.getSlope().convertToFloat()));
              Value pos = arith::CmpFOp::create(
                  b, loc, arith::CmpFPredicate::OGE, x, cf32(b, loc, 0.0f));
              return arith::SelectOp::create(b, loc, pos, x, neg);
            })
            .Case([&](PowOp o) {
              return emitPow(b, loc, get(o.getInput()),
                             o.getExponent().convertToFloat());
            })
            .Case([&](GeluOp o) -> Value {
              Value x = get(o.getInput());
              if (o.getApprox() == GeluApprox::erf) {
                Value s = arith::MulFOp::create(
                    b, loc, x, cf32(b, loc, 0.70710678118654752f));
                Value e = math::ErfOp::create(b, loc, s);
                Value one =
                    arith::AddFOp::create(b, loc, cf32(b, loc, 1.0f), e);
                Value h = arith::MulFOp::create(b, loc, x, cf32(b, loc, 0.5f));
                return arith::MulFOp::create(b, loc, h, one);
              }
              // 0.5 x (1 + tanh(z)) == x / (1 + exp(-2 z)),
              // z = sqrt(2 / pi) (x + 0.044715 x^3): tanh written through exp.
              Value x2 = arith::MulFOp::create(b, loc, x, x);
              Value inner =
                  arith::MulFOp::create(b, loc, x2, cf32(b, loc, 0.044715f));
              inner = arith::AddFOp::create(b, loc, inner, cf32(b, loc, 1.0f));
              inner = arith::MulFOp::create(b, loc, x, inner);
              // -2 sqrt(2/pi) = -1.5957691216057308
              Value t = arith::MulFOp::create(
                  b, loc, inner, cf32(b, loc, -1.5957691216057308f));
              Value den =
                  arith::AddFOp::create(b, loc, cf32(b, loc, 1.0f), exp(t));
              return div(x, den);
            })
            .Case([&](DropoutOp o) -> Value {
              Value x = get(o.getInput());
              float p = o.getP().convertToFloat();
              uint64_t seed = static_cast<uint64_t>(o.getSeed());
              Value word;
              if (philox) {
                word = (*philox)[lane];
              } else {
                Value i64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                                         flatIndex);
                Value group = arith::ShRUIOp::create(
                    b, loc, i64,
                    arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(2)));
                Value lo =
                    arith::TruncIOp::create(b, loc, b.getI32Type(), group);
                Value hiWide = arith::ShRUIOp::create(
                    b, loc, group,
                    arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32)));
                Value hi =
                    arith::TruncIOp::create(b, loc, b.getI32Type(), hiWide);
                Value l = arith::TruncIOp::create(b, loc, b.getI32Type(), i64);
                l = arith::AndIOp::create(b, loc, l, ci32(b, loc, 3));
                word = selectWord(b, loc, emitPhilox(b, loc, lo, hi, seed), l);
              }
              Value top = arith::ShRUIOp::create(b, loc, word, ci32(b, loc, 8));
              Value keep =
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, top,
                                        ci32(b, loc, dropoutThreshold(p)));
              Value scaled = arith::MulFOp::create(
                  b, loc, x, cf32(b, loc, 1.0f / (1.0f - p)));
              return arith::SelectOp::create(b, loc, keep, scaled,
                                             cf32(b, loc, 0.0f));
            })
            .Default([&](Operation *other) {
              return emitActivationScalar(b, loc, other, get, fast);
            });
    assert(r && "unhandled elementwise op");
    values[op->getResult(0)] = r;
  }
  return values.lookup(chain.result);
}

bool mlir::kb::chainHasRotary(const ElementwiseChain &chain) {
  return llvm::any_of(chain.ops,
                      [](Operation *op) { return isa<RotaryOp>(op); });
}

std::array<Value, 2> mlir::kb::emitChainPair(
    OpBuilder &b, Location loc, const ElementwiseChain &chain,
    std::array<DenseMap<Value, Value>, 2> values,
    std::array<Value, 2> flatIndex,
    llvm::function_ref<Value(RotaryOp, Value)> table, bool fast) {
  for (Operation *op : chain.ops) {
    if (auto rot = dyn_cast<RotaryOp>(op)) {
      // out0 = x0 cos - x1 sin, out1 = x0 sin + x1 cos, in f32.
      Value x0 = values[0].lookup(rot.getInput());
      Value x1 = values[1].lookup(rot.getInput());
      Value c = table(rot, rot.getCos()), sn = table(rot, rot.getSin());
      Value y0 = arith::SubFOp::create(b, loc,
                                       arith::MulFOp::create(b, loc, x0, c),
                                       arith::MulFOp::create(b, loc, x1, sn));
      Value y1 = arith::AddFOp::create(b, loc,
                                       arith::MulFOp::create(b, loc, x0, sn),
                                       arith::MulFOp::create(b, loc, x1, c));
      values[0][rot.getResult()] = y0;
      values[1][rot.getResult()] = y1;
      continue;
    }
    ElementwiseChain one;
    one.ops.push_back(op);
    one.result = op->getResult(0);
    for (int l = 0; l < 2; ++l)
      values[l][op->getResult(0)] = emitChainScalar(
          b, loc, one, values[l], flatIndex[l], nullptr, 0, fast);
  }
  return {values[0].lookup(chain.result), values[1].lookup(chain.result)};
}

std::pair<Value, Value> mlir::kb::rotaryTableIndex(OpBuilder &b, Location loc,
                                                   RotaryOp op, Value row,
                                                   Value col) {
  Value pos = arith::RemUIOp::create(b, loc, row, cidx(b, loc, op.getPeriod()));
  Value c = arith::RemUIOp::create(b, loc, col, cidx(b, loc, op.getHeadDim()));
  c = arith::DivUIOp::create(b, loc, c, cidx(b, loc, 2));
  return {pos, c};
}

Value mlir::kb::emitBlockReduce(OpBuilder &b, Location loc, Value v,
                                gpu::AllReduceOperation op, int64_t threads,
                                Value scratch) {
  Value r = gpu::SubgroupReduceOp::create(b, loc, v, op, /*uniform=*/true);
  if (threads <= 32)
    return r;
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value c32 = cidx(b, loc, 32);
  Value lane = arith::RemUIOp::create(b, loc, tid, c32);
  Value warp = arith::DivUIOp::create(b, loc, tid, c32);
  Value isLeader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                         cidx(b, loc, 0));
  auto ifLeader = scf::IfOp::create(b, loc, isLeader, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifLeader.thenBlock());
    memref::StoreOp::create(b, loc, r, scratch, ValueRange{warp});
  }
  gpu::BarrierOp::create(b, loc);
  float identity = op == gpu::AllReduceOperation::ADD
                       ? 0.0f
                       : -std::numeric_limits<float>::infinity();
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane,
                                        cidx(b, loc, threads / 32));
  auto ifIn = scf::IfOp::create(b, loc, TypeRange{b.getF32Type()}, inRange,
                                /*withElse=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifIn.thenBlock());
    Value x = memref::LoadOp::create(b, loc, scratch, ValueRange{lane});
    scf::YieldOp::create(b, loc, x);
    b.setInsertionPointToStart(ifIn.elseBlock());
    scf::YieldOp::create(b, loc, cf32(b, loc, identity));
  }
  return gpu::SubgroupReduceOp::create(b, loc, ifIn.getResult(0), op,
                                       /*uniform=*/true);
}

Value mlir::kb::flatten(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 1)
    return memref;
  SmallVector<ReassociationIndices> reassoc(1);
  for (int64_t i = 0; i < type.getRank(); ++i)
    reassoc[0].push_back(i);
  return memref::CollapseShapeOp::create(b, loc, memref, reassoc);
}

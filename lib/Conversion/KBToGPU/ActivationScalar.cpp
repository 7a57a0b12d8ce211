//===- ActivationScalar.cpp - scalar form of kb's activation ops ----------===//
//
// The f32 scalar code of the activations and simple math ops of issue #45
// (softplus, elu, selu, hardtanh, hardsigmoid, hardswish, mish, softsign,
// abs, neg, sqrt, rsqrt, log, clamp, minimum, maximum), called by
// emitChainScalar for the ops it does not handle itself. Each follows
// PyTorch's definition; the functions used are the precise ones whose error
// docs/tolerances.md bounds: log and log1p are libdevice's __nv_logf and
// __nv_log1pf (1 ulp), expm1 __nv_expm1f (1 ulp), sqrt sqrt.rn.f32
// (correctly rounded), rsqrt div.rn(1, sqrt.rn); exp and division follow the
// chain's `fast` flag as the older ops do. Min and max propagate NaN
// (arith.minimumf / maximumf: PTX min.NaN / max.NaN).
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kb;

Value mlir::kb::emitActivationScalar(OpBuilder &b, Location loc, Operation *op,
                                     llvm::function_ref<Value(Value)> get,
                                     bool fast) {
  auto fm = arith::FastMathFlagsAttr::get(b.getContext(),
                                          fast ? arith::FastMathFlags::afn |
                                                     arith::FastMathFlags::arcp
                                               : arith::FastMathFlags::none);
  auto c = [&](double v) { return cf32(b, loc, static_cast<float>(v)); };
  auto exp = [&](Value x) {
    return math::ExpOp::create(b, loc, x, fm).getResult();
  };
  auto div = [&](Value x, Value y) {
    return arith::DivFOp::create(b, loc, x, y, fm).getResult();
  };
  auto mul = [&](Value x, Value y) {
    return arith::MulFOp::create(b, loc, x, y).getResult();
  };
  auto add = [&](Value x, Value y) {
    return arith::AddFOp::create(b, loc, x, y).getResult();
  };
  auto maxf = [&](Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y).getResult();
  };
  auto minf = [&](Value x, Value y) {
    return arith::MinimumFOp::create(b, loc, x, y).getResult();
  };
  auto gt0 = [&](Value x) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, c(0.0))
        .getResult();
  };
  auto select = [&](Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y).getResult();
  };
  // log(1 + exp(x)) with libdevice's log1pf (no fast form exists).
  auto softplus1 = [&](Value x) {
    return math::Log1pOp::create(b, loc, exp(x)).getResult();
  };
  // x where x > 0, k * expm1(x) elsewhere (NaN: expm1(NaN) = NaN).
  auto eluCore = [&](Value x, Value pos, double k) {
    Value neg = math::ExpM1Op::create(b, loc, x);
    if (k != 1.0)
      neg = mul(neg, c(k));
    return select(gt0(x), pos, neg);
  };
  // min(max(x + 3, 0), 6): relu6(x + 3).
  auto relu6p3 = [&](Value x) {
    return minf(maxf(add(x, c(3.0)), c(0.0)), c(6.0));
  };
  // sqrt.rn.f32 as inline PTX. math.sqrt becomes libdevice's __nv_sqrtf,
  // which is sqrt.approx.f32 (the module does not set __CUDA_PREC_SQRT), and
  // 1 / that folds into rsqrt.approx.f32; llvm.intr.sqrt is illegal in
  // convert-gpu-to-nvvm.
  auto sqrt = [&](Value x) {
    return LLVM::InlineAsmOp::create(
               b, loc, TypeRange{b.getF32Type()}, ValueRange{x},
               "sqrt.rn.f32 $0, $1;", "=f,f", /*has_side_effects=*/false,
               /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
               LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  };
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](SoftplusOp o) -> Value {
        // PyTorch: x where beta x > threshold, else log1p(exp(beta x)) / beta.
        Value x = get(o.getInput());
        float beta = o.getBeta().convertToFloat();
        Value z = beta == 1.0f ? x : mul(x, c(beta));
        Value y = softplus1(z);
        if (beta != 1.0f)
          y = div(y, c(beta));
        Value big = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, z,
                                          c(o.getThreshold().convertToFloat()));
        return select(big, x, y);
      })
      .Case([&](EluOp o) {
        Value x = get(o.getInput());
        return eluCore(x, x, o.getAlpha().convertToFloat());
      })
      .Case([&](SeluOp o) {
        // PyTorch's constants; the negative side's factor alpha * scale is
        // one rounded f32 constant, as in PyTorch's kernel.
        constexpr double alpha = 1.6732632423543772848170429916717;
        constexpr double scale = 1.0507009873554804934193349852946;
        Value x = get(o.getInput());
        return eluCore(x, mul(x, c(scale)), alpha * scale);
      })
      .Case([&](HardtanhOp o) {
        Value x = get(o.getInput());
        return minf(maxf(x, c(o.getMinVal().convertToFloat())),
                    c(o.getMaxVal().convertToFloat()));
      })
      .Case([&](ClampOp o) {
        Value x = get(o.getInput());
        if (auto lo = o.getMinAttr())
          x = maxf(x, c(lo.getValueAsDouble()));
        if (auto hi = o.getMaxAttr())
          x = minf(x, c(hi.getValueAsDouble()));
        return x;
      })
      .Case([&](HardsigmoidOp o) {
        return div(relu6p3(get(o.getInput())), c(6.0));
      })
      .Case([&](HardswishOp o) {
        // PyTorch's order: (x * relu6(x + 3)) / 6.
        Value x = get(o.getInput());
        return div(mul(x, relu6p3(x)), c(6.0));
      })
      .Case([&](MishOp o) {
        // PyTorch: x * tanh(log1p(exp(x))), no threshold (exp overflows to
        // inf for x > 88, and then tanh(inf) = 1 gives x).
        Value x = get(o.getInput());
        return mul(x, math::TanhOp::create(b, loc, softplus1(x)).getResult());
      })
      .Case([&](SoftsignOp o) {
        Value x = get(o.getInput());
        return div(x, add(math::AbsFOp::create(b, loc, x), c(1.0)));
      })
      .Case([&](AbsOp o) {
        return math::AbsFOp::create(b, loc, get(o.getInput())).getResult();
      })
      .Case([&](NegOp o) {
        return arith::NegFOp::create(b, loc, get(o.getInput())).getResult();
      })
      .Case([&](SqrtOp o) { return sqrt(get(o.getInput())); })
      .Case([&](RsqrtOp o) {
        // 1 / sqrt.rn with div.rn: two correctly rounded steps (math.rsqrt
        // would be rsqrt.approx.f32).
        return arith::DivFOp::create(b, loc, c(1.0), sqrt(get(o.getInput())))
            .getResult();
      })
      .Case([&](LogOp o) {
        return math::LogOp::create(b, loc, get(o.getInput())).getResult();
      })
      .Case([&](MinimumOp o) { return minf(get(o.getLhs()), get(o.getRhs())); })
      .Case([&](MaximumOp o) { return maxf(get(o.getLhs()), get(o.getRhs())); })
      .Default([&](Operation *) { return Value(); });
}

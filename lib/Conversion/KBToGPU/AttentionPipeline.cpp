//===- AttentionPipeline.cpp - K/V ring and mma.sync fragments ------------===//
//
// The data path of the fused attention kernel: the cp.async copies of the
// K and V tiles into a ring of shared-memory stages (rows padded by 16
// bytes, rows past Sk zero-filled), the Q fragments loaded once into
// registers, and the two products on mma.sync:
//
// - S = Q K^T: A = Q (row-major, fragments from global memory), B = K^T,
//   whose fragment element (k = d, n = key) is K[key][d] in the K tile.
// - O += P V: A = P, straight from the S accumulators. For 16-bit the S
//   fragment pair (keys 16s + 2t, + 1 of rows g, g + 8) is exactly the A
//   fragment of m16n8k16. For tf32 (m16n8k8, whose A fragment holds columns
//   t and t + 4) the k index of the step is permuted instead: A column t is
//   key 8s + 2t and column t + 4 key 8s + 2t + 1, so the thread's own S
//   values are its A fragment, and the B fragment (V[key][n]) is read at
//   the same permuted keys. A sum over k does not depend on its order.
//   mma.sync's B fragments are loaded by each thread from shared memory, so
//   V's row-major tile needs no transpose (wgmma's tf32 B operand would).
//
// Bank conflicts: with rows of D + 4 f32 (D + 8 16-bit) a warp's K
// fragment loads (row g, word t) and V fragment loads (rows 2t, column g)
// fall in 32 different banks.
//
//===----------------------------------------------------------------------===//

#include "AttentionGen.h"
#include "MmaSync.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::kb;

namespace {

/// Rounds an f32 to tf32 by adding half a tf32 ulp to its bits (the tensor
/// core ignores the low 13 bits), as the mma.sync matmul does
/// (MatmulMmaSync.cpp, roundToTf32Bits).
Value tf32Bits(OpBuilder &b, Location loc, Value x) {
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  return arith::AddIOp::create(b, loc, bits, ci32(b, loc, 0x1000));
}


} // namespace

int64_t AttentionEmitter::stageBytes() const {
  return bkv * (ldk + ldv) * shape.elemBytes();
}

std::pair<Value, Value> AttentionEmitter::stageViews(Value smem,
                                                     Value stage) {
  auto wg =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value base = mul(stage, stageBytes());
  Value kv = memref::ViewOp::create(
      b, loc, MemRefType::get({bkv, ldk}, shape.elem, nullptr, wg), smem, base,
      ValueRange{});
  Value vv = memref::ViewOp::create(
      b, loc, MemRefType::get({bkv, ldv}, shape.elem, nullptr, wg), smem,
      add(base, bkv * ldk * shape.elemBytes()), ValueRange{});
  return {kv, vv};
}

void AttentionEmitter::issueTileCopies(Value kvBlock, Value kt, Value vt) {
  auto token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  int64_t perChunk = 16 / shape.elemBytes();
  Value kv0 = mul(kvBlock, bkv);
  bool guard = shape.sk % bkv != 0;
  for (auto [src, dst, width] :
       {std::tuple(k, kt, shape.d), std::tuple(v, vt, shape.dv)}) {
    int64_t perRow = width / perChunk;
    for (int64_t i = 0; i < bkv * perRow / threads; ++i) {
      Value c = add(tid, i * threads);
      Value r = div(c, perRow), col = mul(rem(c, perRow), perChunk);
      Value key = add(kv0, r);
      Value n;
      if (guard) {
        // Past Sk: no bytes copied (the chunk is zero-filled) from row 0.
        Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         key, cidx(b, loc, shape.sk));
        n = arith::SelectOp::create(b, loc, in, cidx(b, loc, perChunk),
                                    cidx(b, loc, 0));
        key = arith::SelectOp::create(b, loc, in, key, cidx(b, loc, 0));
      }
      nvgpu::DeviceAsyncCopyOp::create(b, loc, token, dst, ValueRange{r, col},
                                       src, index(key, col),
                                       b.getIndexAttr(perChunk), n,
                                       b.getUnitAttr());
    }
  }
}

SmallVector<Frag> AttentionEmitter::loadQueryFragments() {
  // Rows past Sq read the last row (their results are never stored).
  Value rows[2] = {minIdx(queryRow(0), shape.sq - 1),
                   minIdx(queryRow(1), shape.sq - 1)};
  SmallVector<Frag> out;
  if (shape.isF32()) {
    // m16n8k8: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4).
    for (int64_t ks = 0; ks < shape.d / 8; ++ks) {
      Frag f;
      for (int64_t j : {0, 1, 2, 3}) {
        Value col = add(t, ks * 8 + (j >= 2 ? 4 : 0));
        Value x = memref::LoadOp::create(b, loc, q, index(rows[j % 2], col));
        f.push_back(tf32Bits(b, loc, x));
      }
      out.push_back(f);
    }
    return out;
  }
  // m16n8k16: pairs (g, 2t..), (g + 8, 2t..), (g, 2t + 8..), (g + 8, 2t + 8..).
  auto pairType = VectorType::get({2}, shape.elem);
  for (int64_t ks = 0; ks < shape.d / 16; ++ks) {
    Frag f;
    for (int64_t j : {0, 1, 2, 3}) {
      Value col = add(mul(t, 2), ks * 16 + (j >= 2 ? 8 : 0));
      Value pair = vector::LoadOp::create(b, loc, pairType, q,
                                          index(rows[j % 2], col));
      f.push_back(mmaPairOperand(b, loc, pair));
    }
    out.push_back(f);
  }
  return out;
}

SmallVector<Value> AttentionEmitter::mma(ArrayRef<Value> a, ArrayRef<Value> bf,
                                         ArrayRef<Value> acc) {
  NVVM::MMATypes type = shape.isF32()        ? NVVM::MMATypes::tf32
                        : shape.elem.isF16() ? NVVM::MMATypes::f16
                                             : NVVM::MMATypes::bf16;
  return mmaSyncF32(b, loc, type, a, bf, acc);
}

SmallVector<Value> AttentionEmitter::scores(ArrayRef<Frag> qf, Value kt) {
  int64_t frags = bkv / 8;
  SmallVector<Value> s(frags * 4, cf32(b, loc, 0.0f));
  auto pairType = VectorType::get({2}, shape.elem);
  for (auto [ks, a] : llvm::enumerate(qf)) {
    for (int64_t j = 0; j < frags; ++j) {
      Value key = add(g, j * 8);
      Frag bfrag;
      if (shape.isF32()) {
        // b0 (k = t, n = g), b1 (k = t + 4, n = g).
        for (int64_t h : {0, 4}) {
          Value x = memref::LoadOp::create(
              b, loc, kt, ValueRange{key, add(t, ks * 8 + h)});
          bfrag.push_back(tf32Bits(b, loc, x));
        }
      } else {
        // b0b1 (k = 2t, 2t + 1), b2b3 (k = 2t + 8, 2t + 9); n = g.
        for (int64_t h : {0, 8}) {
          Value pair = vector::LoadOp::create(
              b, loc, pairType, kt,
              ValueRange{key, add(mul(t, 2), ks * 16 + h)});
          bfrag.push_back(mmaPairOperand(b, loc, pair));
        }
      }
      ArrayRef<Value> cur(s.data() + j * 4, 4);
      SmallVector<Value> r = mma(a, bfrag, cur);
      std::copy(r.begin(), r.end(), s.begin() + j * 4);
    }
  }
  return s;
}

SmallVector<Value> AttentionEmitter::accumulate(ArrayRef<Value> p, Value vt,
                                                ArrayRef<Value> accIn) {
  SmallVector<Value> acc(accIn);
  int64_t nFrags = shape.dv / 8;
  auto ld = [&](Value row, Value col) {
    return memref::LoadOp::create(b, loc, vt, ValueRange{row, col})
        .getResult();
  };
  if (shape.isF32()) {
    // Step s over keys 8s .. 8s + 7, its k index permuted (file comment):
    // A = (p[g][2t], p[g+8][2t], p[g][2t+1], p[g+8][2t+1]) of fragment s,
    // B = (V[8s + 2t][n], V[8s + 2t + 1][n]).
    for (int64_t s = 0; s < bkv / 8; ++s) {
      Frag a = {tf32Bits(b, loc, p[s * 4 + 0]), tf32Bits(b, loc, p[s * 4 + 2]),
                tf32Bits(b, loc, p[s * 4 + 1]),
                tf32Bits(b, loc, p[s * 4 + 3])};
      Value k0 = add(mul(t, 2), s * 8);
      for (int64_t nf = 0; nf < nFrags; ++nf) {
        Value n = add(g, nf * 8);
        Frag bfrag = {tf32Bits(b, loc, ld(k0, n)),
                      tf32Bits(b, loc, ld(add(k0, 1), n))};
        ArrayRef<Value> cur(acc.data() + nf * 4, 4);
        SmallVector<Value> r = mma(a, bfrag, cur);
        std::copy(r.begin(), r.end(), acc.begin() + nf * 4);
      }
    }
    return acc;
  }
  // 16-bit, step s over keys 16s .. 16s + 15: A = the pairs of S fragments
  // 2s and 2s + 1 rounded to the operand type; B = (V[16s + 2t][n],
  // V[16s + 2t + 1][n]), (V[16s + 2t + 8][n], V[16s + 2t + 9][n]).
  auto pack = [&](Value x0, Value x1) {
    Value h0 = arith::TruncFOp::create(b, loc, shape.elem, x0);
    Value h1 = arith::TruncFOp::create(b, loc, shape.elem, x1);
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, shape.elem), ValueRange{h0, h1});
    return mmaPairOperand(b, loc, pair);
  };
  auto packLoaded = [&](Value x0, Value x1) {
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, shape.elem), ValueRange{x0, x1});
    return mmaPairOperand(b, loc, pair);
  };
  for (int64_t s = 0; s < bkv / 16; ++s) {
    const Value *f0 = p.data() + (2 * s) * 4, *f1 = p.data() + (2 * s + 1) * 4;
    Frag a = {pack(f0[0], f0[1]), pack(f0[2], f0[3]), pack(f1[0], f1[1]),
              pack(f1[2], f1[3])};
    Value k0 = add(mul(t, 2), s * 16);
    for (int64_t nf = 0; nf < nFrags; ++nf) {
      Value n = add(g, nf * 8);
      Frag bfrag = {packLoaded(ld(k0, n), ld(add(k0, 1), n)),
                    packLoaded(ld(add(k0, 8), n), ld(add(k0, 9), n))};
      ArrayRef<Value> cur(acc.data() + nf * 4, 4);
      SmallVector<Value> r = mma(a, bfrag, cur);
      std::copy(r.begin(), r.end(), acc.begin() + nf * 4);
    }
  }
  return acc;
}

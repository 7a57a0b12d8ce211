//===- KernelModelTest.cpp - kb-run's matmul dimensions and byte model ----===//
//
// matmulDims and modelledBytes (lib/Runtime/KernelModel.cpp) on small
// hand-written manifests: a batched matmul of f32, of bf16 to bf16 and of
// bf16 to f32 (issue #44: 16-bit elements counted at 4 bytes doubled the
// modelled bytes), and the argument-sum model without a block config.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/KernelModel.h"

#include <gtest/gtest.h>

using namespace kb::runtime;
using nlohmann::json;

namespace {

/// C (2 x 64 x 96, out) = A (2 x 64 x 32) B (2 x 32 x 96), operands of `in`,
/// in 32 x 64 tiles: A is read ceil(96/64) = 2 times, B ceil(64/32) = 2.
Manifest batched(const char *in, const char *out, const char *config) {
  json j = json::parse(R"({
    "format": "kb-bundle", "version": 1, "target": "sm_90a",
    "buffers": [
      {"name": "a", "shape": [2, 64, 32], "dtype": "f32", "role": "input"},
      {"name": "b", "shape": [2, 32, 96], "dtype": "f32", "role": "input"},
      {"name": "c", "shape": [2, 64, 96], "dtype": "f32", "role": "output"}],
    "program": [{"op": "kb.matmul", "inputs": ["a", "b"], "output": "c",
                 "shape": [2, 64, 96], "kernel": "k0"}],
    "kernels": [{"name": "k0", "ptx": "k0.ptx", "grid": [2, 2, 2],
                 "block": [128, 1, 1], "args": ["a", "b", "c"],
                 "ops": [0]}]})");
  j["buffers"][0]["dtype"] = in;
  j["buffers"][1]["dtype"] = in;
  j["buffers"][2]["dtype"] = out;
  if (std::string(in) != "f32")
    j["program"][0]["attrs"]["precision"] = "native";
  j["kernels"][0]["config"] = config;
  return Manifest::parse(j.dump(), "/b");
}

const char *kTiles = "#kb.config<block = [32, 64, 32], threads = 128>";

/// Elements per batch: A read twice, B read twice, C written once.
constexpr double kA = 2.0 * 64 * 32, kB = 2.0 * 32 * 96, kC = 64.0 * 96;

} // namespace

TEST(KernelModel, MatmulDimsOfABatchedBf16Matmul) {
  Manifest m = batched("bf16", "f32", kTiles);
  MatmulDims d = matmulDims(m, m.kernels[0]);
  EXPECT_EQ(d.batch, 2);
  EXPECT_EQ(d.m, 64);
  EXPECT_EQ(d.n, 96);
  EXPECT_EQ(d.k, 32);
  EXPECT_FALSE(d.transB);
  EXPECT_EQ(d.in, DType::BF16);
  EXPECT_EQ(d.out, DType::F32);
  EXPECT_EQ(d.precision, "native");
  EXPECT_DOUBLE_EQ(d.flops(), 2.0 * 2 * 64 * 96 * 32);
}

TEST(KernelModel, F32MatmulCountsFourBytesAnElement) {
  Manifest m = batched("f32", "f32", kTiles);
  EXPECT_DOUBLE_EQ(modelledBytes(m, m.kernels[0]), 2 * 4 * (kA + kB + kC));
}

TEST(KernelModel, Bf16MatmulCountsTwoBytesAnElement) {
  Manifest m = batched("bf16", "bf16", kTiles);
  EXPECT_DOUBLE_EQ(modelledBytes(m, m.kernels[0]), 2 * 2 * (kA + kB + kC));
}

TEST(KernelModel, Bf16OperandsToF32CountEachInItsOwnSize) {
  Manifest m = batched("bf16", "f32", kTiles);
  EXPECT_DOUBLE_EQ(modelledBytes(m, m.kernels[0]),
                   2 * (2 * (kA + kB) + 4 * kC));
  Manifest h = batched("f16", "f16", kTiles);
  EXPECT_DOUBLE_EQ(modelledBytes(h, h.kernels[0]), 2 * 2 * (kA + kB + kC));
}

TEST(KernelModel, WithoutABlockSizeEachArgumentCountsOnce) {
  // No block = [BM, BN]: the arguments' own bytes, 2 a bf16 element.
  Manifest m = batched("bf16", "bf16", "#kb.config<threads = 128>");
  EXPECT_DOUBLE_EQ(modelledBytes(m, m.kernels[0]),
                   2.0 * 2 * (64 * 32 + 32 * 96 + 64 * 96));
}

//===- Manifest16Test.cpp - 16-bit buffers in the manifest ----------------===//
//
// The manifest's f16 and bf16 acceptances and refusals (issue #44): data
// buffers of 2-byte elements, tensor maps of them, a matmul's operand and
// result types and its precision native, one element type per elementwise
// op and softmax, and kb.convert. Each refusal's message is checked. The
// manifests are written by hand here (the compiler writes them too).
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Manifest.h"

#include <gtest/gtest.h>

using namespace kb::runtime;
using nlohmann::json;

namespace {

/// C (4 x 8, out type) = A (4 x 16) B^T (8 x 16), operands of `in`.
json matmul16(const char *in, const char *out) {
  json j = json::parse(R"({
    "format": "kb-bundle", "version": 1, "target": "sm_90a",
    "buffers": [
      {"name": "a", "shape": [4, 16], "dtype": "bf16", "role": "input"},
      {"name": "b", "shape": [8, 16], "dtype": "bf16", "role": "input"},
      {"name": "c", "shape": [4, 8], "dtype": "bf16", "role": "output"}],
    "program": [{"op": "kb.matmul", "inputs": ["a", "b"], "output": "c",
                 "shape": [4, 8], "kernel": "k0",
                 "attrs": {"precision": "native", "transpose_b": true}}],
    "kernels": [{"name": "k0", "ptx": "k0.ptx", "grid": [1, 1, 1],
                 "block": [128, 1, 1], "args": ["a", "b", "c"], "ops": [0],
                 "config": "#kb.config<mma = \"wgmma_bf16\">"}]})");
  j["buffers"][0]["dtype"] = in;
  j["buffers"][1]["dtype"] = in;
  j["buffers"][2]["dtype"] = out;
  return j;
}

/// y (4 x 8, out type) = OP(x (4 x 8, in type)) in one kernel.
json unary(const char *op, const char *in, const char *out) {
  json j = json::parse(R"({
    "format": "kb-bundle", "version": 1, "target": "sm_90a",
    "buffers": [
      {"name": "x", "shape": [4, 8], "dtype": "f32", "role": "input"},
      {"name": "y", "shape": [4, 8], "dtype": "f32", "role": "output"}],
    "program": [{"op": "kb.relu", "inputs": ["x"], "output": "y",
                 "shape": [4, 8], "kernel": "k0"}],
    "kernels": [{"name": "k0", "ptx": "k0.ptx", "grid": [1, 1, 1],
                 "block": [128, 1, 1], "args": ["x", "y"], "ops": [0]}]})");
  j["program"][0]["op"] = op;
  j["buffers"][0]["dtype"] = in;
  j["buffers"][1]["dtype"] = out;
  return j;
}

std::string errorOf(const json &j) {
  try {
    Manifest::parse(j.dump(), "/tmp");
  } catch (const ManifestError &e) {
    return e.what();
  }
  return "";
}

#define EXPECT_REFUSED(j, text)                                                \
  do {                                                                         \
    std::string e_ = errorOf(j);                                               \
    EXPECT_NE(e_.find(text), std::string::npos) << "got: " << e_;              \
  } while (0)

} // namespace

TEST(Manifest16, SixteenBitBuffersHaveTwoByteElements) {
  Manifest m = Manifest::parse(matmul16("bf16", "bf16").dump(), "/b");
  EXPECT_EQ(m.buffer("a").dtype, DType::BF16);
  EXPECT_EQ(m.buffer("a").bytes(), 4 * 16 * 2);
  EXPECT_EQ(m.program[0].dtype, DType::BF16);
  EXPECT_TRUE(m.program[0].toBuffer);
  Manifest h = Manifest::parse(unary("kb.gelu", "f16", "f16").dump(), "/b");
  EXPECT_EQ(h.buffer("y").dtype, DType::F16);
  EXPECT_EQ(h.buffer("y").bytes(), 64);
  Manifest f = Manifest::parse(unary("kb.gelu", "f32", "f32").dump(), "/b");
  EXPECT_EQ(f.buffer("y").bytes(), 128);
}

TEST(Manifest16, MatmulTypesAndPrecision) {
  // Accepted: bf16 or f16 operands, an f32 result or the operands' type;
  // precision native, or none (native is implied).
  for (const char *in : {"bf16", "f16"})
    for (const char *out : {"f32", in})
      EXPECT_EQ(errorOf(matmul16(in, out)), "") << in << " -> " << out;
  json none = matmul16("bf16", "f32");
  none["program"][0]["attrs"].erase("precision");
  EXPECT_EQ(errorOf(none), "");

  EXPECT_REFUSED(matmul16("bf16", "f16"),
                 "manifest: program[0] (kb.matmul) of bf16 operands gives f16; "
                 "its result is f32 or bf16");
  json mixed = matmul16("bf16", "f32");
  mixed["buffers"][1]["dtype"] = "f16";
  EXPECT_REFUSED(mixed, "program[0] (kb.matmul) multiplies bf16 by f16: a "
                        "matmul's operands share one element type");
  json tf32 = matmul16("bf16", "f32");
  tf32["program"][0]["attrs"]["precision"] = "tf32";
  EXPECT_REFUSED(tf32, "program[0] (kb.matmul).attrs.precision is 'tf32': a "
                       "matmul of bf16 operands has precision native");
  json f32 = matmul16("f32", "f32");
  EXPECT_REFUSED(f32, "program[0] (kb.matmul).attrs.precision is 'native', "
                      "which is for f16 or bf16 operands; f32 operands need "
                      "ieee, tf32 or tf32x3");
  f32["program"][0]["attrs"]["precision"] = "tf32";
  EXPECT_EQ(errorOf(f32), "");
  json f32out16 = f32;
  f32out16["buffers"][2]["dtype"] = "bf16";
  EXPECT_REFUSED(f32out16, "program[0] (kb.matmul) of f32 operands gives "
                           "bf16; its result is f32 or f32");
}

TEST(Manifest16, ElementwiseAndSoftmaxKeepOneType) {
  EXPECT_EQ(errorOf(unary("kb.softmax", "bf16", "bf16")), "");
  EXPECT_REFUSED(unary("kb.softmax", "bf16", "f32"),
                 "manifest: program[0] (kb.softmax) reads 'x' of bf16 and "
                 "writes f32 'y': its operands and result share one element "
                 "type (kb.convert converts)");
  // A binary op: both operands of the result's type.
  json add = unary("kb.add", "f16", "f16");
  add["buffers"].push_back(
      {{"name", "z"}, {"shape", {4, 8}}, {"dtype", "bf16"}, {"role", "input"}});
  add["program"][0]["inputs"] = {"x", "z"};
  add["kernels"][0]["args"] = {"x", "z", "y"};
  EXPECT_REFUSED(add, "program[0] (kb.add) reads 'z' of bf16 and writes f16 "
                      "'y'");
  add["buffers"][2]["dtype"] = "f16";
  EXPECT_EQ(errorOf(add), "");
  // A fused chain: the value between the ops keeps the input's type.
  json chain = unary("kb.relu", "bf16", "f32");
  chain["program"][0]["output"] = "k0.v0";
  chain["program"].push_back({{"op", "kb.gelu"},
                              {"inputs", {"k0.v0"}},
                              {"output", "y"},
                              {"shape", {4, 8}},
                              {"kernel", "k0"}});
  chain["kernels"][0]["ops"] = {0, 1};
  EXPECT_REFUSED(chain, "program[1] (kb.gelu) reads 'k0.v0' of bf16 and "
                        "writes f32 'y'");
}

TEST(Manifest16, Convert) {
  const char *types[] = {"f32", "f16", "bf16"};
  for (const char *in : types)
    for (const char *out : types) {
      Manifest m =
          Manifest::parse(unary("kb.convert", in, out).dump(), "/b");
      EXPECT_EQ(dtypeName(m.program[0].dtype), std::string(out));
    }
  json shape = unary("kb.convert", "f32", "bf16");
  shape["buffers"][1]["shape"] = {8, 4};
  shape["program"][0]["shape"] = {8, 4};
  EXPECT_REFUSED(shape, "program[0] (kb.convert).inputs[0] 'x' has shape "
                        "[4, 8], the op's shape is [8, 4]");
  // A convert into registers takes the type of the op that reads it.
  json fused = unary("kb.convert", "f32", "bf16");
  fused["program"][0]["output"] = "k0.v0";
  fused["program"].push_back({{"op", "kb.gelu"},
                              {"inputs", {"k0.v0"}},
                              {"output", "y"},
                              {"shape", {4, 8}},
                              {"kernel", "k0"}});
  fused["kernels"][0]["ops"] = {0, 1};
  Manifest m = Manifest::parse(fused.dump(), "/b");
  EXPECT_EQ(m.program[0].dtype, DType::BF16);
  EXPECT_FALSE(m.program[0].toBuffer);
}

TEST(Manifest16, MatmulThenConvertInOneKernel) {
  // f32 = bf16 x bf16 in registers, converted to f16 at the store; and a
  // convert whose value nothing of known type reads is refused.
  json j = matmul16("bf16", "f16");
  j["program"][0]["output"] = "k0.v0";
  j["program"].push_back({{"op", "kb.convert"},
                          {"inputs", {"k0.v0"}},
                          {"output", "c"},
                          {"shape", {4, 8}},
                          {"kernel", "k0"}});
  j["kernels"][0]["ops"] = {0, 1};
  Manifest m = Manifest::parse(j.dump(), "/b");
  EXPECT_EQ(m.program[0].dtype, DType::F32);
  EXPECT_EQ(m.program[1].dtype, DType::F16);
  json twice = unary("kb.convert", "f32", "bf16");
  twice["program"][0]["output"] = "k0.v0";
  twice["program"].push_back({{"op", "kb.convert"},
                              {"inputs", {"k0.v0"}},
                              {"output", "y"},
                              {"shape", {4, 8}},
                              {"kernel", "k0"}});
  twice["kernels"][0]["ops"] = {0, 1};
  EXPECT_REFUSED(twice, "manifest: program[0] (kb.convert): the element type "
                        "of 'k0.v0' is not known");
}

TEST(Manifest16, DataTypesAndWorkspaces) {
  EXPECT_REFUSED(unary("kb.relu", "f64", "f64"),
                 "buffers[0] (x) has dtype \"f64\"; a data buffer is f32, f16 "
                 "or bf16");
  EXPECT_REFUSED(unary("kb.relu", "i32", "i32"),
                 "buffers[0] (x) has dtype \"i32\"; a data buffer is f32, f16 "
                 "or bf16");
}

TEST(Manifest16, TensorMapsOfTwoByteElements) {
  // A: 4 x 64 bf16 (128-byte rows): boxes of 64 elements fit the 128-byte
  // swizzle; 65 do not; f32's limit stays 32.
  json j = matmul16("bf16", "f32");
  j["buffers"][0]["shape"] = {4, 64};
  j["buffers"][1]["shape"] = {8, 64};
  j["buffers"].push_back({{"name", "tma"},
                          {"shape", {32}},
                          {"dtype", "i32"},
                          {"role", "tensor_map"},
                          {"tensor_map",
                           {{"of", "a"},
                            {"dims", {4, 64}},
                            {"box", {4, 64}},
                            {"swizzle", "128B"}}}});
  j["kernels"][0]["args"] = {"a", "b", "tma", "c"};
  EXPECT_EQ(errorOf(j), "");
  // Each swizzle takes box rows of at most its bytes (64, 32 or 16 bf16
  // columns; 32 and 16 are a 16-bit row-major B's narrower boxes), and
  // refuses twice that.
  for (auto [swizzle, cols] : {std::pair<const char *, int>{"128B", 64},
                               {"64B", 32},
                               {"32B", 16}}) {
    SCOPED_TRACE(swizzle);
    json m = j;
    m["buffers"][3]["tensor_map"]["swizzle"] = swizzle;
    m["buffers"][3]["tensor_map"]["box"] = {4, cols};
    EXPECT_EQ(errorOf(m), "");
    m["buffers"][3]["tensor_map"]["box"] = {4, 2 * cols};
    EXPECT_REFUSED(m, "tensor map 'tma': a " + std::to_string(2 * cols) +
                          "-byte swizzled box row holds at most " +
                          std::to_string(cols) + " elements of bf16, got " +
                          std::to_string(2 * cols));
  }
  json f32 = j;
  f32["buffers"][0]["dtype"] = f32["buffers"][1]["dtype"] = "f32";
  f32["program"][0]["attrs"]["precision"] = "tf32";
  EXPECT_REFUSED(f32, "holds at most 32 elements of f32, got 64");
  // Rows of 12 bf16 are 24 bytes: not a multiple of 16 (12 f32 would be).
  json odd = matmul16("f16", "f32");
  odd["buffers"][0]["shape"] = {4, 12};
  odd["buffers"][1]["shape"] = {8, 12};
  odd["buffers"].push_back({{"name", "tma"},
                            {"shape", {32}},
                            {"dtype", "i32"},
                            {"role", "tensor_map"},
                            {"tensor_map",
                             {{"of", "a"},
                              {"dims", {4, 12}},
                              {"box", {4, 12}},
                              {"swizzle", "128B"}}}});
  odd["kernels"][0]["args"] = {"a", "b", "tma", "c"};
  EXPECT_REFUSED(odd, "tensor map 'tma': rows of 'a' (f16) are 24 bytes, not "
                      "a multiple of 16 as a tensor map needs");
  odd["buffers"][0]["dtype"] = odd["buffers"][1]["dtype"] = "f32";
  odd["program"][0]["attrs"]["precision"] = "ieee";
  EXPECT_EQ(errorOf(odd), "");
}

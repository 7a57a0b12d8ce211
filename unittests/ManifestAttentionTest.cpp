//===- ManifestAttentionTest.cpp - kb.attention in a manifest's program ---===//
//
// kb.attention as kb-lower-to-gpu records it (inputs q, k, v, then the mask;
// attrs scale, causal, has_mask, lse, precision, lse_output): a valid
// program parses, and each wrong shape, count, type or attribute is refused
// by name.
//
//===----------------------------------------------------------------------===//

#include "ManifestTestHelpers.h"
#include "kb/Runtime/Manifest.h"

#include <gtest/gtest.h>

#include <functional>

using namespace kb::runtime;
using nlohmann::json;
using kb::runtime::test::expectEachRefused;
using kb::runtime::test::manifestErrorOf;

namespace {

/// A masked bf16 attention of 2 x 3 heads, 10 queries, 12 keys, D 8, Dv 4,
/// writing the log-sum-exp.
json valid() {
  return json::parse(R"J({
    "format": "kb-bundle", "version": 1, "target": "sm_90a", "function": "f",
    "compiler": "kb 0.1.0 (test)",
    "buffers": [
      {"name": "q", "shape": [2, 3, 10, 8], "dtype": "bf16", "role": "input"},
      {"name": "k", "shape": [2, 3, 12, 8], "dtype": "bf16", "role": "input"},
      {"name": "v", "shape": [2, 3, 12, 4], "dtype": "bf16", "role": "input"},
      {"name": "m", "shape": [10, 12], "dtype": "bf16", "role": "input"},
      {"name": "o", "shape": [2, 3, 10, 4], "dtype": "bf16", "role": "output"},
      {"name": "l", "shape": [2, 3, 10], "dtype": "f32", "role": "output"}],
    "program": [
      {"op": "kb.attention", "inputs": ["q", "k", "v", "m"], "output": "o",
       "shape": [2, 3, 10, 4], "kernel": "k0",
       "attrs": {"scale": 0.35, "causal": true, "has_mask": true, "lse": true,
                 "precision": "native", "lse_output": "l"}}],
    "kernels": [
      {"name": "k0", "ptx": "k0.ptx", "grid": [1, 6, 1], "block": [128, 1, 1],
       "args": ["q", "k", "v", "m", "o", "l"], "ops": [0]}]})J");
}


} // namespace

TEST(ManifestAttention, TheValidProgramParses) {
  EXPECT_EQ(manifestErrorOf(valid()), "");
  Manifest m = Manifest::parse(valid().dump(), "/tmp");
  ASSERT_EQ(m.program.size(), 1u);
  EXPECT_EQ(m.program[0].dtype, DType::BF16);
  EXPECT_EQ(m.program[0].attrString("lse_output", ""), "l");
  // A full [B, H, Sq, Sk] mask, and none.
  json full = valid();
  full["buffers"][3]["shape"] = {2, 3, 10, 12};
  EXPECT_EQ(manifestErrorOf(full), "");
  json none = valid();
  none["program"][0]["inputs"].erase(3);
  none["program"][0]["attrs"]["has_mask"] = false;
  EXPECT_EQ(manifestErrorOf(none), "");
}

TEST(ManifestAttention, EveryMutationIsRefusedByName) {
  expectEachRefused(valid(), {
      {"mask without has_mask",
       [](json &j) { j["program"][0]["attrs"]["has_mask"] = false; },
       "program[0] (kb.attention) needs 3 inputs, has 4"},
      {"no scale", [](json &j) { j["program"][0]["attrs"].erase("scale"); },
       "program[0] (kb.attention) needs attrs.scale"},
      {"k of another D",
       [](json &j) { j["buffers"][1]["shape"] = {2, 3, 12, 16}; },
       "program[0] (kb.attention) operands [2, 3, 10, 8], [2, 3, 12, 16], "
       "[2, 3, 12, 4] are not q [..., Sq, D]"},
      {"v of another Sk",
       [](json &j) { j["buffers"][2]["shape"] = {2, 3, 11, 4}; },
       "are not q [..., Sq, D], k [..., Sk, D], v [..., Sk, Dv]"},
      {"mask of half the heads",
       [](json &j) { j["buffers"][3]["shape"] = {3, 10, 12}; },
       "program[0] (kb.attention) mask 'm' has shape [3, 10, 12], not [10, "
       "12] or [2, 3, 10, 12]"},
      {"lse of bf16", [](json &j) { j["buffers"][5]["dtype"] = "bf16"; },
       "lse_output 'l' must be an f32 buffer of shape [2, 3, 10]"},
      {"lse not a buffer",
       [](json &j) { j["program"][0]["attrs"]["lse_output"] = "zz"; },
       "lse_output 'zz' must be an f32 buffer"},
      {"causal a string",
       [](json &j) { j["program"][0]["attrs"]["causal"] = "yes"; },
       "program[0] (kb.attention).attrs.causal must be"},
      {"mixed types", [](json &j) { j["buffers"][1]["dtype"] = "f16"; },
       "program[0] (kb.attention) reads 'k' of f16"},
  });
}

namespace {

/// valid() in the bthd layout: q [B, Sq, H, D], k and v [B, Sk, H, .],
/// the output [B, Sq, H, Dv]; the mask and lse keep [B, H, ...].
json validBthd() {
  json j = valid();
  j["buffers"][0]["shape"] = {2, 10, 3, 8};
  j["buffers"][1]["shape"] = {2, 12, 3, 8};
  j["buffers"][2]["shape"] = {2, 12, 3, 4};
  j["buffers"][4]["shape"] = {2, 10, 3, 4};
  j["program"][0]["shape"] = {2, 10, 3, 4};
  j["program"][0]["attrs"]["bthd"] = true;
  return j;
}

} // namespace

TEST(ManifestAttention, BthdParsesAndItsShapesAreChecked) {
  EXPECT_EQ(manifestErrorOf(validBthd()), "");
  expectEachRefused(validBthd(), {
      {"bthd a string", [](json &j) { j["program"][0]["attrs"]["bthd"] = "yes"; },
       "program[0] (kb.attention).attrs.bthd must be"},
      {"rank 3",
       [](json &j) {
         j["buffers"][0]["shape"] = {2, 10, 8};
         j["buffers"][1]["shape"] = {2, 12, 8};
         j["buffers"][2]["shape"] = {2, 12, 4};
       },
       "bthd operands [2, 10, 8], [2, 12, 8], [2, 12, 4] are not of rank 4"},
      {"k of other heads",
       [](json &j) { j["buffers"][1]["shape"] = {2, 12, 4, 8}; },
       "are not q [B, Sq, H, D], k [B, Sk, H, D], v [B, Sk, H, Dv]"},
      {"the output in [B, H, Sq, Dv]",
       [](json &j) {
         j["buffers"][4]["shape"] = {2, 3, 10, 4};
         j["program"][0]["shape"] = {2, 3, 10, 4};
       },
       "program[0] (kb.attention) must write a buffer of shape [2, 10, 3, 4]"},
      {"q in [B, H, Sq, D]",
       [](json &j) { j["buffers"][0]["shape"] = {2, 3, 10, 8}; },
       "are not q [B, Sq, H, D]"},
  });
}
